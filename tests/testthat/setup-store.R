# Nothing the tests run writes to the user's data folder: the default answer store (and that of
# any child R process the tests start) lives in a temporary folder.
withr::local_envvar(R_USER_DATA_DIR = tempfile("tabscreen-user-data-"), .local_envir = testthat::teardown_env())
