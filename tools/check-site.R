# Checks a built pkgdown site: no example or article shows an error or a warning in its output,
# and every internal link (a, link, img, script, iframe) leads to a file of the site and, when it
# names a fragment, to an element with that id. External links are not followed.
#   Rscript tools/check-site.R SITE_DIR
args <- commandArgs(TRUE)
if (length(args) != 1L || !dir.exists(args[[1]])) stop("usage: Rscript tools/check-site.R SITE_DIR", call. = FALSE)
site <- normalizePath(args[[1]])
pages <- list.files(site, pattern = "[.]html$", recursive = TRUE, full.names = TRUE)
if (length(pages) == 0L) stop("no HTML page in ", site, call. = FALSE)

problems <- character()
ids <- new.env()
page_ids <- function(path) {
  if (is.null(ids[[path]])) {
    doc <- xml2::read_html(path)
    ids[[path]] <- c(xml2::xml_attr(xml2::xml_find_all(doc, "//*[@id]"), "id"),
                     xml2::xml_attr(xml2::xml_find_all(doc, "//a[@name]"), "name"))
  }
  ids[[path]]
}

checked <- 0L
for (page in pages) {
  rel <- substring(page, nchar(site) + 2L)
  doc <- xml2::read_html(page)
  # What examples and articles printed: downlit marks an example's errors and warnings with the
  # classes r-err and r-wrn; knitr writes an article's as "#> Error" / "#> Warning".
  marked <- xml2::xml_find_all(doc, "//*[contains(concat(' ', @class, ' '), ' r-err ') or contains(concat(' ', @class, ' '), ' r-wrn ')]")
  code <- xml2::xml_text(xml2::xml_find_all(doc, "//pre"))
  knitr_bad <- unlist(regmatches(code, gregexpr("(^|\n)#> (Error|Warning)[^\n]*", code)))
  for (text in c(xml2::xml_text(marked), knitr_bad)) {
    problems <- c(problems, sprintf("%s: shows %s", rel, trimws(substr(text, 1, 160))))
  }

  nodes <- xml2::xml_find_all(doc, "//a[@href] | //link[@href] | //img[@src] | //script[@src] | //iframe[@src]")
  targets <- ifelse(is.na(xml2::xml_attr(nodes, "href")), xml2::xml_attr(nodes, "src"), xml2::xml_attr(nodes, "href"))
  for (target in unique(targets)) {
    if (grepl("^[a-zA-Z][a-zA-Z0-9+.-]*:", target) || startsWith(target, "//")) next # external, mailto:, data:
    parts <- regmatches(target, regexec("^([^#?]*)(\\?[^#]*)?(#(.*))?$", target))[[1]]
    path <- utils::URLdecode(parts[[2]])
    fragment <- utils::URLdecode(parts[[5]])
    file <- if (!nzchar(path)) page else if (startsWith(path, "/")) file.path(site, path) else file.path(dirname(page), path)
    if (dir.exists(file)) file <- file.path(file, "index.html")
    checked <- checked + 1L
    if (!file.exists(file)) {
      problems <- c(problems, sprintf("%s: broken link %s", rel, target))
    } else if (nzchar(fragment) && grepl("[.]html$", file) && !fragment %in% page_ids(normalizePath(file))) {
      problems <- c(problems, sprintf("%s: link %s names no element of its page", rel, target))
    }
  }
}

cat(sprintf("site %s: %d pages, %d internal links checked\n", site, length(pages), checked))
if (length(problems)) {
  cat(paste0("  ", unique(problems), "\n"), sep = "")
  quit(status = 1L)
}
