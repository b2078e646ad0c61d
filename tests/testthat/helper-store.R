# Records and a screening call for the answer store's tests (test-store*.R).

store_records <- function(n) {
  data.frame(studyid = seq_len(n), title = paste("Store test title", seq_len(n)),
             abstract = paste("Abstract of record", seq_len(n), strrep("text ", 20)))
}

screen_store_test <- function(url, n, ...) {
  tabscreen_a.tools(store_records(n), prompt = "Is this a trial of family therapy?", studyid = studyid,
                    title = title, abstract = abstract, api_url = url, progress = FALSE, messages = FALSE, ...)
}
