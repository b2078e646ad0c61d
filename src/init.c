/* Routine registration: every .Call entry point of the package, and nothing found by name. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "bridge.h"
#include "ipc.h"
#include "signals.h"
#include "libtabscreen.h"

static const R_CallMethodDef call_methods[] = {
  {"C_run_start", (DL_FUNC)&C_run_start, 3},
  {"C_run_poll", (DL_FUNC)&C_run_poll, 2},
  {"C_run_reply", (DL_FUNC)&C_run_reply, 2},
  {"C_run_cancel", (DL_FUNC)&C_run_cancel, 1},
  {"C_run_result", (DL_FUNC)&C_run_result, 2},
  {"C_aggregate", (DL_FUNC)&C_aggregate, 2},
  {"C_is_transient", (DL_FUNC)&C_is_transient, 3},
  {"C_store", (DL_FUNC)&C_store, 1},
  {"C_fake_serve", (DL_FUNC)&C_fake_serve, 1},
  {"C_review_serve", (DL_FUNC)&C_review_serve, 1},
  {"C_review", (DL_FUNC)&C_review, 1},
  {"C_refs", (DL_FUNC)&C_refs, 2},
  {"C_providers", (DL_FUNC)&C_providers, 0},
  {"C_plan", (DL_FUNC)&C_plan, 2},
  {"C_probe", (DL_FUNC)&C_probe, 2},
  {"C_batch", (DL_FUNC)&C_batch, 2},
  /* Arrow IPC codec (ipc_r.c) */
  {"C_ipc_write", (DL_FUNC)&C_ipc_write, 3},
  {"C_ipc_read", (DL_FUNC)&C_ipc_read, 1},
  {"C_ipc_roundtrip_go", (DL_FUNC)&C_ipc_roundtrip_go, 1},
  {NULL, NULL, 0}
};

void R_init_tabscreen(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  ts_lazy_init(dll);
  /* Loading the Go core starts Go's runtime on a thread of its own and returns at once: Go code
   * (the runtime's start, package initialisation) would go on running on goroutine stacks while R
   * goes on, and a tick of a profiler R starts meanwhile could land on that thread and run R's
   * SIGPROF handler there, corrupting Go's heap (test-run.R's Rprof() test provokes it under
   * load). Every call into Go waits for that start to finish: make one now. */
  ts_enter_go();
  TsFree(NULL);
  ts_leave_go();
}
