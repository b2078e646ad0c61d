# Argument fuzzing. Every argument of tabscreen_a.tools(), tabscreen_b(), tabscreen_c() and
# screen_errors() gets the values users get wrong: the wrong type, NA, length 0, length 2, out of
# range, a function for a value and a value for a function, an unknown word, a column that does not
# exist. Each must be an error of class tabscreen_error_arg whose field `arg` and message name the
# argument, and no request may reach the provider. The valid edge values of each argument, and the
# shapes data comes in, must still screen. The tables below are checked against the functions'
# formals, so that a new argument cannot go untested.

fuzz_records <- function() test_records()[c(1, 5), ]

# A custom tool in each shape: Chat Completions (providers A and C) and Messages (provider B).
fuzz_tool_chat <- list(type = "function", `function` = list(name = "decide", description = "Record the decision.",
  parameters = list(type = "object", properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
    required = "decision_llm")))
fuzz_tool_messages <- list(name = "decide", description = "Record the decision.", input_schema = list(type = "object",
  properties = list(decision_llm = list(type = "string", enum = c("1", "0"))), required = "decision_llm"))
fuzz_choice <- function(name) list(type = "function", `function` = list(name = name))

# An argument left out of the call (e.g. studyid, to have ids generated).
omit <- structure(list(), class = "fuzz_omit")

# One case: values for some arguments (the argument under test first); `.expect` is the argument
# the error must name when it is not the one under test (a data shape whose fault is a column);
# `.dots` are appended to the call as they are (unnamed or repeated names).
case <- function(..., .expect = NULL, .dots = list()) {
  list(args = rlang::list2(...), expect = .expect, dots = .dots)
}

# Cases setting `arg` to each of `values` (named by what is wrong with them); `with` adds arguments
# the case needs.
cases_of <- function(arg, values, with = list()) {
  lapply(values, function(v) case(!!arg := v, !!!with))
}

# The bad values of each kind of argument.
flag_cases <- function(arg) {
  cases_of(arg, list(word = "yes", number = 1, na = NA, empty = logical(), two = c(TRUE, FALSE), fun = isTRUE))
}
callback_cases <- function(arg) {
  cases_of(arg, list(value = TRUE, na = NA, empty = list(), two = list(identity, identity), word = "llm_is_transient",
    no_argument = function() 1, number = 2))
}
number_cases <- function(arg, out_of_range, with = list()) {
  cases_of(arg, c(list(text = "1", na = NA, na_real = NA_real_, empty = numeric(), two = c(1, 2), fun = max), out_of_range),
    with)
}
word_cases <- function(arg, unknown, two, with = list()) {
  cases_of(arg, list(number = 1, na = NA_character_, empty = character(), two = two, fun = toupper, unknown = unknown),
    with)
}
column_cases <- function(arg, unknown) {
  cases_of(arg, list(number = 1, na = NA, empty = character(), two = c("title", "abstract"), fun = mean,
    null = NULL, unknown = unknown))
}
api_key_cases <- function() {
  cases_of("api_key", list(number = 1, na = NA_character_, empty = character(), two = c("sk-a", "sk-b"),
    fun = get_api_key, blank = "", spaces = "  "))
}

# The data shapes that are refused, with the argument they are about.
bad_data_cases <- function() {
  recs <- fuzz_records()
  dup <- as.data.frame(recs)
  names(dup)[names(dup) == "author"] <- "title"
  numeric_title <- recs
  numeric_title$title <- c(1, 2)
  list_title <- recs
  list_title$title <- list("a", "b")
  blank <- recs
  blank$title <- NA
  blank$abstract <- ""
  not_utf8 <- recs
  not_utf8$abstract[2] <- "Caf\xe9"
  list(
    text = case(data = "refs.csv"), na = case(data = NA), null = case(data = NULL), fun = case(data = mean),
    no_rows = case(data = recs[0, ]), no_columns = case(data = data.frame()), list = case(data = as.list(recs)),
    matrix = case(data = as.matrix(recs)), duplicate_names = case(data = dup),
    numbers_for_text = case(data = numeric_title, .expect = "title"),
    list_column_text = case(data = list_title, .expect = "title"),
    all_blank = case(data = blank), not_utf8 = case(data = not_utf8, .expect = "abstract"),
    missing_ids = case(data = within(recs, studyid[2] <- NA), .expect = "studyid"),
    repeated_ids = case(data = within(recs, studyid[2] <- studyid[1]), .expect = "studyid"),
    list_column_ids = case(data = within(recs, studyid <- list(1, 2)), .expect = "studyid")
  )
}

# The data shapes that screen.
good_data_cases <- function() {
  recs <- fuzz_records()
  factors <- as.data.frame(recs)
  factors[c("studyid", "title", "abstract")] <- lapply(factors[c("studyid", "title", "abstract")], factor)
  list_column <- recs
  list_column$tags <- list(c("a", "b"), "c")
  grouped <- if (requireNamespace("dplyr", quietly = TRUE)) {
    dplyr::group_by(recs, human_code)
  } else {
    # what dplyr::group_by() makes, for a session without dplyr
    codes <- unique(recs$human_code)
    groups <- tibble::new_tibble(list(human_code = codes, .rows = lapply(codes, function(g) which(recs$human_code == g))),
      nrow = length(codes))
    structure(recs, class = c("grouped_df", class(recs)), groups = groups)
  }
  one <- recs[1, ]
  one_blank <- recs
  one_blank$abstract[2] <- NA
  out <- list(
    tibble = case(data = recs), data_frame = case(data = as.data.frame(recs)), grouped = case(data = grouped),
    factors = case(data = factors), list_column = case(data = list_column), one_record = case(data = one),
    one_blank_record = case(data = one_blank)
  )
  if (requireNamespace("data.table", quietly = TRUE)) {
    out$data_table <- case(data = data.table::as.data.table(recs))
  }
  out
}

# Cases every screening function shares (all but the provider-specific ones below).
common_bad <- function() {
  list(
    data = bad_data_cases(),
    prompt = c(word_cases("prompt", unknown = "", two = c(test_prompt, test_prompt)),
      list(list = case(prompt = list(test_prompt)), factor = case(prompt = factor(test_prompt)),
        not_utf8 = case(prompt = "Caf\xe9?"))),
    studyid = column_cases("studyid", "study_id"),
    title = column_cases("title", "titel"),
    abstract = column_cases("abstract", "abstracts"),
    api_url = word_cases("api_url", unknown = "ftp://example.org", two = c("http://a.org", "http://b.org")),
    role = word_cases("role", unknown = "usr", two = c("user", "user")),
    time_info = flag_cases("time_info"), token_info = flag_cases("token_info"), progress = flag_cases("progress"),
    decision_description = flag_cases("decision_description"), messages = flag_cases("messages"),
    force = flag_cases("force"), custom_model = flag_cases("custom_model"), overinclusive = flag_cases("overinclusive"),
    api_key = api_key_cases(),
    max_tries = number_cases("max_tries", list(zero = 0, negative = -1, fraction = 2.5, infinite = Inf)),
    max_seconds = number_cases("max_seconds", list(zero = 0, negative = -1, infinite = Inf)),
    is_transient = callback_cases("is_transient"), backoff = callback_cases("backoff"), after = callback_cases("after"),
    rpm = number_cases("rpm", list(zero = 0, negative = -10, infinite = Inf)),
    reps = number_cases("reps", list(zero = 0, fraction = 1.5, negative = -1, infinite = Inf)),
    seed_par = number_cases("seed_par", list(fraction = 1.5, huge = 2^60)),
    incl_cutoff_upper = number_cases("incl_cutoff_upper", list(above = 1.5, below = -0.1), with = list(reps = 2)),
    incl_cutoff_lower = c(number_cases("incl_cutoff_lower", list(above = 1.5, below = -0.1), with = list(reps = 2, incl_cutoff_upper = 0.5)),
      list(without_upper = case(incl_cutoff_lower = 0.2, reps = 2),
        above_upper = case(incl_cutoff_lower = 0.6, incl_cutoff_upper = 0.5, reps = 2))),
    # (An unnamed value reaches `...` only after every formal is given; check_extra_body() has
    # its own test for it.)
    "..." = dots_cases()
  )
}

# Providers B and C: the question's role can only be "user", and more than 10 repetitions need
# force.
common_bad_bc <- function() {
  bad <- common_bad()
  bad$role$system <- case(role = "system")
  bad$reps$over_force <- case(reps = 11)
  bad
}

# Tools in the provider's shape `tool`, and in the other provider's shape.
tools_cases <- function(tool, other_shape) {
  c(word_cases("tools", unknown = "not json [", two = c("[]", "[]")),
    list(unwrapped = case(tools = tool), empty_list = case(tools = list()), same_name = case(tools = list(tool, tool)),
      other_shape = case(tools = list(other_shape))))
}

# tool_choice (providers A and C) with custom tools, of which `two` are two valid values, plus the
# provider's `extra` cases.
tool_choice_cases <- function(two, extra) {
  c(word_cases("tool_choice", unknown = "sometimes", two = two, with = list(tools = list(fuzz_tool_chat))),
    list(without_tools = case(tool_choice = two[1]),
      other_function = case(tool_choice = fuzz_choice("other"), tools = list(fuzz_tool_chat))),
    extra)
}

dots_cases <- function() {
  list(function_value = case(stop = mean, .expect = "..."), twice = case(.dots = list(temperature = 0, temperature = 1)),
    environment = case(metadata = globalenv(), .expect = "..."), reserved = case(stream = TRUE, .expect = "..."))
}

common_good <- function(url) {
  list(
    data = good_data_cases(),
    prompt = list(two = case(prompt = c(test_prompt, "Is this a randomised trial?"))),
    studyid = list(generated = case(studyid = omit), bare_name = case(studyid = quote(studyid))),
    title = list(bare_name = case(title = quote(title))),
    abstract = list(bare_name = case(abstract = quote(abstract))),
    api_url = list(given = case(api_url = url)),
    time_info = list(false = case(time_info = FALSE)), token_info = list(false = case(token_info = FALSE)),
    progress = list(true = case(progress = TRUE)), decision_description = list(true = case(decision_description = TRUE)),
    messages = list(true = case(messages = TRUE)), force = list(true = case(force = TRUE)),
    custom_model = list(true = case(custom_model = TRUE)), overinclusive = list(false = case(overinclusive = FALSE)),
    api_key = list(other = case(api_key = "sk-fuzz-other")),
    max_tries = list(one = case(max_tries = 1), null = case(max_tries = NULL)),
    max_seconds = list(small = case(max_seconds = 30)),
    is_transient = list(null = case(is_transient = NULL), custom = case(is_transient = function(resp) FALSE)),
    backoff = list(custom = case(backoff = function(attempts) 0)),
    after = list(custom = case(after = function(resp) NULL)),
    rpm = list(per_second = case(rpm = 600)),
    reps = list(one = case(reps = 1), two = case(reps = 2)),
    seed_par = list(zero = case(seed_par = 0), null = case(seed_par = NULL)),
    incl_cutoff_upper = list(zero = case(incl_cutoff_upper = 0, reps = 2), one = case(incl_cutoff_upper = 1, reps = 2)),
    incl_cutoff_lower = list(zero = case(incl_cutoff_lower = 0, incl_cutoff_upper = 0.5, reps = 2),
      equal = case(incl_cutoff_lower = 0.5, incl_cutoff_upper = 0.5, reps = 2))
  )
}

fuzz_table_a <- function(fake) {
  bad <- c(common_bad(), list(
    model = word_cases("model", unknown = "gpt-9-nano", two = c("gpt-6-luna", "gpt-6-luna")),
    tools = tools_cases(fuzz_tool_chat, fuzz_tool_messages),
    tool_choice = tool_choice_cases(c("auto", "required"), list(
      other_allowed = case(tool_choice = list(type = "allowed_tools", allowed_tools = list(mode = "auto", tools = list(fuzz_choice("other")))),
        tools = list(fuzz_tool_chat)),
      unknown_shape = case(tool_choice = list(type = "tool", name = "decide"), tools = list(fuzz_tool_chat)))),
    top_p = number_cases("top_p", list(above = 1.5, below = -0.1, repeated = c(1, 1))),
    fine_tuned = flag_cases("fine_tuned"),
    reasoning_effort = c(word_cases("reasoning_effort", unknown = "hgh", two = c("none", "low")),
      list(not_for_model = case(reasoning_effort = "low"))),
    verbosity = word_cases("verbosity", unknown = "loud", two = c("low", "high"))
  ))
  bad[["..."]]$reserved_n <- case(n = 2, .expect = "...")
  # the safety limit of an older small model (provider A's small default has none)
  bad$reps$over_force <- case(reps = 11, model = "gpt-4o-mini")
  good <- c(common_good(fake$url), list(
    model = list(two = case(model = c("gpt-6-luna", "gpt-5.6-luna"), reasoning_effort = "none", rpm = c(600, 6000), reps = c(1, 2))),
    role = list(system = case(role = "system"), developer = case(role = "developer")),
    tools = list(list = case(tools = list(fuzz_tool_chat)), json = case(tools = jsonlite::toJSON(list(fuzz_tool_chat), auto_unbox = TRUE))),
    tool_choice = list(required = case(tool_choice = "required", tools = list(fuzz_tool_chat)),
      by_name = case(tool_choice = "decide", tools = list(fuzz_tool_chat)),
      as_list = case(tool_choice = fuzz_choice("decide"), tools = list(fuzz_tool_chat))),
    top_p = list(zero = case(top_p = 0), one = case(top_p = 1), two = case(top_p = c(0.5, 1))),
    fine_tuned = list(true = case(fine_tuned = TRUE)),
    reasoning_effort = list(none = case(reasoning_effort = "none")),
    verbosity = list(high = case(verbosity = "high")),
    "..." = list(temperature = case(temperature = 0), max_completion_tokens = case(max_completion_tokens = 200))
  ))
  list(fun = "tabscreen_a.tools", url = fake$url, bad = bad, good = good)
}

fuzz_table_b <- function(fake) {
  bad <- c(common_bad_bc(), list(
    model = word_cases("model", unknown = "claude-9", two = c("claude-haiku-5-5", "claude-haiku-5-5")),
    tools = tools_cases(fuzz_tool_messages, fuzz_tool_chat),
    max_tokens = number_cases("max_tokens", list(zero = 0, fraction = 1.5, negative = -1, huge = 2^31)),
    reasoning_effort = word_cases("reasoning_effort", unknown = "hgh", two = c("low", "high")),
    confidence = flag_cases("confidence")
  ))
  bad[["..."]] <- c(bad[["..."]], list(tool_choice = case(tool_choice = list(type = "any"), .expect = "..."),
    sampling = case(temperature = 0, .expect = "...")))
  good <- c(common_good(fake$url_b), list(
    model = list(two = case(model = c("claude-haiku-5-5", "claude-haiku-4-5"), reasoning_effort = "none")),
    role = list(user = case(role = "user")),
    tools = list(list = case(tools = list(fuzz_tool_messages)), json = case(tools = jsonlite::toJSON(list(fuzz_tool_messages), auto_unbox = TRUE))),
    max_tokens = list(small = case(max_tokens = 64)),
    reasoning_effort = list(none = case(reasoning_effort = "none"), high = case(reasoning_effort = "high")),
    confidence = list(true = case(confidence = TRUE)),
    "..." = list(metadata = case(metadata = list(user_id = "fuzz")))
  ))
  good$api_url$full <- case(api_url = paste0(fake$url_b, "/v1/messages"))
  # A custom model that does not think by default: the built-in tool is forced, as for a known one.
  good$custom_model$true <- case(custom_model = TRUE, model = "my-own-model")
  list(fun = "tabscreen_b", url = fake$url_b, bad = bad, good = good)
}

fuzz_table_c <- function(fake) {
  bad <- c(common_bad_bc(), list(
    model = word_cases("model", unknown = "mistral-huge", two = c("mistral-small-latest", "mistral-small-latest")),
    tools = tools_cases(fuzz_tool_chat, fuzz_tool_messages),
    tool_choice = tool_choice_cases(c("auto", "any"), list(by_name = case(tool_choice = "decide", tools = list(fuzz_tool_chat)))),
    top_p = number_cases("top_p", list(above = 1.5, zero = 0, repeated = c(1, 1))),
    reasoning_effort = word_cases("reasoning_effort", unknown = "low", two = c("none", "high")),
    confidence = flag_cases("confidence")
  ))
  bad$seed_par$negative <- case(seed_par = -1)
  bad[["..."]] <- c(bad[["..."]], list(unknown_field = case(foo = 1, .expect = "..."),
    random_seed = case(random_seed = 1, .expect = "...")))
  good <- c(common_good(fake$url_c), list(
    model = list(two = case(model = c("mistral-small-latest", "mistral-medium-latest"))),
    role = list(user = case(role = "user")),
    tools = list(list = case(tools = list(fuzz_tool_chat))),
    tool_choice = list(any = case(tool_choice = "any", tools = list(fuzz_tool_chat)),
      as_list = case(tool_choice = fuzz_choice("decide"), tools = list(fuzz_tool_chat))),
    top_p = list(small = case(top_p = 0.01), one = case(top_p = 1)),
    reasoning_effort = list(high = case(reasoning_effort = "high")),
    confidence = list(true = case(confidence = TRUE)),
    "..." = list(temperature = case(temperature = 0), max_tokens = case(max_tokens = 200))
  ))
  list(fun = "tabscreen_c", url = fake$url_c, bad = bad, good = good)
}

# A screening function on the fuzz records, quiet, with the case's arguments.
fuzz_call <- function(table, cs) {
  args <- list(data = fuzz_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", api_url = table$url, progress = FALSE, messages = FALSE)
  args[names(cs$args)] <- cs$args
  args <- args[!vapply(args, inherits, logical(1), "fuzz_omit")]
  do.call(table$fun, c(args, cs$dots))
}

# Why a bad case is not refused as it should be: NULL when it is.
refusal_problem <- function(cnd, expected, fun) {
  if (!inherits(cnd, "tabscreen_error_arg")) {
    return(if (is.null(cnd)) "no error" else paste0("an error of class ", class(cnd)[1], ": ", conditionMessage(cnd)))
  }
  if (!identical(cnd$arg, expected)) {
    return(sprintf("an error about `%s`, not `%s`", format(cnd$arg), expected))
  }
  # (the first line first: formatting the whole message again takes longer than the call)
  named <- function(text) grepl(paste0("`", expected, "`"), text, fixed = TRUE)
  if (!named(cnd$message) && !named(conditionMessage(cnd))) {
    return(paste0("a message that does not name `", expected, "`: ", conditionMessage(cnd)))
  }
  if (!identical(rlang::call_name(cnd$call), fun)) {
    return("an error not raised at the call")
  }
  NULL
}

# Runs every bad case of `table` (one expectation each, and one per argument that no request
# reached the provider) and returns how many there were.
expect_all_refused <- function(table, fake, call = fuzz_call) {
  n <- 0
  for (arg in names(table$bad)) {
    before <- fake$stats()$requests_total
    for (label in names(table$bad[[arg]])) {
      cs <- table$bad[[arg]][[label]]
      cnd <- tryCatch({
        call(table, cs)
        NULL
      }, error = identity)
      problem <- refusal_problem(cnd, cs$expect %||% arg, table$fun)
      key <- if (arg == "api_key" && is.character(cs$args$api_key)) Filter(function(k) !is.na(k) && nzchar(trimws(k)), cs$args$api_key)
      if (is.null(problem) && any(vapply(key, grepl, logical(1), conditionMessage(cnd), fixed = TRUE))) {
        problem <- "a message that shows the key"
      }
      expect(is.null(problem), sprintf("%s(%s = <%s>) gave %s", table$fun, arg, label, problem))
      n <- n + 1
    }
    expect(fake$stats()$requests_total == before, sprintf("%s: a bad value of `%s` sent a request", table$fun, arg))
  }
  n
}

# Runs every valid case of `table` and returns how many there were.
expect_all_screen <- function(table, fake, call = fuzz_call) {
  n <- 0
  for (arg in names(table$good)) {
    for (label in names(table$good[[arg]])) {
      before <- fake$stats()$requests_total
      res <- tryCatch(suppressMessages(withCallingHandlers(call(table, table$good[[arg]][[label]]),
        tabscreen_warning_deprecated = function(w) invokeRestart("muffleWarning"))), error = identity)
      problem <- if (!inherits(res, "llm")) {
        paste("did not screen:", if (inherits(res, "error")) conditionMessage(res) else class(res)[1])
      } else if (nrow(res$answer_data) == 0 || !is.null(res$error_data)) {
        paste("left failed requests:", paste(unique(res$error_data$decision_llm), collapse = "; "))
      } else if (fake$stats()$requests_total == before) {
        "sent no request"
      }
      expect(is.null(problem), sprintf("%s(%s = <%s>) %s", table$fun, arg, label, problem))
      n <- n + 1
    }
  }
  n
}

# The tables cover every argument, each with bad values and valid ones.
expect_covers <- function(table) {
  formals <- names(formals(get(table$fun)))
  expect_setequal(names(table$bad), formals)
  expect_setequal(names(table$good), formals)
}

test_that("every argument of the screening functions refuses bad values before any request, and takes valid ones", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-fuzz", PROVIDER_B_API_KEY = "sk-fuzz", PROVIDER_C_API_KEY = "sk-fuzz")
  fake <- local_fake_provider()
  # Valid values of one argument often make the same call twice: each must send its requests.
  withr::local_options(tabscreen.store_reuse = FALSE)
  counts <- list()
  for (make in list(fuzz_table_a, fuzz_table_b, fuzz_table_c)) {
    table <- make(fake)
    expect_covers(table)
    counts[[table$fun]] <- c(bad = expect_all_refused(table, fake), good = expect_all_screen(table, fake))
  }
  # (the tables are not emptied by mistake)
  expect_true(all(vapply(counts, function(x) x[["bad"]] > 150 && x[["good"]] > 30, logical(1))))
})

test_that("every argument of screen_errors() refuses bad values before any request, and takes valid ones", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-fuzz")
  fake <- local_fake_provider()
  # Without the store, each valid case re-sends the failed request instead of finding the answer
  # an earlier case stored.
  withr::local_options(tabscreen.store = FALSE)
  fake$configure(fail_matching = list(list(substring = fuzz_records()$title[2], kind = "500")))
  failed <- screen_a(fake, data = fuzz_records(), max_tries = 1)
  expect_equal(nrow(failed$error_data), 1)
  fake$configure(fail_matching = list())
  no_args <- failed
  attr(no_args, "arg_list") <- NULL

  bad <- list(
    object = list(text = case(object = "res"), na = case(object = NA), null = case(object = NULL), fun = case(object = mean),
      list = case(object = list()), unclassed = case(object = unclass(failed)), no_arg_list = case(object = no_args)),
    api_key = api_key_cases(),
    max_tries = number_cases("max_tries", list(zero = 0, negative = -1, fraction = 2.5, infinite = Inf)),
    max_seconds = number_cases("max_seconds", list(zero = 0, negative = -1, infinite = Inf)),
    is_transient = callback_cases("is_transient"), backoff = callback_cases("backoff"), after = callback_cases("after"),
    progress = flag_cases("progress"), messages = flag_cases("messages"),
    "..." = dots_cases()
  )
  good <- list(
    object = list(failed = case()),
    api_key = list(other = case(api_key = "sk-fuzz-other")),
    max_tries = list(one = case(max_tries = 1)), max_seconds = list(small = case(max_seconds = 30)),
    is_transient = list(custom = case(is_transient = function(resp) FALSE)),
    backoff = list(custom = case(backoff = function(attempts) 0)), after = list(custom = case(after = function(resp) NULL)),
    progress = list(true = case(progress = TRUE)), messages = list(true = case(messages = TRUE)),
    "..." = list(max_completion_tokens = case(max_completion_tokens = 300))
  )
  table <- list(fun = "screen_errors", bad = bad, good = good)
  call <- function(table, cs) {
    args <- list(object = failed)
    args[names(cs$args)] <- cs$args
    do.call("screen_errors", c(args, cs$dots))
  }
  expect_covers(table)
  counts <- c(bad = expect_all_refused(table, fake, call), good = expect_all_screen(table, fake, call))
  expect_true(counts[["bad"]] > 50 && counts[["good"]] >= 10)
})
