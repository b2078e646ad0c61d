# The reading target of issue 13: 50,000 real RIS records read by read_refs() in <= 1 s with a
# peak RSS of the R process <= 400 MB. Run from the package's folder with the package installed:
#   R_LIBS=$PWD/.rlib Rscript bench/refs.R
# The file is made of the real RIS exports of ../shared/data/refs-corpus (every one that reads),
# joined as a user joins exports (`cat`), repeated until it holds 50,000 records. Each measurement
# runs in a fresh R process, so that the peak memory is its own. Prints markdown rows for
# bench/README.md.
libs <- .libPaths()
corpus <- "../shared/data/refs-corpus"
if (!dir.exists(corpus)) stop("the bench needs ", corpus)

files <- list.files(corpus, pattern = "[.](ris|txt)$", recursive = TRUE, full.names = TRUE)
parts <- list()
n_part <- integer()
for (f in files) {
  refs <- tryCatch(tabscreen::read_refs(f, format = "ris"), error = function(e) NULL)
  if (!is.null(refs)) {
    parts[[f]] <- c(readBin(f, "raw", file.size(f)), as.raw(c(0x0d, 0x0a)))
    n_part[f] <- nrow(refs)
  }
}
target <- 50000
times <- ceiling(target / sum(n_part))
path <- Sys.getenv("REFS_BENCH_FILE", file.path(tempdir(), "refs-50k.ris"))
con <- file(path, "wb")
n <- 0
for (k in seq_len(times)) {
  for (f in names(parts)) {
    if (n >= target) break
    writeBin(parts[[f]], con)
    n <- n + n_part[[f]]
  }
}
close(con)
cat(sprintf("%d real RIS exports (%d records), joined into %s: %d records, %.0f MB\n",
  length(parts), sum(n_part), basename(path), n, file.size(path) / 2^20))

measure <- function(path) {
  callr::r(function(libs, path) {
    .libPaths(libs)
    library(tabscreen)
    # The first call of a session also loads the code it runs (tibble's, jsonlite's): a read of a
    # small export first, timed on its own.
    small <- system.time(read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen")))[["elapsed"]]
    st <- system.time(refs <- read_refs(path))
    t <- st[["elapsed"]]
    cpu <- st[["user.self"]] + st[["sys.self"]]
    peak <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
    t_dedup <- system.time(unique_refs <- dedup_refs(refs, messages = FALSE))[["elapsed"]]
    list(n = nrow(refs), cols = ncol(refs), seconds = t, cpu = cpu, small = small, peak_mb = peak, dedup_seconds = t_dedup,
         kept = nrow(unique_refs))
  }, args = list(libs = libs, path = path), show = FALSE)
}
run <- measure(path)
cat("\n| Measurement | Result | Target | |\n|---|---|---|---|\n")
cat(sprintf("| read_refs() of %s RIS records (%.0f MB, %d columns), fresh R process, after a first read of 90 records (%.2f s) | %.2f s (CPU %.2f s, R and Go threads) | <= 1 s | %s |\n",
  format(run$n, big.mark = ","), file.size(path) / 2^20, run$cols, run$small, run$seconds, run$cpu, if (run$seconds <= 1) "met" else "MISSED"))
cat(sprintf("| Peak RSS (VmHWM) of that R process after the read | %.0f MB | <= 400 MB | %s |\n",
  run$peak_mb, if (run$peak_mb <= 400) "met" else "MISSED"))
cat(sprintf("| dedup_refs() of those records (every record %d times) | %.2f s, %s kept | | |\n",
  times, run$dedup_seconds, format(run$kept, big.mark = ",")))
