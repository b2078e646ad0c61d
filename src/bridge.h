#ifndef TABSCREEN_BRIDGE_H
#define TABSCREEN_BRIDGE_H
#include <Rinternals.h>
SEXP C_run_start(SEXP records, SEXP options, SEXP api_key);
SEXP C_run_poll(SEXP handle, SEXP wait);
SEXP C_run_reply(SEXP handle, SEXP replies);
SEXP C_run_cancel(SEXP handle);
SEXP C_run_result(SEXP handle, SEXP merge);
SEXP C_aggregate(SEXP answers, SEXP options);
SEXP C_is_transient(SEXP status, SEXP headers, SEXP body);
SEXP C_store(SEXP request);
SEXP C_fake_serve(SEXP options);
SEXP C_review_serve(SEXP options);
SEXP C_review(SEXP request);
SEXP C_refs(SEXP request, SEXP table);
SEXP C_ipc_roundtrip_go(SEXP raw);
SEXP C_providers(void);
SEXP C_plan(SEXP request, SEXP records);
SEXP C_probe(SEXP request, SEXP api_key);
SEXP C_batch(SEXP request, SEXP api_key);
#endif
