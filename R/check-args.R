# Argument checks of the screening functions. Each bad input is an error of class
# "tabscreen_error_arg" (plus a specific class), raised at the user's call before any request.

check_flag <- function(x, arg, call = rlang::caller_env()) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    abort_arg("{.arg {arg}} must be {.code TRUE} or {.code FALSE}, not {.obj_type_friendly {x}}.",
      class = "tabscreen_error_arg_flag", arg = arg, call = call)
  }
  invisible(x)
}

check_data <- function(data, call = rlang::caller_env()) {
  if (!is.data.frame(data)) {
    abort_arg(c("{.arg data} must be a data frame with one row per record, not {.obj_type_friendly {data}}.",
      "i" = "Read a RIS or CSV export into a data frame first."),
      class = "tabscreen_error_data", arg = "data", call = call)
  }
  if (nrow(data) == 0) {
    abort_arg("{.arg data} has no rows: there is nothing to screen.",
      class = "tabscreen_error_data", arg = "data", call = call)
  }
  if (anyDuplicated(names(data)) || any(is.na(names(data)) | names(data) == "")) {
    abort_arg("The columns of {.arg data} must have unique, non-empty names.",
      class = "tabscreen_error_data", arg = "data", call = call)
  }
  invisible(data)
}

# The column of `data` that an argument names: a bare column name (title = ti) or a string
# (title = "ti"), or a variable holding that string. Returns the column name.
resolve_column <- function(quo, data, arg, call = rlang::caller_env()) {
  found <- lookup_column(quo, data)
  if (!is.null(found$column)) return(found$column)
  abort_arg(
    c("{.arg {arg}} must name a column of {.arg data}; {.val {found$label}} is not one.",
      if (length(found$suggest) > 0) c("i" = "Did you mean {.or {.val {found$suggest}}}?"),
      "i" = "The columns are {.val {names(data)}}."),
    class = "tabscreen_error_data_column", arg = arg, call = call
  )
}

# What a column argument names in `data`: `column`, the name when it is one of `data`'s columns
# (else NULL), with `label` (how to call it in a message) and `suggest` (close column names).
lookup_column <- function(quo, data) {
  expr <- rlang::quo_get_expr(quo)
  if (rlang::is_symbol(expr) && rlang::as_string(expr) %in% names(data)) {
    return(list(column = rlang::as_string(expr)))
  }
  value <- if (rlang::is_string(expr)) {
    expr
  } else {
    tryCatch(rlang::eval_tidy(quo), error = function(e) NULL)
  }
  if (rlang::is_string(value) && value %in% names(data)) {
    return(list(column = value))
  }
  label <- if (rlang::is_symbol(expr)) rlang::as_string(expr) else if (rlang::is_string(value)) value else rlang::expr_deparse(expr)[1]
  list(column = NULL, label = label, suggest = closest_names(label, names(data)))
}

abort_missing_column_arg <- function(arg, data, call = rlang::caller_env()) {
  abort_arg(
    c("{.arg {arg}} is missing: name the column of {.arg data} that holds the {arg}s.",
      "i" = "E.g. {.code {arg} = {arg}} or {.code {arg} = \"{arg}\"}; the columns are {.val {names(data)}}."),
    class = "tabscreen_error_data_column", arg = arg, call = call
  )
}

# Titles and abstracts: character; factors and all-missing columns are converted, and so is text
# in an encoding other than UTF-8 (R/text.R). `ids` are the records' study ids, for messages.
text_column <- function(x, column, arg, ids, call = rlang::caller_env()) {
  if (is.factor(x) || (is.logical(x) && all(is.na(x)))) {
    x <- as.character(x)
  }
  if (!is.character(x)) {
    abort_arg("Column {.field {column}} ({.arg {arg}}) must hold text, not {.obj_type_friendly {x}}.",
      class = "tabscreen_error_data_column", arg = arg, call = call)
  }
  utf8_column(x, column, arg, ids, call)
}

# A character column of `data` as UTF-8, or an error naming the column, how many records hold text
# that is not UTF-8 and the first of them: by study id, or by row when `ids` is NULL.
utf8_column <- function(x, column, arg, ids, call) {
  problem <- if (is.null(ids)) {
    "Column {.field {column}} ({.arg {arg}}) has text that is not valid UTF-8 in {length(bad)} row{?s}: {head(bad, 5)}{if (length(bad) > 5) ', ...' else ''}."
  } else {
    "Column {.field {column}} ({.arg {arg}}) has text that is not valid UTF-8 in {length(bad)} record{?s}, study id{?s} {.val {head(ids[bad], 5)}}{if (length(bad) > 5) ', ...' else ''}."
  }
  target <- paste0("data$", if (identical(make.names(column), column)) column else paste0("`", column, "`"))
  utf8_or_abort(x, problem, target, class = "tabscreen_error_data", arg = arg, call = call)
}

check_studyid <- function(ids, column, call = rlang::caller_env()) {
  if (!is.atomic(ids) || is.list(ids)) {
    abort_arg("Column {.field {column}} ({.arg studyid}) must be a plain vector of ids.",
      class = "tabscreen_error_studyid", arg = "studyid", call = call)
  }
  if (anyNA(ids)) {
    bad <- which(is.na(ids))
    abort_arg(c("{.arg studyid} must not be missing: column {.field {column}} is {.code NA} in {cli::qty(length(bad))}row{?s} {head(bad, 10)}{if (length(bad) > 10) ', ...' else ''}.",
      "i" = "Give every record an id, or leave {.arg studyid} out to number the records 1 to {length(ids)}."),
      class = "tabscreen_error_studyid", arg = "studyid", call = call)
  }
  dup <- unique(ids[duplicated(ids)])
  if (length(dup) > 0) {
    abort_arg(c("{.arg studyid} must identify each record once; column {.field {column}} repeats {.val {head(as.character(dup), 10)}}.",
      "i" = "Remove the duplicated records, or leave {.arg studyid} out to number the records 1 to {length(ids)}."),
      class = "tabscreen_error_studyid", arg = "studyid", call = call)
  }
  invisible(ids)
}

check_prompt <- function(prompt, call = rlang::caller_env()) {
  if (!is.character(prompt) || length(prompt) == 0) {
    abort_arg("{.arg prompt} must be a character vector with one or more prompts, not {.obj_type_friendly {prompt}}.",
      class = "tabscreen_error_prompt", arg = "prompt", call = call)
  }
  prompt <- utf8_or_abort(prompt, "{.arg prompt} has text that is not valid UTF-8 in {length(bad)} prompt{?s} (number {paste(bad, collapse = ', ')}).",
    target = "prompt", class = "tabscreen_error_prompt", arg = "prompt", call = call)
  empty <- which(is.na(prompt) | !nzchar(trimws(prompt)))
  if (length(empty) > 0) {
    abort_arg("{.arg prompt} must not be empty or missing: {cli::qty(length(empty))}prompt{?s} {empty} {cli::qty(length(empty))}{?is/are}.",
      class = "tabscreen_error_prompt", arg = "prompt", call = call)
  }
  dup <- which(duplicated(prompt))
  if (length(dup) > 0) {
    abort_arg(c("{.arg prompt} holds the same prompt more than once ({cli::qty(length(dup))}prompt{?s} {dup}).",
      "i" = "Give each prompt once; use {.arg reps} to ask the same question several times."),
      class = "tabscreen_error_prompt", arg = "prompt", call = call)
  }
  prompt
}

check_model_names <- function(model, call = rlang::caller_env()) {
  if (!is.character(model) || length(model) == 0 || anyNA(model) || any(!nzchar(trimws(model)))) {
    abort_arg("{.arg model} must be a character vector of one or more model names.",
      class = c("tabscreen_error_model_name", "tabscreen_error_model"), arg = "model", call = call)
  }
  dup <- unique(model[duplicated(model)])
  if (length(dup) > 0) {
    abort_arg(c("{.arg model} names {.val {dup}} more than once.",
      "i" = "Give each model once; {.arg reps} sets how often each one is asked."),
      class = c("tabscreen_error_model_duplicated", "tabscreen_error_model"), arg = "model", call = call)
  }
  invisible(model)
}

# reps and rpm: one value for every model, or one per model. Returns one value per model.
check_per_model <- function(x, arg, models, whole, call = rlang::caller_env()) {
  n <- length(models)
  what <- if (whole) "whole numbers of at least 1" else "positive numbers"
  if (!is.numeric(x) || length(x) == 0 || anyNA(x) || any(!is.finite(x))) {
    abort_arg("{.arg {arg}} must hold {what}, not {.obj_type_friendly {x}}.",
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  if (length(x) != 1 && length(x) != n) {
    abort_arg(c("{.arg {arg}} has {length(x)} values for {n} model{?s}.",
      "i" = "Give one value for all models, or one per model in the order of {.arg model}."),
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  bad <- if (whole) x < 1 | x != round(x) else x <= 0
  if (any(bad)) {
    abort_arg("{.arg {arg}} must hold {what}; {.val {x[bad]}} {cli::qty(sum(bad))}{?is/are} not.",
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  rep_len(as.numeric(x), n)
}

# top_p: one or more values in [0, 1], or in (0, 1] where the protocol excludes 0 (provider C).
check_top_p <- function(top_p, exclude_zero = FALSE, call = rlang::caller_env()) {
  low_ok <- if (is.numeric(top_p)) (if (exclude_zero) top_p > 0 else top_p >= 0) else FALSE
  if (!is.numeric(top_p) || length(top_p) == 0 || anyNA(top_p) || any(!low_ok | top_p > 1)) {
    range <- if (exclude_zero) "above 0 and at most 1" else "between 0 and 1"
    abort_arg("{.arg top_p} must hold numbers {range}.",
      class = "tabscreen_error_top_p", arg = "top_p", call = call)
  }
  if (anyDuplicated(top_p)) {
    abort_arg("{.arg top_p} holds the same value more than once.",
      class = "tabscreen_error_top_p", arg = "top_p", call = call)
  }
  invisible(as.numeric(top_p))
}

# role: the roles the provider's protocol gives the question's message (A: user, system,
# developer; B: user only, the Messages protocol has no system role; C: user only, its protocol
# wants the last message from the user).
check_role <- function(role, roles = c("user", "system", "developer"), call = rlang::caller_env()) {
  if (!rlang::is_string(role)) {
    abort_arg("{.arg role} must be a single string, one of {.val {roles}}.",
      class = "tabscreen_error_role", arg = "role", call = call)
  }
  if (!role %in% roles) {
    abort_arg(c("{.arg role} must be one of {.val {roles}}, not {.val {role}}.",
      "i" = "The question is sent as one message with this role; {.val user} is the usual choice."),
      class = "tabscreen_error_role", arg = "role", call = call)
  }
  invisible(role)
}

check_api_url <- function(api_url, call = rlang::caller_env()) {
  if (rlang::is_string(api_url) && looks_like_model(api_url)) {
    abort_arg(
      c("{.arg api_url} is {.val {api_url}}, which looks like a model name, not a URL.",
        "i" = "{.arg api_url} is the 6th argument and {.arg model} the 7th: name the model, e.g. {.code model = \"{api_url}\"}."),
      class = c("tabscreen_error_api_url_model", "tabscreen_error_api_url"), arg = "api_url", call = call)
  }
  if (!rlang::is_string(api_url) || !grepl("^https?://[^/\\s]+", api_url, perl = TRUE)) {
    abort_arg("{.arg api_url} must be a single http(s) URL, e.g. {.url https://api.openai.com/v1/chat/completions}.",
      class = "tabscreen_error_api_url", arg = "api_url", call = call)
  }
  invisible(api_url)
}

# A string given as api_url that is a model's name (a model given by position, where api_url comes
# sixth): a known model, or one word with a digit or a dash that is neither a URL nor a host name.
looks_like_model <- function(x) {
  if (grepl("://", x, fixed = TRUE)) return(FALSE)
  host <- "^(localhost|[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,})(:[0-9]+)?(/.*)?$"
  x %in% tabscreen::model_prizes$model ||
    (grepl("^[A-Za-z][A-Za-z0-9._:-]*$", x) && grepl("[0-9-]", x) && !grepl(host, x))
}

check_choice <- function(x, arg, values, call = rlang::caller_env()) {
  if (!rlang::is_string(x) || !x %in% values) {
    suggest <- if (rlang::is_string(x)) closest_names(x, values, n = 1) else character()
    abort_arg(
      c("{.arg {arg}} must be one of {.or {.val {values}}}{if (rlang::is_string(x)) paste0(', not \"', x, '\"') else ''}.",
        if (length(suggest) > 0) c("i" = "Did you mean {.val {suggest}}?")),
      class = paste0("tabscreen_error_", arg), arg = arg, call = call
    )
  }
  invisible(x)
}

# NULL or one positive number (whole when `whole`).
check_positive_or_null <- function(x, arg, whole, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(invisible(x))
  }
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) && x > 0 && (!whole || x == round(x))
  if (!ok) {
    hint <- if (arg == "max_tries") c("i" = "Use {.code max_tries = 1} to send each request only once.") else NULL
    abort_arg(c("{.arg {arg}} must be {.code NULL} or a positive {if (whole) 'whole ' else ''}number.", hint),
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  invisible(x)
}

check_seed <- function(seed_par, call = rlang::caller_env()) {
  if (is.null(seed_par)) {
    return(invisible(NULL))
  }
  if (!is.numeric(seed_par) || length(seed_par) != 1 || is.na(seed_par) || seed_par != round(seed_par) ||
    abs(seed_par) > 2^53) {
    abort_arg("{.arg seed_par} must be {.code NULL} or a single whole number.",
      class = "tabscreen_error_seed_par", arg = "seed_par", call = call)
  }
  invisible(seed_par)
}

check_callback <- function(f, arg, call = rlang::caller_env()) {
  if (is.null(f)) {
    return(invisible(NULL))
  }
  if (!is.function(f)) {
    abort_arg(c("{.arg {arg}} must be a function or {.code NULL}, not {.obj_type_friendly {f}}.",
      "i" = "Pass the function itself, e.g. {.code {arg} = my_function}, not the result of calling it."),
      class = "tabscreen_error_callback", arg = arg, call = call)
  }
  fmls <- names(formals(f))
  if (!is.primitive(f) && length(fmls) == 0) {
    abort_arg("{.arg {arg}} must be a function of one argument.",
      class = "tabscreen_error_callback", arg = arg, call = call)
  }
  invisible(f)
}

check_cutoffs <- function(upper, lower, call = rlang::caller_env()) {
  for (arg in c("incl_cutoff_upper", "incl_cutoff_lower")) {
    x <- if (arg == "incl_cutoff_upper") upper else lower
    if (!is.null(x) && (!is.numeric(x) || length(x) != 1 || is.na(x) || x < 0 || x > 1)) {
      abort_arg("{.arg {arg}} must be {.code NULL} or a single number between 0 and 1.",
        class = "tabscreen_error_cutoff", arg = arg, call = call)
    }
  }
  if (!is.null(lower) && is.null(upper)) {
    abort_arg(c("{.arg incl_cutoff_lower} is given without {.arg incl_cutoff_upper}.",
      "i" = "Records with an inclusion probability between the two cut-offs are flagged {.val Check}; set both."),
      class = "tabscreen_error_cutoff", arg = "incl_cutoff_lower", call = call)
  }
  if (!is.null(lower) && lower > upper) {
    abort_arg("{.arg incl_cutoff_lower} ({lower}) must not exceed {.arg incl_cutoff_upper} ({upper}).",
      class = "tabscreen_error_cutoff", arg = "incl_cutoff_lower", call = call)
  }
  invisible()
}

# The effective cut-offs of spec section 3 (screen.EffectiveCutoffs in the Go core): upper 0.1 by
# default, lower = upper by default, and the lower one is ignored while the upper one is 0.1 or
# below.
effective_cutoffs <- function(upper, lower) {
  cut <- plan_core(list(cutoffs = list(incl_cutoff_upper = upper, incl_cutoff_lower = lower)))$cutoffs
  list(upper = cut$upper, lower = cut$lower)
}

# tools: NULL, a list of function tools in the provider's format, or their JSON text. The
# check_tools*() functions return list(tools, tool_choice) as values for the run options.

# `chosen`, the functions a tool_choice names, must be among the tools' `names`.
check_tool_choice_names <- function(chosen, names, modes, call) {
  unknown <- setdiff(chosen, names)
  if (length(unknown) == 0) {
    return(invisible())
  }
  suggest <- closest_names(unknown[1], c(names, modes), n = 1)
  abort_arg(
    c("{.arg tool_choice} names {.val {unknown}}, which {?is/are} not among the {.arg tools} ({.val {names}}).",
      if (length(suggest) > 0) c("i" = "Did you mean {.val {suggest}}?"),
      "i" = "The provider refuses every request whose {.field tool_choice} names a function it was not given.",
      "i" = "Other values: {.val {modes}}."),
    class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call
  )
}

# The function tools of a chat-completions provider (A, C), parsed, with the provider's tool_choice
# words; NULL when no tools are given, when no tool_choice may be given either.
parse_chat_tools <- function(tools, tool_choice, provider, call) {
  if (is.null(tools)) {
    check_no_tool_choice(tool_choice, call = call)
    return(NULL)
  }
  parsed <- provider_tools(tools, provider, call = call)
  c(parsed, list(modes = unlist(provider_info(provider)$tool_choice_words)))
}

check_no_tool_choice <- function(tool_choice, call) {
  if (!is.null(tool_choice)) {
    abort_arg(c("{.arg tool_choice} is given without {.arg tools}.",
      "i" = "The built-in tool is always called; set {.arg tool_choice} only with custom {.arg tools}."),
      class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
  }
  invisible()
}

# The two shapes of a function tool: the Chat Completions one (providers A and C) and the Messages
# one (provider B). `name` reads a tool's name (NA when the tool is not of the shape).
tool_format <- list(
  chat = list(
    shape = "each {.code list(type = \"function\", `function` = list(name = ..., description = ..., parameters = ...))}",
    lacks = "{.code function$name}",
    name = function(t) {
      fun <- if (is.list(t)) t[["function"]] else NULL
      if (is.list(fun) && rlang::is_string(fun$name)) fun$name else NA_character_
    }
  ),
  messages = list(
    shape = "each {.code list(name = ..., description = ..., input_schema = list(type = \"object\", properties = ...))}",
    lacks = "{.code name} and {.code input_schema}",
    name = function(t) {
      ok <- is.list(t) && rlang::is_string(t$name) && is.list(t$input_schema)
      if (ok) t$name else NA_character_
    }
  )
)

# A provider's tools, parsed in the shape its registry entry names (`tool_format`).
provider_tools <- function(tools, provider, call) {
  parse_tools(tools, tool_format[[provider_info(provider)$tool_format]], call = call)
}

# A list of tools, or their JSON text, in one of the shapes of `tool_format`. Returns the value for
# the run options and the tools' names.
parse_tools <- function(tools, format, call) {
  shape <- c("i" = paste0("Give a list of tools, ", format$shape, ", or their JSON text."))
  parsed <- tools
  if (is.character(tools)) {
    if (length(tools) != 1 || is.na(tools)) {
      abort_arg(c("{.arg tools} as JSON must be a single string.", shape),
        class = "tabscreen_error_tools", arg = "tools", call = call)
    }
    parsed <- tryCatch(jsonlite::fromJSON(tools, simplifyVector = FALSE), error = function(e) NULL)
    if (is.null(parsed)) {
      abort_arg(c("{.arg tools} is not valid JSON.", shape), class = "tabscreen_error_tools", arg = "tools", call = call)
    }
  } else if (!is.list(tools)) {
    abort_arg(c("{.arg tools} must be a list, not {.obj_type_friendly {tools}}.", shape),
      class = "tabscreen_error_tools", arg = "tools", call = call)
  }
  if (length(parsed) == 0 || !is.null(names(parsed))) {
    abort_arg(c("{.arg tools} must be an unnamed list of one or more tools.",
      if (!is.null(names(parsed))) c("i" = "A single tool must be wrapped: {.code tools = list(my_tool)}."), shape),
      class = "tabscreen_error_tools", arg = "tools", call = call)
  }
  names <- vapply(parsed, format$name, character(1))
  if (anyNA(names)) {
    abort_arg(c(paste0("{cli::qty(sum(is.na(names)))}Tool{?s} {which(is.na(names))} of {.arg tools} {cli::qty(sum(is.na(names)))}{?has/have} no ", format$lacks, "."), shape),
      class = "tabscreen_error_tools", arg = "tools", call = call)
  }
  # The three providers refuse every request with a tool name outside this pattern or used twice,
  # and a forced or chosen tool is found by its name.
  bad_name <- names[!grepl("^[a-zA-Z0-9_-]{1,64}$", names)]
  if (length(bad_name) > 0) {
    abort_arg(c("The tool name{?s} {.val {bad_name}} of {.arg tools} {?is/are} not allowed.",
      "i" = "A tool name has 1 to 64 letters, digits, underscores or hyphens."),
      class = "tabscreen_error_tools", arg = "tools", call = call)
  }
  dup <- unique(names[duplicated(names)])
  if (length(dup) > 0) {
    abort_arg(c("{.arg tools} has more than one tool named {.val {dup}}.",
      "i" = "Give each tool its own name: the model calls a tool by its name."),
      class = "tabscreen_error_tools", arg = "tools", call = call)
  }
  # JSON text parsed without simplification keeps its arrays; an R list needs help with length-one ones
  value <- if (is.character(tools)) parsed else json_arrays(tools, c("required", "enum"))
  list(value = value, names = names)
}

# JSON Schema keywords whose value is always an array: keep them arrays when jsonlite unboxes
# length-one vectors (required = "decision_llm" must stay ["decision_llm"]).
json_arrays <- function(x, keys) {
  if (!is.list(x)) {
    return(x)
  }
  nms <- names(x)
  for (i in seq_along(x)) {
    if (!is.null(nms) && nms[i] %in% keys && is.atomic(x[[i]]) && !inherits(x[[i]], "AsIs")) {
      x[[i]] <- I(x[[i]])
    } else if (is.list(x[[i]])) {
      x[[i]] <- json_arrays(x[[i]], keys)
    }
  }
  x
}

# Arguments in `...` go into the request body. They must be named, once each, and must not set the
# fields the package sets itself.
check_extra_body <- function(dots, reserved, call = rlang::caller_env()) {
  if (length(dots) == 0) {
    return(structure(list(), names = character()))
  }
  nms <- names(dots)
  if (is.null(nms) || any(is.na(nms) | nms == "")) {
    abort_arg(c("Every argument in {.arg ...} must be named: they become fields of the request body.",
      "i" = "E.g. {.code temperature = 0} or {.code max_completion_tokens = 50}."),
      class = "tabscreen_error_dots", arg = "...", call = call)
  }
  dup <- unique(nms[duplicated(nms)])
  if (length(dup) > 0) {
    abort_arg("{.arg ...} sets {.field {dup}} more than once.", class = "tabscreen_error_dots", arg = "...", call = call)
  }
  not_value <- nms[!vapply(dots, is_json_value, logical(1))]
  if (length(not_value) > 0) {
    abort_arg(c("{.arg ...} sets {.field {not_value}} to something that cannot be sent in a request body.",
      "i" = "Give values: numbers, strings, logicals, or lists of them (not functions or other objects)."),
      class = "tabscreen_error_dots", arg = "...", call = call)
  }
  clash <- intersect(nms, names(reserved))
  if (length(clash) > 0) {
    hints <- unname(reserved[clash])
    abort_arg(c("{.arg ...} must not set {.field {clash}}: the package sets {?it/them}.",
      stats::setNames(hints, rep("i", length(hints)))),
      class = "tabscreen_error_dots", arg = "...", call = call)
  }
  dots
}

# Whether `x` can be written as JSON: NULL, an atomic vector other than raw, or a list of such.
is_json_value <- function(x) {
  is.null(x) || (is.atomic(x) && !is.raw(x)) ||
    (is.list(x) && all(vapply(x, is_json_value, logical(1))))
}

# The TRUE/FALSE arguments of a screening function, read from its frame.
check_flags <- function(env, flags) {
  for (arg in flags) {
    check_flag(get(arg, envir = env), arg, call = env)
  }
  invisible()
}

# The arguments in `...` of a screening function (or of screen_errors()) for a provider: named,
# not fields the package sets, and, for a provider whose request schema is closed (the registry's
# request_fields), fields of that schema: its API refuses every request with another.
check_dots <- function(provider, dots, call = rlang::caller_env()) {
  dots <- check_extra_body(dots, reserved_body(provider), call = call)
  fields <- unlist(provider_info(provider)$request_fields)
  unknown <- setdiff(names(dots), fields)
  if (length(fields) > 0 && length(unknown) > 0) {
    known_hints <- provider_r(provider)$dots_hints
    hints <- unname(known_hints[intersect(unknown, names(known_hints))])
    allowed <- setdiff(fields, names(reserved_body(provider)))
    label <- provider_info(provider)$label
    abort_arg(c("{.arg ...} sets {.field {unknown}}, which {?is not a field/are not fields} of {label}'s request.",
      "x" = "Its API answers every request with an unknown field with HTTP 422.",
      stats::setNames(hints, rep("i", length(hints))),
      "i" = "The fields that may be set through {.arg ...} are {.field {allowed}}."),
      class = "tabscreen_error_dots", arg = "...", call = call)
  }
  dots
}

# Request fields every provider's body gets from the package, with where to set them instead.
reserved_body_common <- c(
  model = "Use the {.arg model} argument.",
  messages = "The question is built from {.arg prompt}, {.arg title} and {.arg abstract}.",
  tools = "Use the {.arg tools} argument.",
  stream = "Streaming is not supported."
)

# An argument renamed from `old` to `new`, its old name taken through `...`: returns the value of
# `old` when it was given (with a deprecation warning), else `value`, the new argument's. Anything
# else in `...` is an error, as rlang::check_dots_empty() would raise, since `...` exists only for
# the old name.
renamed_arg <- function(dots, old, new, value, new_given, call = rlang::caller_env()) {
  names <- rlang::names2(dots)
  other <- names[names != old]
  if (length(other) > 0) {
    shown <- ifelse(nzchar(other), other, "an unnamed value")
    abort_arg(c("{.arg ...} must be empty: {.fn {rlang::call_name(rlang::frame_call(call))}} got {shown}.",
      "i" = "Did you misspell an argument name?"),
      class = "tabscreen_error_dots", arg = "...", call = call)
  }
  if (!old %in% names) return(value)
  if (new_given) {
    abort_arg("Give {.arg {new}} only, not also {.arg {old}} (its old name).",
      class = paste0("tabscreen_error_", new), arg = new, call = call)
  }
  tabscreen_warn(c("{.arg {old}} is deprecated in {.fn {rlang::call_name(rlang::frame_call(call))}}; use {.arg {new}} instead.",
    "i" = "{.code {old} = {format(dots[[old]])}} is taken as {.code {new} = {format(dots[[old]])}}."),
    class = "tabscreen_warning_deprecated")
  dots[[old]]
}
