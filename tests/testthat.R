library(testthat)
library(tabscreen)

test_check("tabscreen")
