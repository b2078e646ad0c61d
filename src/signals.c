/* Signals and Go's threads.
 *
 * Go requires every signal handler that can run on one of its threads to use the alternate signal
 * stack (SA_ONSTACK): goroutine stacks are small blocks of the Go heap, and a handler's frame
 * written below one corrupts that heap ("fatal error: found pointer to free object"). In a c-shared
 * library Go installs no handler for asynchronous signals, so handlers installed by R and by other
 * packages (processx's SIGCHLD) can run on Go's threads, or on R's thread while it runs Go code on
 * a goroutine stack.
 *
 * - ts_protect_signal_handlers() adds SA_ONSTACK to every installed handler that lacks it; on a
 *   thread without an alternate stack the flag changes nothing. It runs at load time and at every
 *   call into Go, because R re-installs some handlers (SIGINT after each interrupt) without it.
 * - R's profiler cannot be protected that way: its SIGPROF handler re-installs itself, without the
 *   flag, on every tick, and puts a large buffer on the stack before it forwards a signal that
 *   landed on another thread. So the profiling timer is paused while Go code runs (for the whole of
 *   a screening, and around every other call into Go) and restored afterwards: Rprof() takes no
 *   samples during that time.
 *
 * On Windows all three are no-ops. There are no asynchronous POSIX signals to land on Go's
 * threads: Ctrl-C and Ctrl-Break come through a console control handler that Windows runs on a
 * thread of its own, and the C runtime's signal() only emulates SIGINT, SIGFPE and friends without
 * sigaction, SA_ONSTACK or an alternate stack. R's profiler there does not use SIGPROF or
 * setitimer either: a separate thread suspends R's thread to sample it, which touches no Go
 * stack. So nothing needs the flag and no timer needs pausing. */
#include "signals.h"

#ifdef _WIN32

void ts_protect_signal_handlers(void) {}
void ts_enter_go(void) {}
void ts_leave_go(void) {}

#else

#define _XOPEN_SOURCE 700
#include <stddef.h>
#include <signal.h>
#include <sys/time.h>
#include "libtabscreen.h"

/* NSIG is not POSIX; 65 covers Linux's real-time signals. */
#ifndef NSIG
#define NSIG 65
#endif

void ts_protect_signal_handlers(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) continue;
    if (!(sa.sa_flags & SA_SIGINFO) && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)) continue;
    if (sa.sa_flags & SA_ONSTACK) continue;
    sa.sa_flags |= SA_ONSTACK;
    sigaction(sig, &sa, NULL);
  }
}

static int pause_depth = 0;
static struct itimerval paused_timer;

static int timer_set(const struct itimerval *t) {
  return t->it_value.tv_sec || t->it_value.tv_usec || t->it_interval.tv_sec || t->it_interval.tv_usec;
}

void ts_enter_go(void) {
  /* The timer first: a tick that lands before it stops re-installs R's handler without
   * SA_ONSTACK, and the flag must be back before Go code runs on a goroutine stack. */
  if (pause_depth++ == 0) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, &paused_timer);
  }
  ts_protect_signal_handlers();
}

void ts_leave_go(void) {
  if (pause_depth == 0) return;
  if (--pause_depth == 0 && timer_set(&paused_timer)) {
    /* Go's collector may still be sweeping on its own threads after the call returned: let it
     * finish before a tick can land there (only while R profiles, so it costs nothing else). */
    TsQuiesce();
    setitimer(ITIMER_PROF, &paused_timer, NULL);
  }
}

#endif /* _WIN32 */
