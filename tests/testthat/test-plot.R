# plot() / autoplot() of screenings: the ggplot objects' layers, data and labels (no images).

test_that("type = 'incl_p': bars of incl_p by human decision, the cut-offs as dashed lines", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plot")
  fake <- local_fake_provider(seed = 41, decisions = list("1" = 0.5, "0" = 0.5))
  res <- screen_a(fake, reps = 4, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.25)
  p <- plot(res, human_decision = human_code)
  expect_s3_class(p, "ggplot")
  expect_s3_class(p$layers[[1]]$geom, "GeomBar")
  expect_s3_class(p$layers[[2]]$geom, "GeomVline")
  expect_equal(p$labels$x, "Inclusion probability (incl_p)")
  expect_equal(p$labels$y, "Records")
  expect_equal(p$labels$fill, "Human decision (human_code)")
  agg <- res$answer_data_aggregated
  bars <- ggplot2::layer_data(p, 1)
  # group 1 = Include, group 2 = Exclude; bars in order of incl_p
  for (g in 1:2) {
    h <- if (g == 1) 1L else 0L
    counts <- bars$count[bars$group == g][order(bars$xmin[bars$group == g])]
    expect_equal(counts, as.vector(table(agg$incl_p[agg$human_code == h])))
  }
  expect_equal(sum(bars$count), nrow(agg))
  expect_equal(sort(ggplot2::layer_data(p, 2)$xintercept), c(0.25, 0.5))
  # the default human_decision = NULL finds human_code; autoplot() is the same plot
  expect_equal(ggplot2::layer_data(plot(res), 1)$count, bars$count)
  expect_equal(ggplot2::layer_data(ggplot2::autoplot(res, human_decision = human_code), 1)$count, bars$count)
})

test_that("type = 'incl_p': the x axis spans the probabilities 0 to 1 and the outer bars, no further", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plot")
  fake <- local_fake_provider(seed = 45, decisions = list("1" = 0.5, "0" = 0.5))
  for (reps in c(2, 4)) {
    res <- screen_a(fake, reps = reps)
    expect_true(any(res$answer_data_aggregated$incl_p %in% c(0, 1)))
    built <- ggplot2::ggplot_build(plot(res))
    axis <- built$layout$panel_params[[1]]
    breaks <- axis$x$breaks[!is.na(axis$x$breaks)]
    expect_equal(range(breaks), c(0, 1))
    # half a bar (at most 0.05) and ggplot2's 5% margin beyond 0 and 1
    expect_true(axis$x.range[1] >= -0.11 && axis$x.range[2] <= 1.11)
    # the bars at 0 and 1 are drawn whole, inside the margin
    bars <- built$data[[1]]
    expect_true(min(bars$xmin) > axis$x.range[1] && max(bars$xmax) < axis$x.range[2])
  }
})

test_that("type = 'incl_p': one panel per model, records without answers left out and named", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-plot")
  fake <- local_fake_provider(seed = 42, decisions = list("1" = 0.5, "0" = 0.5))
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[2], kind = "500")))
  res <- screen_b(fake, model = c("claude-haiku-5-5", "claude-sonnet-5-5"), reps = 2, max_tries = 1)
  p <- plot(res, "incl_p", human_decision = human_code)
  built <- ggplot2::ggplot_build(p)
  expect_s3_class(p$facet, "FacetWrap")
  expect_equal(nrow(built$layout$layout), 2)
  expect_equal(sum(built$data[[1]]$count), 2 * (nrow(recs) - 1))
  expect_equal(p$labels$caption, "2 records without any answer left out")
  # without a human column the bars are not split
  res$answer_data_aggregated$human_code <- NULL
  unsplit <- plot(res)
  expect_null(unsplit$labels$fill)
  expect_equal(sum(ggplot2::layer_data(unsplit, 1)$count), 2 * (nrow(recs) - 1))
})

test_that("type = 'thresholds': recall and specificity against the cut-off, with Wilson bands", {
  withr::local_envvar(PROVIDER_C_API_KEY = "test-plot")
  fake <- local_fake_provider(seed = 43, decisions = list("1" = 0.5, "0" = 0.5))
  res <- screen_c(fake, reps = 5)
  p <- plot(res, type = "thresholds", human_decision = human_code)
  th <- screen_thresholds(res, human_code)
  expect_equal(vapply(p$layers, function(l) class(l$geom)[1], character(1)), c("GeomRibbon", "GeomLine", "GeomPoint"))
  expect_equal(p$labels$x, "Inclusion cut-off (include iff incl_p >= cut-off)")
  expect_equal(p$labels$y, "Proportion")
  expect_equal(p$labels$caption, "Bands: 95% Wilson score intervals")
  line <- ggplot2::layer_data(p, 2)
  expect_equal(line$y[line$group == 1], th$recall)
  expect_equal(line$y[line$group == 2], th$specificity)
  expect_equal(line$x[line$group == 1], th$cutoff)
  ribbon <- ggplot2::layer_data(p, 1)
  expect_equal(ribbon$ymin[ribbon$group == 1], th$recall_lower)
  expect_equal(ribbon$ymax[ribbon$group == 2], th$specificity_upper)
  # the table plots the same, with plot() and autoplot(); conf_level goes through
  expect_equal(ggplot2::layer_data(plot(th), 2)$y, line$y)
  expect_equal(ggplot2::layer_data(ggplot2::autoplot(th), 2)$y, line$y)
  p90 <- plot(res, type = "thresholds", conf_level = 0.9)
  expect_equal(p90$labels$caption, "Bands: 90% Wilson score intervals")
  expect_equal(ggplot2::layer_data(p90, 1)$ymin[1:nrow(th)], screen_thresholds(res, conf_level = 0.9)$recall_lower)
})

test_that("type = 'price': price and tokens by model", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plot")
  fake <- local_fake_provider(seed = 44)
  res <- screen_a(fake, model = c("gpt-6-luna", "gpt-4o-mini"))
  p <- plot(res, type = "price")
  expect_s3_class(p$layers[[1]]$geom, "GeomCol")
  expect_equal(p$labels$title, "Price and tokens by model")
  bars <- ggplot2::layer_data(p, 1)
  built <- ggplot2::ggplot_build(p)
  panels <- as.character(built$layout$layout$measure)
  expect_equal(panels, c("Price (USD)", "Prompt tokens", "Completion tokens"))
  ad <- res$answer_data
  for (i in 1:2) {
    m <- c("gpt-6-luna", "gpt-4o-mini")[i]
    expect_equal(bars$y[bars$PANEL == 1 & bars$x == i], sum(res$price_data$total_price_dollar[res$price_data$model == m]))
    expect_equal(bars$y[bars$PANEL == 2 & bars$x == i], sum(ad$prompt_tokens[ad$model == m]))
    expect_equal(bars$y[bars$PANEL == 3 & bars$x == i], sum(ad$completion_tokens[ad$model == m]))
  }
  expect_equal(ggplot2::layer_data(ggplot2::autoplot(res, type = "price"), 1)$y, bars$y)
  no_tokens <- screen_a(fake, token_info = FALSE)
  expect_error(plot(no_tokens, type = "price"), class = "tabscreen_error_plot_price")
})

test_that("plots fail with classed errors", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plot")
  fake <- local_fake_provider(seed = 45)
  once <- screen_a(fake)
  expect_error(plot(once), class = "tabscreen_error_thresholds_reps")
  expect_error(plot(once, type = "thresholds"), class = "tabscreen_error_thresholds_reps")
  cnd <- expect_error(plot(once, type = "bars"), class = "tabscreen_error_type")
  expect_equal(cnd$arg, "type")
  twice <- screen_a(fake, reps = 2)
  twice$answer_data_aggregated$human_code <- NULL
  cnd <- expect_error(plot(twice, type = "thresholds"), class = "tabscreen_error_human_decision")
  expect_equal(cnd$arg, "human_decision")
  # what a session without ggplot2 meets
  cnd <- expect_error(tabscreen:::check_plot_package("tabscreenNoSuchPackage"), class = "tabscreen_error_package_missing")
  expect_s3_class(cnd, "tabscreen_error")
  expect_match(conditionMessage(cnd), "tabscreenNoSuchPackage", fixed = TRUE)
})
