# The reading target of issue 13: 50,000 real RIS records read by read_refs() in <= 1 s with a
# peak RSS of the R process <= 400 MB. Run from the package's folder with the package installed:
#   R_LIBS=$PWD/.rlib Rscript bench/refs.R
# The file is made of the real RIS exports of ../shared/data/refs-corpus (every one that reads),
# joined as a user joins exports (`cat`), repeated until it holds 50,000 records. Each measurement
# runs in a fresh R process (the first call of its session), so that the peak memory is its own.
# Prints markdown rows for bench/README.md.
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

# One read in a fresh R process: the first call of the session, as a user's is.
measure <- function(path) {
  callr::r(function(libs, path) {
    .libPaths(libs)
    library(tabscreen)
    st <- system.time(refs <- read_refs(path))
    peak <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
    t_dedup <- system.time(unique_refs <- dedup_refs(refs, messages = FALSE))[["elapsed"]]
    list(n = nrow(refs), cols = ncol(refs), seconds = st[["elapsed"]], cpu = st[["user.self"]] + st[["sys.self"]],
         peak_mb = peak, dedup_seconds = t_dedup, kept = nrow(unique_refs))
  }, args = list(libs = libs, path = path), show = FALSE)
}
# The machine's two cores are shared: three runs, their median, and the load when they start.
load <- if (file.exists("/proc/loadavg")) strsplit(readLines("/proc/loadavg"), " ")[[1]][1] else "NA"
runs <- lapply(1:3, function(i) measure(path))
pick <- function(name) vapply(runs, function(r) r[[name]], numeric(1))
run <- runs[[order(pick("seconds"))[2]]]
cat(sprintf("\n1-minute load average before the runs: %s; elapsed of the three runs: %s s\n", load,
  paste(sprintf("%.2f", pick("seconds")), collapse = ", ")))
cat("\n| Measurement | Result | Target | |\n|---|---|---|---|\n")
cat(sprintf("| read_refs() of %s RIS records (%.0f MB, %d columns), first call in a fresh R process (median of 3) | %.2f s (CPU %.2f s, R and Go threads) | <= 1 s | %s |\n",
  format(run$n, big.mark = ","), file.size(path) / 2^20, run$cols, run$seconds, run$cpu, if (run$seconds <= 1) "met" else "MISSED"))
cat(sprintf("| Peak RSS (VmHWM) of that R process after the read (highest of 3) | %.0f MB | <= 400 MB | %s |\n",
  max(pick("peak_mb")), if (max(pick("peak_mb")) <= 400) "met" else "MISSED"))
cat(sprintf("| dedup_refs() of those records (every record about %d times) | %.2f s, %s kept | | |\n",
  times, run$dedup_seconds, format(run$kept, big.mark = ",")))
