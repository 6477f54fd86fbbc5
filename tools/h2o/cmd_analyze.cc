// h2o analyze: the H2O paper's Figure-2 attention statistics of a model on
// a text (sparsity, power law of accumulated attention, heavy-hitter
// overlap), as analysis.json and SVG plots in --out DIR plus a summary.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/attention_analysis.h"
#include "analysis/attention_report.h"
#include "cli_common.h"
#include "cli_log.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "report/progress.h"

namespace h2o::cli {
namespace {

struct AnalyzeFlags {
  ModelFlags model;
  std::string text_file;
  std::string token_file;
  std::string out_dir;
  std::string heavy = "10%";   // the paper's 20% budget: half heavy hitters,
  std::string recent = "10%";  // half recent window
  double sparsity_ratio = 0.01;
  double fit_ranks = 0.5;
  bool json = false;
};

// Text: every document (split at <|endoftext|>) with its BOS, one after
// another. Token file: every line's ids, one after another.
Result<std::vector<int32_t>> ReadInput(const AnalyzeFlags& f, const Model& model) {
  std::vector<int32_t> ids;
  if (!f.text_file.empty()) {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f.text_file));
    H2O_ASSIGN_OR_RETURN(Tokenizer tokenizer, LoadTokenizer(model));
    for (const std::string& doc : SplitDocuments(text)) {
      const std::vector<int32_t> doc_ids = tokenizer.Encode(doc, /*add_special=*/true);
      ids.insert(ids.end(), doc_ids.begin(), doc_ids.end());
    }
  } else {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f.token_file));
    int line_no = 0;
    for (size_t begin = 0; begin < text.size(); ++line_no) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      H2O_ASSIGN_OR_RETURN(std::vector<int32_t> line_ids,
                           ParseTokenIds(text.substr(begin, end - begin),
                                         fmt::format("{}:{}", f.token_file, line_no + 1)));
      ids.insert(ids.end(), line_ids.begin(), line_ids.end());
      begin = end + 1;
    }
  }
  const std::string& input = f.text_file.empty() ? f.token_file : f.text_file;
  if (ids.empty()) return Status::Error(fmt::format("{}: no tokens", input));
  return ids;
}

// Fails before the model runs when --out cannot be (or become) a
// directory; the directory itself is made only when the report is ready,
// so a failed run leaves nothing behind.
Status CheckOutDir(const std::string& dir) {
  std::filesystem::path path(dir);
  if (!path.has_filename()) path = path.parent_path();  // "out/"
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Status::Ok();
  if (std::filesystem::exists(path, ec)) {
    return Status::Error(fmt::format("--out {}: exists and is not a directory", dir));
  }
  const std::filesystem::path parent = path.parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    return Status::Error(
        fmt::format("--out {}: cannot create it, {} is not a directory", dir, parent.string()));
  }
  return Status::Ok();
}

Status MakeOutDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (ec)
    return Status::Error(fmt::format("--out {}: cannot create directory ({})", dir, ec.message()));
  return Status::Ok();
}

void PrintSummary(const AttentionAnalysis& a, const nlohmann::json& report, const AnalyzeFlags& f) {
  std::printf("%s: %d layers, %d heads (%d KV heads); %d tokens of %s\n",
              f.model.model_path.c_str(), a.n_layer, a.n_head, a.n_head_kv, a.n_tokens,
              (f.text_file.empty() ? f.token_file : f.text_file).c_str());
  std::printf("%5s  %9s  %7s  %6s  %8s\n", "layer", "sparsity", "alpha", "r^2", "overlap");
  for (size_t l = 0; l < a.layers.size(); ++l) {
    const LayerAnalysis& layer = a.layers[l];
    std::printf("%5zu  %9.4f  %7.3f  %6.3f  %8.4f%s\n", l, layer.sparsity, layer.fit.alpha,
                layer.fit.r_squared, layer.overlap,
                layer.window > 0 ? fmt::format("  (window {})", layer.window).c_str() : "");
  }
  const nlohmann::json& mean = report["mean"];
  auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : NAN; };
  std::printf("%5s  %9.4f  %7.3f  %6.3f  %8.4f  (%s)\n", "mean", mean["sparsity"].get<double>(),
              number(mean["alpha"]), number(mean["r_squared"]), mean["heavy_overlap"].get<double>(),
              mean["over"].get<std::string>().c_str());
  std::printf("sparsity: fraction of attention entries below %g%% of their row's max\n",
              100 * a.sparsity_ratio);
  std::printf(
      "alpha: power-law exponent of accumulated attention vs rank, fitted on ranks 1..%d (the "
      "head, --fit-ranks %g) evenly in log rank; r^2 of that fit\n",
      a.layers.empty() ? 0 : a.layers[0].fit.n_points, a.fit_ranks);
  std::printf(
      "overlap: heavy hitters an h2o:heavy=%d,recent=%d cache kept vs the top %d by "
      "full-sequence attention (chance %.4f)\n",
      a.heavy, a.recent, a.heavy, report["heavy_hitters"]["chance_overlap"].get<double>());
}

int RunAnalyze(const AnalyzeFlags& f) {
  if (Status s = CheckOutDir(f.out_dir); !s.ok()) return Fail(s);
  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  auto ids = ReadInput(f, model);
  if (!ids.ok()) return Fail(ids.status());

  const int64_t input_tokens = static_cast<int64_t>(ids->size());
  const auto n_ctx = static_cast<int32_t>(ContextSize(f.model, model));
  if (input_tokens > n_ctx) {
    ids->resize(static_cast<size_t>(n_ctx));
    if (!Quiet()) {
      std::fprintf(stderr,
                   "h2o analyze: analyzing the first %d of %lld tokens (the context; "
                   "raise it with -c)\n",
                   n_ctx, static_cast<long long>(input_tokens));
    }
  }
  const int64_t n_tokens = static_cast<int64_t>(ids->size());

  ModelFlags session_flags = f.model;
  session_flags.kv_spec = "full";
  auto session_options = MakeSessionOptions(session_flags, {n_tokens});
  if (!session_options.ok()) return Fail(session_options.status());
  auto spec = ParseKvSpec(fmt::format("h2o:heavy={},recent={}", f.heavy, f.recent));
  if (!spec.ok()) return Fail(spec.status().WithContext("--heavy/--recent"));
  auto local = ResolveKvSpec(*spec, n_tokens);
  if (!local.ok()) return Fail(local.status().WithContext("--heavy/--recent"));

  AttentionAnalysisOptions options;
  options.session = *session_options;
  options.local = *local;
  options.sparsity_ratio = f.sparsity_ratio;
  options.fit_ranks = f.fit_ranks;
  ProgressBar progress("analyze", 2 * n_tokens, ProgressBar::Enabled(Quiet()));
  options.on_tokens = [&progress](int64_t n) { progress.Advance(n); };
  auto analysis = AnalyzeAttention(model, *ids, options);
  progress.Finish();
  if (!analysis.ok()) return Fail(analysis.status());

  const nlohmann::json report = AnalysisJson(
      *analysis,
      {f.model.model_path, f.text_file.empty() ? f.token_file : f.text_file, input_tokens});
  const std::filesystem::path dir(f.out_dir);
  const std::pair<std::string, std::string> files[] = {
      {(dir / "analysis.json").string(), report.dump(2) + "\n"},
      {(dir / "sparsity.svg").string(), SparsitySvg(*analysis)},
      {(dir / "power_law.svg").string(), PowerLawSvg(*analysis)},
      {(dir / "heavy_overlap.svg").string(), HeavyOverlapSvg(*analysis)},
  };
  if (Status s = MakeOutDir(f.out_dir); !s.ok()) return Fail(s);
  for (const auto& [path, contents] : files) {
    if (Status s = WriteFileAtomically(path, contents); !s.ok()) return Fail(s);
    Note("wrote {}", path);
  }
  if (f.json) {
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    PrintSummary(*analysis, report, f);
  }
  return 0;
}

}  // namespace

Command RegisterAnalyze(CLI::App& app) {
  auto f = std::make_shared<AnalyzeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "attention statistics of the H2O paper's Figure 2 (sparsity, power law of accumulated "
      "attention, heavy-hitter overlap) as JSON and SVG plots");
  f->model.chunk = 256;
  cmd->add_option("-m,--model", f->model.model_path, "GGUF model file")->required();
  auto* text = cmd->add_option("-f,--file", f->text_file,
                               "text file, - for standard input (documents separated by "
                               "<|endoftext|> are joined, each with its BOS)");
  auto* ids = cmd->add_option("--token-file", f->token_file,
                              "token-id file: ids separated by spaces, lines joined");
  text->excludes(ids);
  cmd->add_option("--out", f->out_dir,
                  "directory for analysis.json and the SVG plots (created "
                  "if missing; its parent must exist)")
      ->required();
  cmd->add_option("-c,--ctx-size", f->model.n_ctx,
                  "most tokens analyzed (default: the model's context)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-t,--threads", f->model.n_threads, "threads (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--chunk", f->model.chunk,
                  "tokens per forward pass of the full-cache run (0: all at once); the "
                  "probabilities do not depend on it")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddKvTypeOptions(*cmd, f->model.kv_type, f->model.kv_type_k, f->model.kv_type_v);
  cmd->add_option("--heavy", f->heavy,
                  "heavy-hitter set size k for the overlap: tokens or a percentage of the "
                  "length")
      ->capture_default_str();
  cmd->add_option("--recent", f->recent,
                  "recent window of the h2o cache whose heavy hitters are compared")
      ->capture_default_str();
  cmd->add_option("--sparsity-threshold", f->sparsity_ratio,
                  "an entry is sparse when below this fraction of its row's max")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--fit-ranks", f->fit_ranks,
                  "the power laws are fitted on ranks 1..F x tokens, the head, weighted evenly "
                  "in log rank (the tail falls off faster: late tokens have few queries)")
      ->check(CLI::Range(0.0, 1.0))
      ->check([](const std::string& v) -> std::string {
        return std::strtod(v.c_str(), nullptr) > 0.0 ? "" : "the fit needs a fraction above 0";
      })
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print the JSON report on stdout instead of the summary");
  RequireEither(*cmd, "--file", "--token-file", "an input (-f TEXT or --token-file IDS)");
  return {cmd, [f] { return RunAnalyze(*f); }};
}

}  // namespace h2o::cli
