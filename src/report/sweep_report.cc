#include "report/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "core/atomic_file.h"
#include "kv/kv_budget.h"

namespace h2o {
namespace {

std::vector<std::string> Policies(const SweepReport& report) {
  std::vector<std::string> policies;
  for (const SweepRow& row : report.rows) {
    if (std::find(policies.begin(), policies.end(), row.policy) == policies.end()) {
      policies.push_back(row.policy);
    }
  }
  return policies;
}

std::string FormatValue(double v, int decimals) {
  return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, decimals);
}

double ValueAt(const SweepRow& row, size_t metric) {
  return metric < row.values.size() ? row.values[metric] : std::nan("");
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::vector<std::string> SweepReport::Budgets() const {
  std::vector<std::string> budgets;
  for (const SweepRow& row : rows) {
    if (!row.budget.empty() &&
        std::find(budgets.begin(), budgets.end(), row.budget) == budgets.end()) {
      budgets.push_back(row.budget);
    }
  }
  return budgets;
}

std::string SweepMarkdown(const SweepReport& report) {
  std::string md = fmt::format("## {}\n", report.title);
  const std::vector<std::string> budgets = report.Budgets();
  if (budgets.empty()) {
    md += "\n| kv |";
    std::string rule = "|---|";
    for (const SweepMetric& m : report.metrics) {
      md += fmt::format(" {} |", m.name);
      rule += "---:|";
    }
    md.append("\n").append(rule).append("\n");
    for (const SweepRow& row : report.rows) {
      md += fmt::format("| {} |", row.kv);
      for (size_t m = 0; m < report.metrics.size(); ++m) {
        md += fmt::format(" {} |", FormatValue(ValueAt(row, m), report.metrics[m].decimals));
      }
      md += "\n";
    }
    return md;
  }
  const std::vector<std::string> policies = Policies(report);
  for (size_t m = 0; m < report.metrics.size(); ++m) {
    const SweepMetric& metric = report.metrics[m];
    md += fmt::format("\n### {}: {}\n\n| policy |", metric.name, metric.label);
    std::string rule = "|---|";
    for (const std::string& b : budgets) {
      md += fmt::format(" {} |", b);
      rule += "---:|";
    }
    md.append("\n").append(rule).append("\n");
    for (const std::string& policy : policies) {
      md += fmt::format("| {} |", policy);
      for (const std::string& budget : budgets) {
        double value = std::nan("");
        for (const SweepRow& row : report.rows) {
          if (row.policy == policy && (row.budget == budget || row.budget.empty())) {
            value = ValueAt(row, m);
          }
        }
        md += fmt::format(" {} |", FormatValue(value, metric.decimals));
      }
      md += "\n";
    }
  }
  return md;
}

std::string SweepCsv(const SweepReport& report) {
  std::string csv = "policy,budget,kv";
  for (const SweepMetric& m : report.metrics) csv.append(",").append(CsvField(m.name));
  csv += "\n";
  for (const SweepRow& row : report.rows) {
    csv += fmt::format("{},{},{}", CsvField(row.policy), CsvField(row.budget), CsvField(row.kv));
    for (size_t m = 0; m < report.metrics.size(); ++m) {
      const double v = ValueAt(row, m);
      csv += std::isnan(v) ? "," : fmt::format(",{}", v);
    }
    csv += "\n";
  }
  return csv;
}

nlohmann::json SweepJson(const SweepReport& report) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const SweepMetric& m : report.metrics) {
    metrics.push_back({{"name", m.name}, {"label", m.label}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& row : report.rows) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t m = 0; m < report.metrics.size(); ++m) {
      const double v = ValueAt(row, m);
      values[report.metrics[m].name] = std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
    }
    rows.push_back(
        {{"policy", row.policy},
         {"budget", row.budget.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.budget)},
         {"kv", row.kv},
         {"values", std::move(values)}});
  }
  return {{"title", report.title}, {"metrics", metrics}, {"rows", rows}, {"meta", report.meta}};
}

std::optional<size_t> StdErrMetric(const SweepReport& report, size_t metric) {
  const std::string name = report.metrics.at(metric).name + "_stderr";
  for (size_t m = 0; m < report.metrics.size(); ++m) {
    if (report.metrics[m].name == name) return m;
  }
  return std::nullopt;
}

bool IsStdErrMetric(const SweepReport& report, size_t metric) {
  for (size_t m = 0; m < report.metrics.size(); ++m) {
    if (StdErrMetric(report, m) == metric) return true;
  }
  return false;
}

namespace {

// Whether the plot's values call for a log y axis. Perplexity is exp(mean
// NLL): on a log axis equal heights are equal NLL differences, and a
// policy that collapses (h2only, 8x the others' perplexity) no longer
// squeezes h2o, local, sink and full into the bottom eighth of a linear
// axis, where their few-percent differences vanish. The test is on the
// data, not the metric's name, so any metric whose values span a factor of
// 4 or more gets the same treatment; below that a linear axis (from 0, or
// zoomed and marked as such by the renderer) reads more directly. A metric
// with a value <= 0 (KL of full is 0) stays linear: log cannot show it.
bool NeedsLogAxis(const LinePlot& plot) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (const PlotSeries& s : plot.series) {
    for (const double y : s.y) {
      if (std::isnan(y)) continue;
      if (!(y > 0) || !std::isfinite(y)) return false;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  }
  return lo <= hi && hi >= 4 * lo;
}

}  // namespace

LinePlot SweepPlot(const SweepReport& report, size_t metric) {
  LinePlot plot;
  plot.title = fmt::format("{}: {}", report.title, report.metrics.at(metric).name);
  plot.y_label = report.metrics[metric].label;
  const std::optional<size_t> stderr_metric = StdErrMetric(report, metric);
  if (stderr_metric) plot.y_label += " (bars: \u00b11 standard error)";
  // Each budgeted row's x, value and standard error; the order of the
  // points follows x.
  std::map<std::string, std::vector<std::array<double, 3>>> points;
  bool percent = false;
  double x_min = HUGE_VAL, x_max = -HUGE_VAL;
  for (const SweepRow& row : report.rows) {
    if (row.budget.empty()) continue;
    const Result<KvBudget> budget = ParseKvBudget(row.budget);
    if (!budget.ok()) continue;
    percent = budget.value().percent;
    x_min = std::min(x_min, budget.value().value);
    x_max = std::max(x_max, budget.value().value);
    points[row.policy].push_back({budget.value().value, ValueAt(row, metric),
                                  stderr_metric ? ValueAt(row, *stderr_metric) : std::nan("")});
  }
  plot.x_label = percent ? fmt::format("KV cache budget (% of {})", report.budget_percent_of)
                         : "KV cache budget (tokens)";
  if (x_min > x_max) return plot;
  for (const std::string& policy : Policies(report)) {
    PlotSeries series{policy, {}, {}};
    if (auto it = points.find(policy); it != points.end()) {
      std::sort(it->second.begin(), it->second.end());
      for (const auto& [x, y, err] : it->second) {
        series.x.push_back(x);
        series.y.push_back(y);
        series.y_err.push_back(err);
      }
    } else {
      for (const SweepRow& row : report.rows) {
        if (row.policy == policy && row.budget.empty()) {
          const double err = stderr_metric ? ValueAt(row, *stderr_metric) : std::nan("");
          series.x = {x_min, x_max};
          series.y = {ValueAt(row, metric), ValueAt(row, metric)};
          series.y_err = {err, err};
        }
      }
    }
    plot.series.push_back(std::move(series));
  }
  plot.log_y = NeedsLogAxis(plot);
  return plot;
}

void AddKvMemoryMetric(SweepReport& report, std::span<const size_t> kv_bytes) {
  H2O_CHECK(kv_bytes.size() == report.rows.size());
  report.x_metric = report.metrics.size();
  report.metrics.push_back({"kv_mib", "KV cache memory allocated (MiB)", 3});
  for (size_t r = 0; r < report.rows.size(); ++r) {
    report.rows[r].values.push_back(static_cast<double>(kv_bytes[r]) / (1 << 20));
  }
}

LinePlot SweepPlotAgainst(const SweepReport& report, size_t metric, size_t x_metric) {
  LinePlot plot;
  plot.title = fmt::format("{}: {} against {}", report.title, report.metrics.at(metric).name,
                           report.metrics.at(x_metric).name);
  plot.y_label = report.metrics[metric].label;
  plot.x_label = report.metrics[x_metric].label;
  const std::optional<size_t> stderr_metric = StdErrMetric(report, metric);
  if (stderr_metric) plot.y_label += " (bars: \u00b11 standard error)";
  for (const std::string& policy : Policies(report)) {
    std::vector<std::array<double, 3>> points;
    for (const SweepRow& row : report.rows) {
      if (row.policy != policy) continue;
      points.push_back({ValueAt(row, x_metric), ValueAt(row, metric),
                        stderr_metric ? ValueAt(row, *stderr_metric) : std::nan("")});
    }
    std::sort(points.begin(), points.end());
    PlotSeries series{policy, {}, {}};
    for (const auto& [x, y, err] : points) {
      series.x.push_back(x);
      series.y.push_back(y);
      series.y_err.push_back(err);
    }
    plot.series.push_back(std::move(series));
  }
  plot.log_y = NeedsLogAxis(plot);
  return plot;
}

Status WriteSweepFiles(const SweepReport& report, const std::string& prefix,
                       const std::function<void(const std::string& path)>& wrote) {
  const auto write = [&wrote](const std::string& path, std::string_view contents) {
    H2O_RETURN_IF_ERROR(WriteFileAtomically(path, contents));
    if (wrote) wrote(path);
    return Status::Ok();
  };
  H2O_RETURN_IF_ERROR(write(prefix + ".md", SweepMarkdown(report)));
  H2O_RETURN_IF_ERROR(write(prefix + ".csv", SweepCsv(report)));
  H2O_RETURN_IF_ERROR(write(prefix + ".json", SweepJson(report).dump(2) + "\n"));
  if (report.x_metric) {
    const size_t x = *report.x_metric;
    for (size_t m = 0; m < report.metrics.size(); ++m) {
      if (m == x || IsStdErrMetric(report, m)) continue;
      const std::string path = fmt::format("{}.{}-vs-{}.svg", prefix, report.metrics[m].name,
                                           report.metrics[x].name);
      H2O_RETURN_IF_ERROR(write(path, RenderLinePlotSvg(SweepPlotAgainst(report, m, x))));
    }
  }
  if (report.Budgets().empty()) return Status::Ok();
  for (size_t m = 0; m < report.metrics.size(); ++m) {
    if (report.x_metric == m) continue;  // memory against the budget says little
    if (IsStdErrMetric(report, m)) continue;  // error bars on its metric's plot
    const std::string path =
        m == 0 ? prefix + ".svg" : fmt::format("{}.{}.svg", prefix, report.metrics[m].name);
    H2O_RETURN_IF_ERROR(write(path, RenderLinePlotSvg(SweepPlot(report, m))));
  }
  return Status::Ok();
}

}  // namespace h2o
