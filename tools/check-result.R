# Fails when R CMD check reported an error or a warning (notes are allowed).
args <- commandArgs(TRUE)
log <- readLines(file.path(args[1], "00check.log"), warn = FALSE)
status <- grep("^Status:", log, value = TRUE)
cat(status, "\n")
if (length(status) == 0 || grepl("ERROR|WARNING", status)) quit(status = 1)
