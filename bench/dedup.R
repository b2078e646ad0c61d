# dedup_refs() measured: on the labelled sets of ../shared/data/dedup (records_*.csv, every field
# their sources hold, read by read_refs(); truth_*.csv), pairwise precision, recall and F1 and the
# record-level sensitivity and specificity the published tools report, and the unsure pairs: how many
# per 1,000 records, and the scores with each decided as the labels say; the groups found in the
# real exports of ../shared/data/refs-corpus read together; and 50,000 records deduplicated in a
# fresh R process, with its memory. Run from the package's folder with the package installed:
#   R_LIBS=$PWD/.rlib Rscript bench/dedup.R
# DEDUP_BENCH_SPEED=0 leaves out the 50,000 records. Prints markdown for bench/README.md.
suppressPackageStartupMessages(library(tabscreen))
# Decisions on unsure pairs are given, never kept from one truth to the next.
options(tabscreen.store = FALSE)
data_dir <- "../shared/data/dedup"
corpus <- "../shared/data/refs-corpus"
if (!dir.exists(data_dir)) stop("the bench needs ", data_dir)

# Record level, the removal convention of the published tools: of each true group one record
# should be kept and the others removed. Each extra record kept is a false negative; a true group
# that keeps none of its records (all merged into another work) is one false positive; a group
# that keeps one is a true negative; every rightly removed record a true positive.
record_scores <- function(kept, truth) {
  n_kept <- tapply(kept, truth, sum)
  size <- tapply(kept, truth, length)
  fn <- sum(pmax(n_kept - 1, 0))
  fp <- sum(n_kept == 0)
  tn <- sum(n_kept >= 1)
  tp <- sum(size) - fn - fp - tn
  c(tp = tp, fn = fn, fp = fp, tn = tn, sensitivity = tp / (tp + fn), specificity = tn / (tn + fp))
}

# Pairwise: a pair of records counts when both are in one group.
pair_scores <- function(pred, truth) {
  pairs <- function(x) sum(choose(as.vector(x), 2))
  tp <- pairs(table(pred, truth))
  p <- tp / pairs(table(pred))
  r <- tp / pairs(table(truth))
  c(precision = p, recall = r, f1 = 2 * p * r / (p + r), pair_fp = pairs(table(pred)) - tp, pair_fn = pairs(table(truth)) - tp)
}

read_set <- function(name) {
  # The diabetes set is an EndNote export in Windows-1252.
  encoding <- if (startsWith(name, "asysd")) "windows-1252" else "UTF-8"
  refs <- read_refs(file.path(data_dir, paste0("records_", name, ".csv")), source_col = NULL, encoding = encoding)
  if ("secondary_title" %in% names(refs)) {
    # Conference papers name their proceedings in the secondary title.
    refs$journal <- ifelse(is.na(refs$journal), refs$secondary_title, refs$journal)
  }
  refs$record_key <- as.character(refs$record_key)
  refs
}

# The predicted group and kept flag of every record of refs, with decisions on unsure pairs.
predicted <- function(refs, decisions = NULL) {
  unique_refs <- dedup_refs(refs, id = "record_key", messages = FALSE, decisions = decisions)
  g <- dedup_groups(unique_refs)
  group <- paste0("own-", refs$record_key)
  kept <- rep(TRUE, nrow(refs))
  at <- match(g$id, refs$record_key)
  group[at] <- paste0("group-", g$group)
  kept[at] <- g$kept
  list(group = group, kept = kept, unsure = dedup_unsure(unique_refs))
}

sets <- c("asysd_diabetes", "sra_cytology", "sra_respiratory", "bibdedupe_special_cases")
truths <- c(sets[1], "asysd_diabetes_curated", "asysd_diabetes_corrected", sets[2:3], "sra_respiratory_corrected", sets[4])
# Labels we are sure are wrong (bench/README.md gives the records): each set of records below is a
# group of its own in the "_corrected" truths, which are otherwise the primary ones.
corrections <- list(
  # Hair's group mixes two abstracts of Diabetologia's page S354: Terasaki et al.'s, split from Hirano et al.'s.
  asysd_diabetes = list(c("509", "1253", "1544", "1716")),
  # A conference abstract (J Clin Oncol 30, 2012) grouped with the PLoS ONE article; two letters of
  # different authors printed under one heading (N Engl J Med 352:2243-5).
  sra_respiratory = list("id_0000893", "id_0000709"))
cat(sprintf("tabscreen %s\n\n", utils::packageVersion("tabscreen")))
cat("| set (truth) | records | true groups | pairwise precision / recall / F1 (pairs wrongly joined, missed) | record level TP / FN / FP / TN | sensitivity | specificity | unsure pairs (per 1,000 records; same by the labels) | with them decided by the labels: sensitivity / specificity |\n")
cat("|---|---|---|---|---|---|---|---|---|\n")
for (truth_name in truths) {
  set <- sub("_(curated|corrected)$", "", truth_name)
  refs <- read_set(set)
  truth <- utils::read.csv(file.path(data_dir, paste0("truth_", sub("_corrected$", "", truth_name), ".csv")), colClasses = "character")
  truth <- truth$group_id[match(refs$record_key, truth$record_key)]
  if (endsWith(truth_name, "_corrected")) {
    for (k in seq_along(corrections[[set]])) truth[refs$record_key %in% corrections[[set]][[k]]] <- paste0("corrected-", k)
  }
  pred <- predicted(refs)
  ps <- pair_scores(pred$group, truth)
  rs <- record_scores(pred$kept, truth)
  # The middle band, every unsure pair decided as the labels say.
  unsure <- pred$unsure
  unsure$decision <- ifelse(truth[match(unsure$id_a, refs$record_key)] == truth[match(unsure$id_b, refs$record_key)], "same", "different")
  band <- record_scores(predicted(refs, unsure)$kept, truth)
  cat(sprintf("| %s | %s | %s | %.4f / %.4f / %.4f (%d, %d) | %d / %d / %d / %d | %.4f | %.4f | %d (%.1f; %d) | %.4f / %.4f |\n", truth_name,
    format(nrow(refs), big.mark = ","), format(length(unique(truth)), big.mark = ","), ps[["precision"]], ps[["recall"]],
    ps[["f1"]], ps[["pair_fp"]], ps[["pair_fn"]], rs[["tp"]], rs[["fn"]], rs[["fp"]], rs[["tn"]], rs[["sensitivity"]],
    rs[["specificity"]], nrow(unsure), nrow(unsure) * 1000 / nrow(refs), sum(unsure$decision == "same"),
    band[["sensitivity"]], band[["specificity"]]))
}

if (dir.exists(corpus)) {
  # Every export of the corpus that reads, together, as a user joins the exports of one search.
  files <- list.files(corpus, pattern = "[.](ris|txt|nbib|ciw|csv|bib)$", recursive = TRUE, full.names = TRUE)
  parts <- lapply(files, function(f) tryCatch(read_refs(f), error = function(e) NULL))
  read_ok <- !vapply(parts, is.null, logical(1))
  fields <- c("title", "authors", "year", "journal", "doi", "pmid", "volume", "issue", "start_page", "end_page",
    "abstract", "type", "source_file")
  refs <- do.call(rbind, lapply(parts[read_ok], function(r) {
    as.data.frame(lapply(stats::setNames(fields, fields), function(f) if (f %in% names(r)) as.character(r[[f]]) else rep(NA_character_, nrow(r))),
      stringsAsFactors = FALSE)
  }))
  unique_refs <- dedup_refs(refs, messages = FALSE)
  g <- dedup_groups(unique_refs)
  n_unsure <- nrow(dedup_unsure(unique_refs))
  rules <- table(unlist(strsplit(g$match, ", ")))
  sizes <- table(g$group)
  cat(sprintf("\nrefs-corpus: %d of %d files read together, %s records (%s with a PubMed id): %d groups of 2 or more (largest %d records), %s duplicates, %s kept; records linked by each rule: %s; %d unsure pairs (%.1f per 1,000 records)\n",
    sum(read_ok), length(files), format(nrow(refs), big.mark = ","), format(sum(!is.na(refs$pmid)), big.mark = ","),
    length(sizes), max(sizes), format(sum(sizes) - length(sizes), big.mark = ","), format(nrow(unique_refs), big.mark = ","),
    paste(names(rules), rules, sep = " ", collapse = ", "), n_unsure, n_unsure * 1000 / nrow(refs)))
  # One Embase search exported through seventeen tools (the files of tests/testthat/test-refs-dedup.R):
  # its DOIs tell how many works it holds.
  tools <- c("_baseline_covidence.csv", "_baseline_covidence_endnote.ris", "_baseline_covidence_mendeley.ris",
    "_baseline_covidence_refworks.ris", "_baseline_covidence_zotero.ris", "_baseline_embase.csv",
    "_baseline_embase.ris", "_baseline_endnote.ris", "_baseline_eppireviewer.ris", "_baseline_excel.csv",
    "_baseline_mendeley.ris", "_baseline_rayyan.csv", "_baseline_rayyan.ris", "_baseline_refworks.ris",
    "_baseline_zotero.csv", "_baseline_zotero.ris", "_baseline_abstrackr.csv")
  one <- read_refs(file.path(corpus, "citation-file-formatting", tools))
  doi <- tolower(sub("^(https?://(dx[.])?doi[.]org/|doi:)", "", sub("\\s.*", "", trimws(one$doi))))
  cat(sprintf("One Embase search through 17 tools: %d records (%d DOIs among them), %d kept after deduplication\n",
    nrow(one), length(unique(doi[!is.na(doi)])), nrow(dedup_refs(one, messages = FALSE))))
}

if (Sys.getenv("DEDUP_BENCH_SPEED", "1") != "0" && dir.exists(corpus)) {
  # 50,000 records: the corpus's RIS exports joined as bench/refs.R joins them, deduplicated in a
  # fresh R process; VmHWM after the read and after the deduplication.
  files <- list.files(corpus, pattern = "[.](ris|txt)$", recursive = TRUE, full.names = TRUE)
  chunks <- list()
  n_part <- integer()
  for (f in files) {
    r <- tryCatch(read_refs(f, format = "ris"), error = function(e) NULL)
    if (!is.null(r)) {
      chunks[[f]] <- c(readBin(f, "raw", file.size(f)), as.raw(c(0x0d, 0x0a)))
      n_part[f] <- nrow(r)
    }
  }
  path <- file.path(tempdir(), "dedup-50k.ris")
  con <- file(path, "wb")
  n <- 0
  while (n < 50000) {
    for (f in names(chunks)) {
      if (n >= 50000) break
      writeBin(chunks[[f]], con)
      n <- n + n_part[[f]]
    }
  }
  close(con)
  hwm <- function() as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
  runs <- lapply(1:3, function(i) callr::r(function(libs, path, hwm) {
    .libPaths(libs)
    library(tabscreen)
    refs <- read_refs(path)
    before <- hwm()
    gc()
    # Resets the peak, so that the one after is the deduplication's own.
    try(writeLines("5", "/proc/self/clear_refs"), silent = TRUE)
    st <- system.time(u <- dedup_refs(refs, messages = FALSE))
    list(n = nrow(refs), seconds = st[["elapsed"]], kept = nrow(u), unsure = nrow(dedup_unsure(u)), hwm_read = before, hwm_dedup = hwm())
  }, args = list(libs = .libPaths(), path = path, hwm = hwm), show = FALSE))
  secs <- vapply(runs, function(r) r$seconds, numeric(1))
  run <- runs[[order(secs)[2]]]
  load <- strsplit(readLines("/proc/loadavg"), " ")[[1]][1]
  cat(sprintf("\n50,000 records (%s, the corpus's RIS exports joined, every record about %d times), 1-minute load %s: dedup_refs() %.2f s (median of %s s), %s kept, %s unsure pairs; peak RSS (VmHWM) %.0f MB during read_refs(), %.0f MB during dedup_refs() (the peak reset before it)\n",
    format(run$n, big.mark = ","), ceiling(50000 / sum(n_part)), load, run$seconds, paste(sprintf("%.2f", secs), collapse = ", "),
    format(run$kept, big.mark = ","), format(run$unsure, big.mark = ","), run$hwm_read, run$hwm_dedup))
}
