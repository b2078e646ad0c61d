# The benches' records, sourced by the scripts in bench/ (run from the repository's root): the real
# references of ../shared/data/friends_dat.csv that have an abstract (the bundled filges2015_dat
# without ../shared), and `grow()`, which repeats them to n records with numbered titles, so that
# no two questions are the same.
load_abstracts <- function(path = "../shared/data/friends_dat.csv") {
  if (file.exists(path)) {
    d <- utils::read.csv(path, encoding = "UTF-8", stringsAsFactors = FALSE)
    d[nzchar(d$abstract), c("title", "abstract")]
  } else {
    tabscreen::filges2015_dat[c("title", "abstract")]
  }
}

grow <- function(d, n) {
  d <- d[rep_len(seq_len(nrow(d)), n), ]
  d$title <- paste(d$title, seq_len(n))
  rownames(d) <- NULL
  d
}

# The records of a bench of the fake's answer model: `n` grown records with study ids 1 to n.
numbered_records <- function(n) {
  records <- grow(load_abstracts(), n)
  records$studyid <- seq_len(n)
  records
}
