// h2o perplexity: per-token negative log-likelihood of text or token streams.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "eval/perplexity.h"

namespace h2o::cli {
namespace {

struct PerplexityFlags {
  ModelFlags model;
  std::string text_file;
  std::vector<std::string> token_files;
  bool json = false;
};

struct Stream {
  std::string name;
  std::vector<int32_t> ids;
};

// Each token file is one stream per non-empty line; text files are split
// into documents at <|endoftext|>.
Result<std::vector<Stream>> ReadStreams(const PerplexityFlags& f, const Model& model) {
  std::vector<Stream> streams;
  if (!f.text_file.empty()) {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f.text_file));
    H2O_ASSIGN_OR_RETURN(Tokenizer tokenizer, LoadTokenizer(model));
    int index = 0;
    for (const std::string& doc : SplitDocuments(text)) {
      streams.push_back({fmt::format("{}#{}", f.text_file, ++index), tokenizer.Encode(doc, true)});
    }
  }
  for (const std::string& path : f.token_files) {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
    const std::string base = std::filesystem::path(path).filename().string();
    std::vector<std::string> lines;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      lines.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
    int n_nonempty = 0;
    for (const std::string& line : lines) n_nonempty += line.find_first_not_of(" \t\r") != std::string::npos;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{}:{}", path, i + 1);
      H2O_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ParseTokenIds(lines[i], where));
      streams.push_back({n_nonempty > 1 ? fmt::format("{}:{}", base, i + 1) : base, std::move(ids)});
    }
  }
  if (streams.empty()) return Status::Error("no token streams in the input");
  return streams;
}

int RunPerplexity(const PerplexityFlags& f) {
  auto spec = ParseKvSpec(f.model.kv_spec);
  if (!spec.ok()) return Fail(spec.status().WithContext("--kv"));
  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  auto streams = ReadStreams(f, model);
  if (!streams.ok()) return Fail(streams.status());
  size_t longest = 0;
  for (const Stream& s : *streams) longest = std::max(longest, s.ids.size());

  // Percent budgets refer to each stream's own length, so each stream gets
  // its own session then; otherwise one session serves them all.
  const bool per_stream_budget = KvSpecUsesPercent(*spec);
  std::unique_ptr<Session> session;
  auto make_session = [&](int64_t stream_len) -> Status {
    H2O_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(f.model, stream_len));
    if (options.n_ctx == 0) {
      options.n_ctx = std::max<int32_t>(model.hparams().n_ctx_train, longest);
    }
    H2O_ASSIGN_OR_RETURN(session, Session::Create(model, options));
    return Status::Ok();
  };
  if (!per_stream_budget) {
    if (Status s = make_session(static_cast<int64_t>(longest)); !s.ok()) return Fail(s);
  }

  nlohmann::json per_stream = nlohmann::json::array();
  NllResult total;
  size_t kv_bytes = 0;
  for (const Stream& s : *streams) {
    if (per_stream_budget) {
      if (Status st = make_session(static_cast<int64_t>(s.ids.size())); !st.ok()) {
        return Fail(st.WithContext(s.name));
      }
    }
    auto r = ScoreStream(*session, s.ids);
    if (!r.ok()) return Fail(r.status().WithContext(s.name));
    kv_bytes = std::max(kv_bytes, session->cache().AllocatedBytes());
    total.tokens += r->tokens;
    total.nll_sum += r->nll_sum;
    nlohmann::json row = {{"stream", s.name},
                          {"tokens", r->tokens},
                          {"nll_sum", r->nll_sum},
                          {"ppl", r->perplexity()}};
    if (per_stream_budget) row["kv"] = session->kv_plan().Describe();
    per_stream.push_back(std::move(row));
    if (!f.json) {
      std::printf("%-24s tokens %6lld  nll_sum %12.5f  ppl %8.4f\n", s.name.c_str(),
                  static_cast<long long>(r->tokens), r->nll_sum, r->perplexity());
    }
  }
  if (!f.model.kv_dump_path.empty()) {
    if (Status st = WriteKvDump(session->cache(), f.model.kv_dump_path); !st.ok()) return Fail(st);
  }
  const size_t full_bytes = FullKvBytes(session->cache(), static_cast<int64_t>(longest));
  const KvPlan& plan = session->kv_plan();
  if (f.json) {
    nlohmann::json out = {{"model", f.model.model_path},
                          {"kv", f.model.kv_spec},
                          {"policy", plan.policy},
                          {"heavy", plan.heavy},
                          {"recent", plan.recent},
                          {"sinks", plan.sinks},
                          {"k", plan.k},
                          {"budget", per_stream_budget ? nlohmann::json(nullptr) : nlohmann::json(plan.budget)},
                          {"pos_shift", f.model.kv_pos_shift},
                          {"chunk", session->max_chunk()},
                          {"kv_type", std::string(TraitsOf(session->cache().config().type).name)},
                          {"tokens", total.tokens},
                          {"nll_sum", total.nll_sum},
                          {"ppl", total.perplexity()},
                          {"kv_bytes", kv_bytes},
                          {"kv_bytes_full", full_bytes},
                          {"per_stream", per_stream}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("total: %lld tokens, nll_sum %.5f, mean nll %.5f, ppl %.4f\n",
                static_cast<long long>(total.tokens), total.nll_sum, total.mean(),
                total.perplexity());
    std::fprintf(stderr, "%s\n", DescribeKvMemory(*session, static_cast<int64_t>(longest)).c_str());
  }
  return 0;
}

}  // namespace

Command RegisterPerplexity(CLI::App& app) {
  auto f = std::make_shared<PerplexityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity", "negative log-likelihood of every next token, one stream at a time");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/1);
  auto* text = cmd->add_option("-f,--file", f->text_file,
                               "text file; documents separated by <|endoftext|>");
  auto* ids = cmd->add_option("--token-file", f->token_files,
                              "token-id file(s): one stream per line, ids separated by spaces");
  text->excludes(ids);
  cmd->add_flag("--json", f->json, "print JSON (per-stream and total nll_sum, tokens, ppl)");
  cmd->callback([cmd] {
    if (cmd->count("--file") + cmd->count("--token-file") == 0) {
      throw CLI::RequiredError("an input (-f TEXT or --token-file IDS)");
    }
  });
  return {cmd, [f] { return RunPerplexity(*f); }};
}

}  // namespace h2o::cli
