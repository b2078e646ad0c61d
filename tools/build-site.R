# make site: the pkgdown website into docs/, from the package installed in R_LIBS (make install),
# with every example and article run. Fails on any warning while building; tools/check-site.R then
# checks what the pages show and their links.
#   Rscript tools/build-site.R [OUT_DIR]      (default docs/)
args <- commandArgs(TRUE)
out <- if (length(args) >= 1L) args[[1]] else "docs"
if (!requireNamespace("pkgdown", quietly = TRUE)) {
  stop("pkgdown is not installed: run tools/install-deps.sh (Debian package r-cran-pkgdown)", call. = FALSE)
}
if (!nzchar(system.file(package = "tabscreen"))) {
  stop("tabscreen is not installed in R_LIBS: run `make install` first", call. = FALSE)
}
# The examples and articles keep their answers in temporary stores; a default store they missed
# goes to a temporary folder too, never to the user's data folder.
Sys.setenv(R_USER_DATA_DIR = tempfile("tabscreen-site-data-"))
for (key in c("PROVIDER_A_API_KEY", "PROVIDER_B_API_KEY", "PROVIDER_C_API_KEY", "OPENAI_API_KEY",
              "ANTHROPIC_API_KEY", "MISTRAL_API_KEY")) {
  Sys.unsetenv(key)
}

# The site is built without the network: pkgdown's own look-ups (is the package on CRAN?) are
# turned off by its option; downlit, which links a package named in the text to its site, looks the
# packages that are not installed up in CRAN's package list, and here leaves them unlinked.
options(pkgdown.internet = FALSE)
utils::assignInNamespace("CRAN_urls", function() data.frame(Package = character(), URL = character()),
                         "downlit")

warnings <- character()
started <- Sys.time()
withCallingHandlers(
  pkgdown::build_site(".", override = list(destination = out), install = FALSE, new_process = FALSE,
                      preview = FALSE, devel = FALSE),
  warning = function(w) {
    warnings <<- c(warnings, conditionMessage(w))
    invokeRestart("muffleWarning")
  }
)

cat(sprintf("\nsite built into %s/ in %.0f s\n", out, as.numeric(difftime(Sys.time(), started, units = "secs"))))
if (length(warnings) > 0L) {
  cat("Warnings while building:\n", paste0("  ", unique(warnings), "\n"), sep = "")
  quit(status = 1L)
}
