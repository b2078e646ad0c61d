/* bcryptprimitives.dll with the one function Wine 8 lacks: ProcessPrng, which the Go runtime
 * (>= 1.24) loads at start-up for its random numbers. Only for running the Windows build under
 * Wine in tools/windows/test-windows.sh; real Windows (10 and later) has its own. It fills the
 * buffer from RtlGenRandom (advapi32's SystemFunction036), which takes at most ULONG_MAX bytes a
 * call. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
