# Builds data/filges2015_dat.rda from the CSV export of AIscreenR's data set of the same name
# (M. H. Vembye & T. Olsen, GPL (>= 3); see ../shared/data/README.md for provenance).
# Run from the package root: Rscript data-raw/filges2015_dat.R

filges2015_dat <- utils::read.csv(
  "../shared/data/filges2015_dat.csv",
  colClasses = c(
    author = "character", eppi_id = "character", studyid = "integer",
    title = "character", abstract = "character", human_code = "integer"
  ),
  na.strings = "",
  encoding = "UTF-8"
)

stopifnot(
  nrow(filges2015_dat) == 270,
  identical(filges2015_dat$studyid, 1:270),
  sum(is.na(filges2015_dat$abstract)) == 28,
  sum(filges2015_dat$human_code == 1) == 90
)

filges2015_dat <- tibble::as_tibble(filges2015_dat)
save(filges2015_dat, file = "data/filges2015_dat.rda", compress = "xz", version = 3)
