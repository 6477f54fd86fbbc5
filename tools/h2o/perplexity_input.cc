#include "perplexity_input.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli_common.h"
#include "eval/perplexity.h"

namespace h2o::cli {
namespace {

// The streams of one token file: one per non-empty line, named by the file
// (and the line number when there are several).
Result<std::vector<Stream>> ReadTokenFile(const std::string& path) {
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
  auto blank = [](const std::string& line) {
    return line.find_first_not_of(" \t\r") == std::string::npos;
  };
  int n_nonempty = 0;
  for (const std::string& line : lines) n_nonempty += !blank(line);
  std::vector<Stream> streams;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const std::string where = fmt::format("{}:{}", path, i + 1);
    H2O_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ParseTokenIds(lines[i], where));
    streams.push_back({n_nonempty > 1 ? fmt::format("{}:{}", base, i + 1) : base, std::move(ids)});
  }
  return streams;
}

}  // namespace

Result<std::vector<Stream>> ReadStreams(const std::string& text_file,
                                        const std::vector<std::string>& token_files,
                                        const Model& model) {
  std::vector<Stream> streams;
  if (!text_file.empty()) {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(text_file));
    H2O_ASSIGN_OR_RETURN(Tokenizer tokenizer, LoadTokenizer(model));
    int index = 0;
    for (const std::string& doc : SplitDocuments(text)) {
      streams.push_back(
          {fmt::format("{}#{}", text_file, ++index), tokenizer.Encode(doc, /*add_special=*/true)});
    }
  }
  for (const std::string& path : token_files) {
    H2O_ASSIGN_OR_RETURN(std::vector<Stream> file_streams, ReadTokenFile(path));
    for (Stream& s : file_streams) streams.push_back(std::move(s));
  }
  if (streams.empty()) return Status::Error("no token streams in the input");
  return streams;
}

Result<std::vector<Stream>> ReadWindows(const std::string& text_file,
                                        const std::vector<std::string>& token_files,
                                        const Model& model, int32_t n_ctx) {
  H2O_ASSIGN_OR_RETURN(Tokenizer tokenizer, LoadTokenizer(model));
  const bool add_bos = tokenizer.vocab().add_bos;
  std::vector<int32_t> ids;
  if (!text_file.empty()) {
    H2O_ASSIGN_OR_RETURN(std::string text, ReadTextFile(text_file));
    ids = tokenizer.Encode(text, /*add_special=*/true);
  }
  for (const std::string& path : token_files) {
    H2O_ASSIGN_OR_RETURN(std::vector<Stream> file_streams, ReadTokenFile(path));
    for (const Stream& s : file_streams) ids.insert(ids.end(), s.ids.begin(), s.ids.end());
  }
  std::vector<Stream> windows;
  for (std::vector<int32_t>& w : SplitWindows(ids, n_ctx, add_bos ? tokenizer.bos_id() : -1)) {
    windows.push_back({fmt::format("window {}", windows.size() + 1), std::move(w)});
  }
  if (windows.empty()) {
    return Status::Error(fmt::format(
        "the windowed mode needs at least one full window: the input has {} tokens, the window "
        "(-c) is {}",
        ids.size(), n_ctx));
  }
  return windows;
}

}  // namespace h2o::cli
