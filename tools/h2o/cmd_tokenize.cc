// h2o tokenize: text -> token ids, one line per document.
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "commands.h"

namespace h2o::cli {
namespace {

struct TokenizeFlags {
  std::string model_path;
  std::string file;
  std::string prompt;
};

int RunTokenize(const TokenizeFlags& f) {
  auto model = Model::Load(f.model_path);
  if (!model.ok()) return Fail(model.status());
  auto tokenizer = LoadTokenizer(**model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  std::string text = f.prompt;
  if (!f.file.empty()) {
    auto read = ReadTextFile(f.file);
    if (!read.ok()) return Fail(read.status());
    text = std::move(read).value();
  }
  for (const std::string& doc : SplitDocuments(text)) {
    const std::vector<int32_t> ids = tokenizer->Encode(doc, /*add_bos=*/true);
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

}  // namespace

Command RegisterTokenize(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize", "print token ids: one line per <|endoftext|>-separated document, BOS first");
  cmd->add_option("-m,--model", flags->model_path, "GGUF model file (its vocabulary)")->required();
  auto* file = cmd->add_option("-f,--file", flags->file, "text file");
  auto* prompt = cmd->add_option("-p,--prompt", flags->prompt, "text");
  file->excludes(prompt);
  cmd->require_option(2);
  return {cmd, [flags] { return RunTokenize(*flags); }};
}

}  // namespace h2o::cli
