#' Plot a screening
#'
#' Three views of a screening result, as ggplot2 objects (print one to draw it, or add layers and
#' themes as usual). The package \pkg{ggplot2} must be installed.
#' * `type = "incl_p"`: the distribution of the inclusion probability `incl_p` (a screening with
#'   `reps > 1`), one bar per value, split by the human decision, with the result's cut-offs as
#'   dashed lines. Records without any answer are left out (see the caption).
#' * `type = "thresholds"`: recall and specificity against the inclusion cut-off, with their
#'   Wilson intervals as bands (from [screen_thresholds()]); needs the human decisions and
#'   `reps > 1`.
#' * `type = "price"`: the price (from `price_data`) and the prompt and completion tokens (from
#'   `answer_data` and `error_data`: failed answers that were billed count) by model.
#'
#' Several prompts, models or `top_p` values give one panel each. `ggplot2::autoplot()` does
#' the same as `plot()`.
#'
#' @param x A screening result of class `llm`; for `plot()` / `autoplot()` of a
#'   `tabscreen_thresholds` table, the table from [screen_thresholds()].
#' @param type The view: `"incl_p"` (the default), `"thresholds"` or `"price"`.
#' @param human_decision The column of human decisions (bare name or string). `NULL` uses the
#'   column `human_code` when the screening has one (for `"incl_p"` the bars are then not split
#'   when it has none).
#' @param ... Passed on to [screen_thresholds()] (`conf_level`) for `type = "thresholds"`.
#' @param object As `x`, for `autoplot()`.
#' @return A ggplot object.
#' @importFrom rlang .data
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' pilot <- filges2015_dat[c(1:10, 181:190), ]
#' res <- tabscreen_a.tools(
#'   pilot, prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 4, progress = FALSE, messages = FALSE
#' )
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   print(plot(res, human_decision = human_code))
#'   print(plot(res, type = "thresholds"))
#'   print(plot(res, type = "price"))
#' }
#' fake$stop()
#' options(old)
plot.llm <- function(x, type = c("incl_p", "thresholds", "price"), human_decision = NULL, ...) {
  call <- rlang::current_env()
  type <- if (missing(type)) "incl_p" else type
  check_choice(type, "type", c("incl_p", "thresholds", "price"), call = call)
  check_plot_package(call = call)
  human <- rlang::enquo(human_decision)
  switch(type,
    incl_p = plot_incl_p(x, human, call),
    thresholds = {
      table <- if (is.null(x$answer_data_aggregated)) x$answer_data else x$answer_data_aggregated
      if (rlang::quo_is_null(human) && "human_code" %in% names(table)) human <- rlang::quo("human_code")
      if (rlang::quo_is_null(human)) abort_plot_human(call)
      if (is.null(x$answer_data_aggregated)) abort_thresholds_reps(call)
      th <- screen_thresholds(x, !!human, ...)
      plot_thresholds(th)
    },
    price = plot_price(x, call)
  )
}

#' @rdname plot.llm
#' @exportS3Method ggplot2::autoplot
autoplot.llm <- function(object, type = c("incl_p", "thresholds", "price"), human_decision = NULL, ...) {
  type <- if (missing(type)) "incl_p" else type
  plot.llm(object, type = type, human_decision = {{ human_decision }}, ...)
}

#' @rdname plot.llm
#' @export
plot.tabscreen_thresholds <- function(x, ...) {
  check_plot_package(call = rlang::current_env())
  plot_thresholds(x)
}

#' @rdname plot.llm
#' @exportS3Method ggplot2::autoplot
autoplot.tabscreen_thresholds <- function(object, ...) {
  plot.tabscreen_thresholds(object, ...)
}

check_plot_package <- function(package = "ggplot2", call = rlang::caller_env()) {
  if (!rlang::is_installed(package)) {
    tabscreen_abort(c("Plotting needs the package {.pkg {package}}, which is not installed.",
      "i" = "Install it, e.g. with {.code install.packages(\"{package}\")}."),
      class = "tabscreen_error_package_missing", package = package, call = call)
  }
  invisible(TRUE)
}

abort_plot_human <- function(call) {
  abort_arg(c("{.arg human_decision} is needed for this plot: name the column of human decisions.",
    "i" = "E.g. {.code human_decision = human_code}."),
    class = "tabscreen_error_human_decision", arg = "human_decision", call = call)
}

# One label per group: the model, and the prompt and top_p when they vary.
group_labels <- function(df) {
  label <- as.character(df$model)
  if ("promptid" %in% names(df) && length(unique(df$promptid)) > 1) {
    label <- paste0(label, ", prompt ", df$promptid)
  }
  if ("top_p" %in% names(df) && length(unique(df$top_p)) > 1) {
    label <- paste0(label, ", top_p ", df$top_p)
  }
  if ("reps" %in% names(df) && length(unique(df$reps)) > 1) {
    label <- paste0(label, ", reps ", df$reps)
  }
  factor(label, levels = unique(label))
}

plot_incl_p <- function(x, human, call) {
  agg <- if (inherits(x, "llm")) x$answer_data_aggregated else if (inherits(x, "llm_agg_tbl")) x
  if (is.null(agg)) {
    abort_arg(c("{.arg x} has no inclusion probabilities to plot: it was screened with {.code reps = 1}.",
      "i" = "Screen with {.code reps > 1}, or use {.code type = \"price\"}."),
      class = "tabscreen_error_thresholds_reps", arg = "x", call = call)
  }
  if (rlang::quo_is_null(human) && "human_code" %in% names(agg)) human <- rlang::quo("human_code")
  column <- if (rlang::quo_is_null(human)) NULL else resolve_human_column(human, agg, call = call)
  decision <- if (is.null(column)) rep("All records", nrow(agg)) else {
    h <- human_values(agg[[column]], column, call = call)
    ifelse(is.na(h), "No human decision", ifelse(h == 1L, "Include", "Exclude"))
  }
  df <- data.frame(incl_p = agg$incl_p, human = decision, group = group_labels(agg), stringsAsFactors = FALSE)
  present <- intersect(c("Include", "Exclude", "No human decision", "All records"), df$human)
  df$human <- factor(df$human, levels = present)
  dropped <- sum(is.na(df$incl_p))
  df <- df[!is.na(df$incl_p), , drop = FALSE]
  cut <- unique(c(attr(agg, "incl_cutoff_upper"), attr(agg, "incl_cutoff_lower")))
  width <- incl_p_bar_width(df$incl_p)
  p <- ggplot2::ggplot(df, ggplot2::aes(x = .data$incl_p, fill = .data$human)) +
    ggplot2::geom_bar(width = width, position = ggplot2::position_dodge(preserve = "single")) +
    ggplot2::scale_x_continuous(breaks = seq(0, 1, by = 0.25)) +
    # The axis is the probabilities 0 to 1 and half a bar on either side, so that the bars at 0
    # and 1 are drawn whole, with ggplot2's usual margin beyond them.
    ggplot2::coord_cartesian(xlim = c(-width / 2, 1 + width / 2)) +
    ggplot2::labs(
      x = "Inclusion probability (incl_p)", y = "Records",
      fill = if (is.null(column)) NULL else paste0("Human decision (", column, ")"),
      title = "Inclusion probability by human decision",
      caption = if (dropped > 0) paste0(dropped, if (dropped == 1) " record" else " records", " without any answer left out") else NULL
    )
  if (length(cut) > 0) {
    p <- p + ggplot2::geom_vline(data = data.frame(cutoff = cut), ggplot2::aes(xintercept = .data$cutoff),
      linetype = "dashed")
  }
  if (length(levels(df$group)) > 1) {
    p <- p + ggplot2::facet_wrap(ggplot2::vars(.data$group))
  }
  p
}

# ggplot2's bars are 0.9 of the step between values wide (0.45 at reps = 2), which would stretch
# the axis to about -0.25 and 1.25; at most 0.1 keeps the axis close to the probabilities 0 to 1.
incl_p_bar_width <- function(x) {
  values <- sort(unique(x[!is.na(x)]))
  step <- if (length(values) > 1) min(diff(values)) else 1
  min(0.9 * step, 0.1)
}

plot_thresholds <- function(th) {
  groups <- group_labels(th)
  long <- rbind(
    data.frame(cutoff = th$cutoff, measure = "Recall", value = th$recall, lower = th$recall_lower,
      upper = th$recall_upper, group = groups, stringsAsFactors = FALSE),
    data.frame(cutoff = th$cutoff, measure = "Specificity", value = th$specificity,
      lower = th$specificity_lower, upper = th$specificity_upper, group = groups, stringsAsFactors = FALSE)
  )
  long$measure <- factor(long$measure, levels = c("Recall", "Specificity"))
  level <- attr(th, "conf_level") %||% 0.95
  p <- ggplot2::ggplot(long, ggplot2::aes(x = .data$cutoff, y = .data$value, colour = .data$measure)) +
    ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$lower, ymax = .data$upper, fill = .data$measure),
      alpha = 0.2, colour = NA) +
    ggplot2::geom_line() +
    ggplot2::geom_point() +
    ggplot2::scale_y_continuous(limits = c(0, 1)) +
    ggplot2::labs(
      x = "Inclusion cut-off (include iff incl_p >= cut-off)", y = "Proportion", colour = NULL, fill = NULL,
      title = "Recall and specificity by inclusion cut-off",
      caption = paste0("Bands: ", format(100 * level), "% Wilson score intervals")
    )
  if (length(levels(groups)) > 1) {
    p <- p + ggplot2::facet_wrap(ggplot2::vars(.data$group))
  }
  p
}

plot_price <- function(x, call) {
  if (!inherits(x, "llm")) {
    abort_arg("{.arg x} must be a screening result of class {.cls llm} for {.code type = \"price\"}.",
      class = "tabscreen_error_analyzer_object", arg = "x", call = call)
  }
  rows <- rbind_rows(x$answer_data, x$error_data)
  parts <- list()
  models <- unique(c(x$price_data$model, rows$model))
  if (!is.null(x$price_data) && nrow(x$price_data) > 0) {
    price <- vapply(models, function(m) sum(x$price_data$total_price_dollar[x$price_data$model == m]), numeric(1))
    parts$price <- data.frame(model = models, measure = "Price (USD)", value = unname(price))
  }
  for (col in c("prompt_tokens", "completion_tokens")) {
    if (col %in% names(rows)) {
      tokens <- vapply(models, function(m) sum(as.numeric(rows[[col]][rows$model == m]), na.rm = TRUE), numeric(1))
      label <- if (col == "prompt_tokens") "Prompt tokens" else "Completion tokens"
      parts[[col]] <- data.frame(model = models, measure = label, value = unname(tokens))
    }
  }
  if (length(parts) == 0) {
    abort_arg(c("{.arg x} has no price or token information to plot.",
      "i" = "Screen with {.code token_info = TRUE} (the default)."),
      class = "tabscreen_error_plot_price", arg = "x", call = call)
  }
  df <- do.call(rbind, unname(parts))
  df$measure <- factor(df$measure, levels = intersect(c("Price (USD)", "Prompt tokens", "Completion tokens"), df$measure))
  df$model <- factor(df$model, levels = models)
  df$label <- ifelse(df$measure == "Price (USD)", vapply(df$value, format_dollars, character(1)), format_tokens(df$value))
  one <- length(models) == 1
  ggplot2::ggplot(df, ggplot2::aes(x = .data$model, y = .data$value, fill = .data$model)) +
    ggplot2::geom_col(width = if (one) 0.5 else 0.9) +
    # Each bar carries its value: the one number a one-model plot has to tell.
    ggplot2::geom_text(ggplot2::aes(label = .data$label), vjust = -0.4, size = 3.5) +
    ggplot2::scale_y_continuous(labels = axis_numbers, expand = ggplot2::expansion(mult = c(0, 0.12))) +
    ggplot2::facet_wrap(ggplot2::vars(.data$measure), scales = "free_y") +
    ggplot2::labs(x = if (one) NULL else "Model", y = NULL,
      title = if (one) paste0("Price and tokens of ", models) else "Price and tokens by model") +
    ggplot2::theme(legend.position = "none")
}

# Axis labels in plain numbers: thousands separated by commas (600,000, not 6e+05) and small
# values (prices) in decimals without an exponent.
axis_numbers <- function(x) {
  out <- ifelse(abs(x) >= 1000,
    formatC(x, format = "f", digits = 0, big.mark = ","),
    format(signif(x, 3), scientific = FALSE, drop0trailing = TRUE, trim = TRUE))
  out[is.na(x)] <- NA_character_
  out
}
