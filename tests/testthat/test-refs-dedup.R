# dedup_refs(): precision and recall on real searches whose duplicates people labelled
# (../shared/data/dedup, README.md there names the sources), on real exports of one search from
# several databases and tools (../shared/data/refs-corpus), and what a deduplication keeps and
# carries on to write_refs(). Near-duplicates planted among real records: golib/refs/plant_test.go.

# Pairwise precision and recall of predicted groups against true ones (a pair of records counts
# when both are in one group).
pair_scores <- function(pred, truth) {
  pairs <- function(x) sum(choose(as.vector(x), 2))
  tp <- pairs(table(pred, truth))
  c(precision = tp / pairs(table(pred)), recall = tp / pairs(table(truth)), tp = tp)
}

# The group of each record of refs (its id in the groups report when it is in one, else its own).
predicted_groups <- function(unique_refs, ids) {
  g <- dedup_groups(unique_refs)
  out <- paste0("own-", seq_along(ids))
  out[match(g$id, ids)] <- paste0("group-", g$group)
  out
}

labelled_sets <- list(
  # The raw files: with the pages and volumes that real exports have.
  # An EndNote export in Windows-1252.
  asysd_diabetes = list(file = "raw/asysd_diabetes/labelled_test_set.csv", key = "record_id", precision = 0.99, recall = 0.98,
    encoding = "windows-1252"),
  asysd_diabetes_curated = list(file = "raw/asysd_diabetes/labelled_test_set.csv", key = "record_id", precision = 0.99, recall = 0.98,
    encoding = "windows-1252"),
  sra_cytology = list(file = "raw/sra_cytology/records_pre_merged.csv", key = "ID", precision = 0.99, recall = 0.97),
  # Its column `number` holds EndNote's record numbers, not issues (records_sra_respiratory.csv leaves
  # it out): read as issues they would tell every record apart.
  sra_respiratory = list(file = "raw/sra_respiratory/records_pre_merged.csv", key = "ID", precision = 0.99, recall = 0.96,
    drop = "issue"),
  bibdedupe_special_cases = list(file = "raw/bibdedupe_special_cases/records_pre_merged.csv", key = "ID", precision = 1, recall = 1)
)

test_that("dedup_refs() finds the duplicates people labelled in real searches", {
  for (name in names(labelled_sets)) {
    set <- labelled_sets[[name]]
    refs <- read_refs(shared_data("dedup", set$file), source_col = NULL, encoding = set$encoding %||% "UTF-8")
    truth <- utils::read.csv(shared_data("dedup", paste0("truth_", name, ".csv")), colClasses = "character")
    ids <- as.character(refs[[set$key]])
    refs <- refs[setdiff(names(refs), set$drop)]
    if ("booktitle" %in% names(refs)) {
      # Conference papers name their proceedings in booktitle.
      refs$journal <- ifelse(is.na(refs$journal), refs$booktitle, refs$journal)
    }
    unique_refs <- dedup_refs(refs, id = set$key, messages = FALSE)
    score <- pair_scores(predicted_groups(unique_refs, ids), truth$group_id[match(ids, truth$record_key)])
    message(sprintf("dedup %s: %d records, %d kept; pairwise precision %.4f, recall %.4f",
      name, nrow(refs), nrow(unique_refs), score[["precision"]], score[["recall"]]))
    expect_gte(score[["precision"]], set$precision, label = paste(name, "precision"))
    expect_gte(score[["recall"]], set$recall, label = paste(name, "recall"))
  }
})

# Record level, as the published tools report it: of each true group one record should be kept;
# each further record kept is a false negative, a true group none of whose records is kept a false
# positive.
record_scores <- function(kept, truth) {
  n_kept <- tapply(kept, truth, sum)
  fn <- sum(pmax(n_kept - 1, 0))
  fp <- sum(n_kept == 0)
  tn <- sum(n_kept >= 1)
  tp <- length(truth) - fn - fp - tn
  c(sensitivity = tp / (tp + fn), specificity = tn / (tn + fp))
}

# A labelled set with every field its source has: its records (ids as text), ids and true groups.
read_labelled <- function(name) {
  encoding <- if (name == "asysd_diabetes") "windows-1252" else "UTF-8"
  refs <- read_refs(shared_data("dedup", paste0("records_", name, ".csv")), source_col = NULL, encoding = encoding)
  truth <- utils::read.csv(shared_data("dedup", paste0("truth_", name, ".csv")), colClasses = "character")
  ids <- as.character(refs$record_key)
  refs$record_key <- ids
  list(refs = refs, ids = ids, group = truth$group_id[match(ids, truth$record_key)])
}

test_that("on the labelled sets with every field their sources have, record-level sensitivity >= 0.98 and specificity >= 0.999", {
  for (name in c("asysd_diabetes", "sra_cytology", "sra_respiratory")) {
    set <- read_labelled(name)
    refs <- set$refs
    ids <- set$ids
    unique_refs <- dedup_refs(refs, id = "record_key", messages = FALSE)
    score <- record_scores(ids %in% unique_refs$record_key, set$group)
    message(sprintf("dedup records_%s: sensitivity %.4f, specificity %.4f", name, score[["sensitivity"]], score[["specificity"]]))
    expect_gte(score[["sensitivity"]], 0.98, label = paste(name, "sensitivity"))
    expect_gte(score[["specificity"]], 0.999, label = paste(name, "specificity"))
  }
})

test_that("one search exported through seventeen tools, and from PubMed, Scopus and Web of Science, is found again by titles", {
  dir <- shared_data("refs-corpus")
  # The DOIs are the truth here, so the matching is left the titles and citations.
  doi_truth <- function(doi) tolower(sub("^(https?://(dx[.])?doi[.]org/|doi:)", "", sub("\\s.*", "", trimws(doi))))
  tools <- c("_baseline_covidence.csv", "_baseline_covidence_endnote.ris", "_baseline_covidence_mendeley.ris",
    "_baseline_covidence_refworks.ris", "_baseline_covidence_zotero.ris", "_baseline_embase.csv",
    "_baseline_embase.ris", "_baseline_endnote.ris", "_baseline_eppireviewer.ris", "_baseline_excel.csv",
    "_baseline_mendeley.ris", "_baseline_rayyan.csv", "_baseline_rayyan.ris", "_baseline_refworks.ris",
    "_baseline_zotero.csv", "_baseline_zotero.ris", "_baseline_abstrackr.csv")
  searches <- list(
    embase_through_tools = file.path(dir, "citation-file-formatting", tools),
    restoration_three_databases = file.path(dir, "revtools", c("restoration_pubmed.nbib", "restoration_scopus.ris", "restoration_WoS.ciw"))
  )
  for (name in names(searches)) {
    refs <- read_refs(searches[[name]])
    refs <- refs[!is.na(refs$doi), ]
    ids <- paste0(refs$source_file, ":", stats::ave(seq_len(nrow(refs)), refs$source_file, FUN = seq_along))
    unique_refs <- dedup_refs(refs, match = c("title", "citation"), messages = FALSE)
    truth <- doi_truth(refs$doi)
    score <- pair_scores(predicted_groups(unique_refs, ids), truth)
    message(sprintf("dedup %s: %d records with a DOI, %d DOIs, %d kept by title; pairwise precision %.4f, recall %.4f",
      name, nrow(refs), length(unique(truth)), nrow(unique_refs), score[["precision"]], score[["recall"]]))
    expect_equal(score[["precision"]], 1, label = paste(name, "precision"))
    expect_gte(score[["recall"]], 0.99, label = paste(name, "recall"))
    # With the DOIs too, every DOI is one record.
    expect_equal(nrow(dedup_refs(refs, messages = FALSE)), length(unique(truth)))
  }
})

test_that("the most complete record is kept, with the ids of the others; the groups are reported", {
  refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))[1:6, ]
  copy <- refs[c(2, 5), ]
  copy$title <- toupper(copy$title)
  copy$abstract <- NA
  copy$journal <- NA
  copy$source_file <- "pubmed.ris"
  both <- rbind(copy, refs)
  expect_message(unique_refs <- dedup_refs(both), "8 records: 2 duplicates in 2 groups, 6 kept", class = "tabscreen_message")
  expect_equal(nrow(unique_refs), 6)
  # The originals (with their abstracts) are kept, in the order of the table.
  expect_identical(unique_refs$title, refs$title)
  expect_equal(unique_refs$merged_ids, c(NA, "pubmed.ris:1", NA, NA, "pubmed.ris:2", NA))
  groups <- dedup_groups(unique_refs)
  expect_equal(groups$group, c(1L, 1L, 2L, 2L))
  expect_equal(groups$id, c("fft_include.ris:2", "pubmed.ris:1", "fft_include.ris:5", "pubmed.ris:2"))
  expect_equal(groups$kept, c(TRUE, FALSE, TRUE, FALSE))
  expect_equal(groups$match, rep("title", 4))
  expect_true(all(c("title", "authors", "year", "source_file") %in% names(groups)))
  # A second deduplication keeps the ids merged before.
  again <- both[1, ]
  again$source_file <- "embase.ris"
  again$merged_ids <- NA_character_
  twice <- dedup_refs(rbind(unique_refs, again), messages = FALSE)
  expect_equal(twice$merged_ids[2], "pubmed.ris:1; embase.ris:1")
  # Without a source column the ids are row numbers; of records as complete, the first is kept.
  plain <- both[c("title", "authors", "year")]
  expect_equal(dedup_refs(plain, messages = FALSE)$merged_ids, c("4", "7", NA, NA, NA, NA))
  # `id` names a column of ids.
  both$key <- paste0("k", seq_len(nrow(both)))
  expect_equal(dedup_refs(both, id = "key", messages = FALSE)$merged_ids[1:2], c(NA, "k1"))
})

test_that("DOI and PMID rules; records that only share a DOI's supplement are kept apart", {
  refs <- data.frame(
    title = c("Trial of A in adults", "Trial of A in adults.", "Another abstract in the supplement", "X", "Y"),
    authors = c("Doe, J", "Doe J", "Roe, R", "Poe, P", "Loe, L"),
    year = c(2019L, 2019L, 2019L, 2020L, 2020L),
    doi = c("10.1000/Supp.1", "https://doi.org/10.1000/supp.1", "10.1000/supp.1", NA, NA),
    pmid = c(NA, NA, NA, "123", "123"),
    stringsAsFactors = FALSE)
  unique_refs <- dedup_refs(refs, messages = FALSE)
  expect_equal(unique_refs$title, c("Trial of A in adults", "Another abstract in the supplement", "X"))
  groups <- dedup_groups(unique_refs)
  expect_equal(groups$match, c("doi", "doi", "pmid", "pmid"))
  expect_equal(nrow(dedup_refs(refs, match = "title", messages = FALSE)), 4)
})

test_that("the merged ids are written by write_refs(), read back, and carried through a screening", {
  refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))[1:4, ]
  copy <- refs[3, ]
  copy$source_file <- "again.ris"
  unique_refs <- dedup_refs(rbind(refs, copy), messages = FALSE)
  dir <- withr::local_tempdir()
  ris <- file.path(dir, "unique.ris")
  write_refs(unique_refs, ris)
  expect_true("N1  - tabscreen merged: again.ris:1" %in% readLines(ris))
  back <- read_refs(ris)
  expect_identical(back$merged_ids, unique_refs$merged_ids)
  expect_identical(back$notes, unique_refs$notes)
  csv <- file.path(dir, "unique.csv")
  write_refs(unique_refs, csv)
  expect_identical(read_refs(csv)$merged_ids, unique_refs$merged_ids)

  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(decisions = list("1" = 1))
  res <- tabscreen_a.tools(unique_refs, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE, messages = FALSE)
  write_refs(res, ris)
  back <- read_refs(ris)
  expect_identical(back$merged_ids, unique_refs$merged_ids)
  expect_equal(back$tabscreen_decision, rep("Include", 4))
})

test_that("bad arguments of dedup_refs() are classed errors", {
  refs <- data.frame(title = c("a", "b"), id = c("x", "x"))
  expect_error(dedup_refs(list(title = "a")), class = "tabscreen_error_dedup_refs")
  expect_error(dedup_refs(data.frame(name = "a")), class = "tabscreen_error_dedup_refs")
  cnd <- expect_error(dedup_refs(refs, match = "isbn"), class = "tabscreen_error_dedup_match")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_error(dedup_refs(refs, id = "nope"), class = "tabscreen_error_dedup_id")
  expect_error(dedup_refs(refs, id = "id"), class = "tabscreen_error_dedup_id")
  expect_error(dedup_refs(refs, messages = NA), class = "tabscreen_error_dedup_messages")
  expect_error(dedup_groups(refs), class = "tabscreen_error_dedup_x")
})

test_that("Embase's RIS export gives the MEDLINE PubMed id (C5), and dedup_refs() matches it with the CSV export's", {
  dir <- shared_data("refs-corpus", "citation-file-formatting")
  ris <- read_refs(file.path(dir, "_baseline_embase.ris"))
  csv <- read_refs(file.path(dir, "_baseline_embase.csv"))
  expect_equal(sum(!is.na(ris$pmid)), 10)
  expect_setequal(ris$pmid, csv$pmid)
  # The PubMed ids alone join each record of one export to its copy in the other.
  both <- dedup_refs(rbind(ris[c("title", "pmid", "source_file")], csv[c("title", "pmid", "source_file")]), match = "pmid", messages = FALSE)
  expect_equal(nrow(both), 10)
  expect_equal(unique(dedup_groups(both)$match), "pmid")
})

test_that("the issue, end page and type reach the matching: an editor's column in two issues, two abstracts on one page", {
  column <- data.frame(title = rep("Editor's comments on the state of the field", 2), authors = c("Rai, A", "Rai, Arun"),
    year = 2019L, journal = "MIS Quarterly", volume = "43", issue = c("1", "2"), stringsAsFactors = FALSE)
  expect_equal(nrow(dedup_refs(column, messages = FALSE)), 2)
  expect_equal(nrow(dedup_refs(column[names(column) != "issue"], messages = FALSE)), 1)
  # One DOI is one record, whatever the issues say.
  column$doi <- "10.25300/misq/2019/43.1"
  expect_equal(dedup_groups(dedup_refs(column, messages = FALSE))$match, c("doi", "doi"))

  # Two abstracts of one group on one page of a supplement, and an article with its translated
  # title at one page range.
  refs <- data.frame(title = c("Glucose variability in type 1 diabetes", "Insulin pumps in adolescents",
    "Behandlung der Herzinsuffizienz im Alter", "[Treatment of heart failure in the elderly]"),
    authors = c("Lee, K", "Lee, K", "Müller, H", "Muller H"), year = c(2017L, 2017L, 2012L, 2012L),
    journal = c("Diabetes", "Diabetes", "Dtsch Med Wochenschr", "Dtsch Med Wochenschr"), volume = c("66", "66", "137", "137"),
    start_page = c("A10", "A10", "1123", "1123"), end_page = c("A11", "A11", "1128", NA),
    type = c("Conference Abstract", "Conference Abstract", "JOUR", "JOUR"), stringsAsFactors = FALSE)
  refs$start_page[4] <- "1123-8"
  unique_refs <- dedup_refs(refs, messages = FALSE)
  expect_equal(nrow(unique_refs), 3)
  expect_equal(dedup_groups(unique_refs)$match, c("citation", "citation"))
})

test_that("on the labelled sets, the unsure pairs decided as the labels say give record-level sensitivity >= 0.99", {
  withr::local_options(tabscreen.store = FALSE)
  for (name in c("asysd_diabetes", "sra_cytology", "sra_respiratory")) {
    set <- read_labelled(name)
    refs <- set$refs
    ids <- set$ids
    group <- set$group
    auto <- dedup_refs(refs, id = "record_key", messages = FALSE)
    unsure <- dedup_unsure(auto)
    expect_lte(nrow(unsure) * 1000 / nrow(refs), 20, label = paste(name, "unsure pairs per 1,000 records"))
    # Never merged by the rules.
    g <- dedup_groups(auto)
    expect_false(any(g$group[match(unsure$id_a, g$id)] == g$group[match(unsure$id_b, g$id)], na.rm = TRUE))
    unsure$decision <- ifelse(group[match(unsure$id_a, ids)] == group[match(unsure$id_b, ids)], "same", "different")
    decided <- dedup_refs(refs, id = "record_key", decisions = unsure, messages = FALSE)
    score <- record_scores(ids %in% decided$record_key, group)
    message(sprintf("dedup records_%s: %d unsure pairs (%.1f per 1,000), decided by the labels: sensitivity %.4f, specificity %.4f",
      name, nrow(unsure), nrow(unsure) * 1000 / nrow(refs), score[["sensitivity"]], score[["specificity"]]))
    expect_gte(score[["sensitivity"]], 0.99, label = paste(name, "sensitivity with the band decided"))
    expect_gte(score[["specificity"]], 0.999, label = paste(name, "specificity with the band decided"))
    expect_equal(nrow(dedup_unsure(decided)), 0)
  }
})

test_that("an unsure pair is listed, not merged; a person's decision joins or parts it, is kept and applied again", {
  withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"))
  # One title of one author at two page ranges of one volume: one article (sra_cytology's labels).
  refs <- read_refs(shared_data("dedup", "records_sra_cytology.csv"), source_col = NULL)
  refs <- refs[refs$record_key %in% c("id_0000228", "id_0000229", "id_0000230"), ]
  refs$record_key <- as.character(refs$record_key)
  expect_message(x <- dedup_refs(refs, id = "record_key"), "1 pair unsure")
  expect_equal(nrow(x), 3)
  unsure <- dedup_unsure(x)
  expect_equal(unsure[c("id_a", "id_b", "rule", "conflicts")],
    tibble::tibble(id_a = "id_0000228", id_b = "id_0000229", rule = "title", conflicts = "pages"))
  expect_true(all(is.na(unsure$decision)))

  unsure$decision <- "same"
  y <- dedup_refs(refs, id = "record_key", decisions = unsure, messages = FALSE)
  expect_equal(nrow(y), 2)
  expect_equal(dedup_groups(y)$match, c("person", "person"))
  expect_equal(nrow(dedup_unsure(y)), 0)
  # Kept: a second call applies it without being given it; the records in another order too.
  expect_equal(nrow(dedup_refs(refs[3:1, ], id = "record_key", messages = FALSE)), 2)
  # A new decision on the pair, named the other way round, replaces it.
  expect_equal(nrow(dedup_refs(refs, id = "record_key", messages = FALSE,
    decisions = data.frame(id_a = "id_0000229", id_b = "id_0000228", decision = "different"))), 3)
  again <- dedup_refs(refs, id = "record_key", messages = FALSE)
  expect_equal(nrow(again), 3)
  expect_equal(nrow(dedup_unsure(again)), 0)
  # Each answer store keeps its own decisions, even beside another in one folder.
  withr::with_options(list(tabscreen.store = tempfile("store-", fileext = ".sqlite")),
    expect_equal(nrow(dedup_unsure(dedup_refs(refs, id = "record_key", messages = FALSE))), 1))
  # The same ids on other records: the decision is not theirs.
  other <- refs
  other$title[1] <- "Another title altogether, of another study"
  expect_equal(nrow(dedup_unsure(dedup_refs(other, id = "record_key", messages = FALSE))), 0)
  other$title[1] <- paste(refs$title[1], "")
  expect_equal(nrow(dedup_unsure(dedup_refs(other, id = "record_key", messages = FALSE))), 1)
})

test_that("bad decisions are classed errors", {
  withr::local_options(tabscreen.store = FALSE)
  refs <- data.frame(title = c("a", "b"), id = c("x", "y"))
  expect_error(dedup_refs(refs, id = "id", decisions = list(id_a = "x")), class = "tabscreen_error_dedup_decisions")
  expect_error(dedup_refs(refs, id = "id", decisions = data.frame(id_a = "x", id_b = "y", decision = "maybe")),
    class = "tabscreen_error_dedup_decisions")
  expect_error(dedup_refs(refs, id = "id", decisions = data.frame(id_a = "x", id_b = "z", decision = "same")),
    class = "tabscreen_error_dedup_decisions")
  expect_error(dedup_refs(refs, id = "id", decisions = data.frame(id_a = "x", id_b = "x", decision = "same")),
    class = "tabscreen_error_dedup_decisions")
  expect_error(dedup_unsure(refs), class = "tabscreen_error_dedup_x")
  expect_error(dedup_review(refs, open = FALSE, wait = FALSE), class = "tabscreen_error_dedup_x")
  expect_error(dedup_review(dedup_refs(refs, messages = FALSE), open = FALSE, wait = FALSE), class = "tabscreen_error_dedup_store")
  expect_error(dedup_review_decisions(dedup_refs(refs, messages = FALSE)), class = "tabscreen_error_dedup_store")
  # NA is undecided.
  expect_equal(nrow(dedup_refs(refs, id = "id", decisions = data.frame(id_a = "x", id_b = "y", decision = NA), messages = FALSE)), 2)
})

test_that("the unsure pairs are decided on the review app's page: i same, e different, z undo; kept for dedup_refs()", {
  withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"))
  # Speich 2004 at two page ranges (one article), and Stemmler 2010's two papers of one series
  # in one volume (two), from the labelled sets.
  cyto <- read_refs(shared_data("dedup", "records_sra_cytology.csv"), source_col = NULL)
  resp <- read_refs(shared_data("dedup", "records_sra_respiratory.csv"), source_col = NULL)
  fields <- c("record_key", "title", "authors", "year", "journal", "volume", "start_page")
  refs <- rbind(cyto[cyto$record_key %in% c("id_0000228", "id_0000229"), fields],
    resp[resp$record_key %in% c("id_0001006", "id_0001007"), fields])
  refs$record_key <- c("c228", "c229", "r1006", "r1007")
  x <- dedup_refs(refs, id = "record_key", messages = FALSE)
  expect_equal(nrow(x), 4)
  expect_equal(dedup_unsure(x)$id_a, c("c228", "r1006"))

  app <- suppressMessages(dedup_review(x, reviewer = "ann", open = FALSE, wait = FALSE))
  withr::defer(app$stop())
  st <- review_state(app)
  expect_equal(st$studyid, c("c228 | c229", "r1006 | r1007"))
  expect_match(st$items[[1]]$abstract, "(?s)Speich, N.*125-128.*2-8.*against it: pages", perl = TRUE)
  decide(app, "c228 | c229", "Include")
  decide(app, "r1006 | r1007", "Unsure")
  d <- dedup_review_decisions(x)
  expect_equal(d$decision, c("same", NA))
  # z: the Unsure taken back, then Exclude.
  expect_equal(review_api(app, "/api/undo", list(reviewer = "ann"))$status, 200L)
  decide(app, "r1006 | r1007", "Exclude")
  expect_equal(dedup_review_decisions(x)$decision, c("same", "different"))
  # Two reviewers who disagree leave a pair undecided; one reviewer's decisions can be read alone.
  decide(app, "c228 | c229", "Exclude", reviewer = "bob")
  expect_equal(dedup_review_decisions(x)$decision, c(NA, "different"))
  expect_equal(dedup_review_decisions(x, reviewer = "ann")$decision, c("same", "different"))
  app$stop()

  # Kept: dedup_refs() of the same records applies both, without being given them.
  again <- dedup_refs(refs, id = "record_key", messages = FALSE)
  expect_equal(nrow(again), 3)
  expect_equal(nrow(dedup_unsure(again)), 0)
  # Each answer store keeps its own decisions, even beside another in one folder.
  withr::with_options(list(tabscreen.store = tempfile("store-", fileext = ".sqlite")),
    expect_equal(nrow(dedup_unsure(dedup_refs(refs, id = "record_key", messages = FALSE))), 2))
  expect_equal(sort(dedup_groups(again)$id), c("c228", "c229"))
})
