# Every JSON document R sends to the Go core is decoded strictly (golib/cabi/strict.go): a key Go
# does not know is an internal error naming it, never a key silently dropped. One misspelt key per
# export that reads a document, through the package's own way into Go (go_call()).

expect_refused_key <- function(object, key) {
  cnd <- expect_error(object, class = "tabscreen_error_internal")
  expect_s3_class(cnd, "tabscreen_error")
  expect_match(conditionMessage(cnd), sprintf('unknown field "%s"', key), fixed = TRUE)
}

test_that("a misspelt key in any document R sends to Go is an internal error, and nothing is sent", {
  fake <- local_fake_provider()
  local_test_only()
  doc <- function(x) as.character(to_json(x))
  records <- df_to_ipc(data.frame(title = "A title", abstract = "An abstract", studyid = "1"))
  options <- list(provider = "a", api_url = fake$url, prompts = I("Include?"),
    models = list(list(name = "gpt-4o-mini", reps = 1, rpm = 600)), timeout_secnds = 30)
  expect_refused_key(go_call(C_run_start, records, doc(options), "sk-test"), "timeout_secnds")
  # a key of an object inside the document too
  options$timeout_secnds <- NULL
  options$models[[1]]$rmp <- 600
  expect_refused_key(go_call(C_run_start, records, doc(options), "sk-test"), "rmp")
  # decoded before the handle is looked up: no run is needed
  expect_refused_key(go_call(C_run_reply, 1e9, '[{"id":1,"valeu":0.5,"error":""}]'), "valeu")
  expect_refused_key(go_call(C_aggregate, raw(), '{"incl_cutof_upper":0.5}'), "incl_cutof_upper")
  expect_refused_key(go_call(C_plan, '{"cutoffs":{"incl_cutof_upper":0.5}}', NULL), "incl_cutof_upper")
  holding <- doc(list(holding = list(store = tempfile(), options = list(api_url = fake$url, promts = I("p")))))
  expect_refused_key(go_call(C_plan, holding, records), "promts")
  probe <- doc(list(provider = "a", api_url = fake$url, modle = "gpt-4o-mini"))
  expect_refused_key(go_call(C_probe, probe, "sk-test"), "modle")
  expect_refused_key(go_call(C_store, doc(list(op = "runs", paht = tempfile()))), "paht")
  expect_refused_key(go_call(C_batch, doc(list(op = "cancel", path = tempfile(), runid = "r")), "sk-test"), "runid")
  expect_refused_key(go_call(C_review, doc(list(op = "audit", path = tempfile(), runid = "r"))), "runid")
  expect_refused_key(go_call(C_refs, doc(list(op = "columns", name = I("TI"))), raw()), "name")
  # The serving entry points of the child processes refuse before they serve; were the key
  # dropped, each would fail at once on its own (no port file directory, no run) instead.
  nowhere <- file.path(tempfile(), "port")
  expect_refused_key(go_call(C_fake_serve, doc(list(prot = 0, port_file = nowhere))), "prot")
  expect_refused_key(go_call(C_review_serve, doc(list(store = tempfile(), run_id = "", pgae = "p"))), "pgae")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("the response headers of llm_is_transient() are one document, with nothing after it", {
  # Their keys are header names, which no key of Go's can misspell: what follows the document is
  # refused instead.
  cnd <- expect_error(go_call(C_is_transient, 503L, '{"retry-after":"1"} {}', raw()), class = "tabscreen_error_internal")
  expect_match(conditionMessage(cnd), "data after the document", fixed = TRUE)
  expect_false(go_call(C_is_transient, 400L, '{"retry-after":"1"}', raw())$meta$transient)
})

test_that("the core's test-only entry points refuse while their switch is off", {
  withr::local_envvar(TABSCREEN_TESTING = NA)
  cnd <- expect_error(go_call(C_ipc_roundtrip_go, df_to_ipc(data.frame(x = 1))), class = "tabscreen_error_internal")
  expect_match(conditionMessage(cnd), "TsRoundTrip is a test-only entry point", fixed = TRUE)
  cnd <- expect_error(go_call(C_aggregate, raw(), "{}"), class = "tabscreen_error_internal")
  expect_match(conditionMessage(cnd), "TsAggregate is a test-only entry point", fixed = TRUE)
})
