# make install, second step: the vignettes into the installed package, so that vignette("tabscreen")
# works after `make install` as after an install of the source package.
#   Rscript tools/install-vignettes.R LIBRARY
# R CMD INSTALL of a checkout installs the vignettes it finds built in inst/doc (R CMD build puts
# them there for the source package). Building them needs the package installed, so this builds
# them with the package just installed into LIBRARY and installs it again, which takes seconds with
# the core already compiled. Nothing is done while inst/doc is newer than everything a vignette's
# output depends on. inst/doc is not in git.
args <- commandArgs(TRUE)
if (length(args) != 1L) stop("usage: Rscript tools/install-vignettes.R LIBRARY", call. = FALSE)
lib <- normalizePath(args[[1]], mustWork = TRUE)
root <- normalizePath(".")
doc <- file.path(root, "inst", "doc")

sources <- list.files(file.path(root, "vignettes"), pattern = "[.]Rmd$", full.names = TRUE)
outputs <- file.path(doc, sub("[.]Rmd$", ".html", basename(sources)))
inputs <- c(sources, file.path(root, "DESCRIPTION"),
            list.files(file.path(root, c("R", "src", "golib", "data", "inst/extdata")), recursive = TRUE,
                       full.names = TRUE))
inputs <- inputs[!grepl("[.](o|so|dll)$|/[.]go", inputs)]
newest <- max(file.mtime(inputs))
if (length(sources) == 0L || (all(file.exists(outputs)) && min(file.mtime(outputs)) > newest)) {
  quit(status = 0L)
}

# Built in a scratch folder (a vignette may write files beside itself), with the installed package.
build <- tempfile("tabscreen-vignettes-")
dir.create(build)
on.exit(unlink(build, recursive = TRUE), add = TRUE)
.libPaths(c(lib, .libPaths()))
Sys.setenv(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
unlink(doc, recursive = TRUE)
dir.create(doc, recursive = TRUE)
# Each vignette is built in an R process of its own: buildVignette() runs the code in the global
# environment, where a vignette's variables would overwrite this script's.
for (src in sources) {
  file.copy(src, build, overwrite = TRUE)
  cat("building vignette", basename(src), "\n")
  made <- paste0(sub("[.]Rmd$", "", basename(src)), c(".html", ".R"))
  code <- sprintf("setwd(%s); tools::buildVignette(%s, dir = %s, tangle = TRUE, quiet = TRUE)",
                  deparse(build), deparse(basename(src)), deparse(build))
  if (system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code))) != 0L ||
      !all(file.exists(file.path(build, made)))) {
    stop("building vignette ", basename(src), " failed", call. = FALSE)
  }
  file.copy(c(src, file.path(build, made)), doc, overwrite = TRUE)
}

log <- file.path(lib, ".install.log")
status <- system2(file.path(R.home("bin"), "R"),
                  c("CMD", "INSTALL", "--no-test-load", paste0("--library=", shQuote(lib)), shQuote(root)),
                  stdout = log, stderr = log)
if (status != 0L) {
  writeLines(readLines(log), stderr())
  quit(status = 1L)
}
cat("vignettes installed:", basename(outputs), "\n")
