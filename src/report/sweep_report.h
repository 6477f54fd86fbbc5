// The result of running several KV policies (and budgets) over one task,
// written the ways a person or a script reads it: the paper's Figure-4
// table (policies x budgets, one table per metric) as markdown, CSV, JSON,
// and an SVG plot of each metric against the budget. `h2o perplexity` and
// `h2o eval` fill one and call WriteSweepFiles; the writers know nothing of
// what the metrics mean.
#pragma once

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "report/svg_plot.h"

namespace h2o {

// A metric named "<name>_stderr" (lm-eval-harness's naming) is the
// standard error of the metric "<name>" of the same report: tables list it
// as a metric of its own, plots draw it as error bars on <name>'s points.
struct SweepMetric {
  std::string name;   // key in CSV/JSON and the markdown heading: "ppl", "acc_norm"
  std::string label;  // what it is, for headings and axes: "perplexity"
  int decimals = 4;   // digits after the point in the markdown table
};

// One run: a policy at a budget.
struct SweepRow {
  std::string policy;  // "h2o"
  // The budget label ("20%", "64"). Empty: a row not tied to a budget; in a
  // sweep that is the full cache, shown at every budget as the reference.
  std::string budget;
  std::string kv;              // the spec that ran, e.g. "h2o:heavy=10%,recent=10%"
  std::vector<double> values;  // one per SweepReport::metrics; NaN: not measured
};

struct SweepReport {
  std::string title;  // "perplexity of stories260K on 3 streams"
  std::vector<SweepMetric> metrics;
  std::vector<SweepRow> rows;
  // Anything else a reader should know (model, chunk, kv type); written
  // into the JSON only.
  nlohmann::json meta = nlohmann::json::object();
  // What a percentage budget is a percentage of, for the plots' x axis:
  // "each stream's tokens" (ResolveKvSpec's prompt length, as the command
  // resolves it).
  std::string budget_percent_of = "each sequence's tokens";
  // A metric to plot the others against as well (the KV memory, when KV
  // types are swept: quality against bytes, one curve per policy and type).
  std::optional<size_t> x_metric;

  // Budget labels in the order rows first use them; empty when no row has
  // one (then the report is a plain list of specs).
  std::vector<std::string> Budgets() const;
};

// "## title", then per metric "### name: label" and a table. With budgets:
// one row per policy (in first-use order), one column per budget, "-" where
// that pair did not run; budget-less rows repeat their value in every
// column. Without budgets: one row per kv spec, one column per metric.
std::string SweepMarkdown(const SweepReport& report);
// Header "policy,budget,kv,<metric names>", one line per row; values at
// full precision (shortest round-trip), NaN as an empty field; fields with
// commas or quotes quoted as RFC 4180.
std::string SweepCsv(const SweepReport& report);
// {"title", "metrics": [{"name", "label"}], "rows": [{"policy", "budget"
// (null when empty), "kv", "values": {name: value or null}}], "meta"}.
nlohmann::json SweepJson(const SweepReport& report);

// The index of the metric holding metric's standard error ("<name>_stderr"),
// if the report has one.
std::optional<size_t> StdErrMetric(const SweepReport& report, size_t metric);
// Whether the metric is another metric's standard error.
bool IsStdErrMetric(const SweepReport& report, size_t metric);

// The plot of one metric (index into report.metrics) against the budget:
// one series per policy that has budgets, its points in budget order (x =
// the budget's number: percent or tokens, whichever the rows use); a
// budget-less row (full) is a horizontal line across the budgets' range.
// The metric's standard error, when the report has one, gives each point
// its error bar. The y axis is log when the values span a factor of 4 or
// more (see the .cc). Rows whose budget is not a ParseKvBudget form are
// left out. Empty series when the report has no budgets.
LinePlot SweepPlot(const SweepReport& report, size_t metric);

// Appends the metric "kv_mib" (KV cache memory allocated, MiB), one value
// per row from kv_bytes (in row order), and makes it the x_metric.
void AddKvMemoryMetric(SweepReport& report, std::span<const size_t> kv_bytes);

// The plot of one metric against the metric x_metric of the same rows:
// one series per policy, its points in x order, the full cache (no budget)
// a point like any other; error bars as SweepPlot.
LinePlot SweepPlotAgainst(const SweepReport& report, size_t metric, size_t x_metric);

// Writes PREFIX.md, PREFIX.csv, PREFIX.json and, when the report has
// budgets, an SVG plot per metric that is not a standard error: PREFIX.svg
// for the first metric and PREFIX.<name>.svg for each other; with an
// x_metric, also PREFIX.<name>-vs-<x name>.svg for each other metric. Each file is
// written atomically (a temporary file renamed into place), so none is
// ever left half-written; `wrote` (when set) is called with each path
// after its file is in place.
Status WriteSweepFiles(const SweepReport& report, const std::string& prefix,
                       const std::function<void(const std::string& path)>& wrote = {});

}  // namespace h2o
