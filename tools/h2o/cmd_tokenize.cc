// h2o tokenize: text -> token ids, one line per document (or per JSON line).
// Reads only the file's tokenizer metadata, so vocab-only GGUFs work.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "cli_errors.h"
#include "commands.h"
#include "eval/jsonl.h"
#include "tokenizer/utf8.h"

namespace h2o::cli {
namespace {

struct TokenizeFlags {
  std::string model_path;
  std::string file;
  std::string prompt;
  std::string jsonl;
  bool no_bos = false;
  bool show_pieces = false;
};

// "    1 -> '<s>'" per token, as llama-tokenize prints them: the text a
// token streams as, or, for control tokens (which stream as nothing), their
// spelling.
void AppendPieces(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, std::string* out) {
  for (const int32_t id : ids) {
    std::string piece = tokenizer.TokenToPiece(id);
    if (piece.empty() && id >= 0 && id < tokenizer.n_vocab()) piece = tokenizer.vocab().tokens[id];
    *out += fmt::format("{:6} -> '{}'\n", id, piece);
  }
}

// Appends ids to out: "1 2 3" (separator ' ') or "[1,2,3]" (',').
void AppendIds(const std::vector<int32_t>& ids, char separator, std::string* out) {
  char buf[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out->push_back(separator);
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, ids[i]);
    out->append(buf, end);
  }
}

Result<std::string> TokenizeJsonl(const Tokenizer& tokenizer, const std::string& path,
                                  bool add_special) {
  H2O_ASSIGN_OR_RETURN(std::vector<JsonlLine> lines, ReadJsonl(path));
  std::string out;
  for (const JsonlLine& line : lines) {
    H2O_ASSIGN_OR_RETURN(std::string text, StringField(line, "text"));
    out += '[';
    AppendIds(tokenizer.Encode(text, add_special), ',', &out);
    out += "]\n";
  }
  return out;
}

Result<std::string> TokenizeDocuments(const Tokenizer& tokenizer, const TokenizeFlags& f) {
  std::string text = f.prompt;
  if (f.file.empty()) {
    H2O_RETURN_IF_ERROR(CheckUtf8(text, "--prompt"));
  } else {
    H2O_ASSIGN_OR_RETURN(text, ReadTextFile(f.file));
  }
  std::string out;
  for (const std::string& doc : SplitDocuments(text)) {
    const std::vector<int32_t> ids = tokenizer.Encode(doc, /*add_special=*/!f.no_bos);
    if (f.show_pieces) {
      if (!out.empty()) out += '\n';  // a blank line between documents
      AppendPieces(tokenizer, ids, &out);
    } else {
      AppendIds(ids, ' ', &out);
      out += '\n';
    }
  }
  return out;
}

int RunTokenize(const TokenizeFlags& f) {
  auto file = gguf::File::Open(f.model_path);
  if (!file.ok()) return Fail(file.status());
  auto tokenizer = LoadTokenizer(**file);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  // Printed only once all of it is there: a failure leaves stdout empty.
  auto out = f.jsonl.empty() ? TokenizeDocuments(*tokenizer, f)
                             : TokenizeJsonl(*tokenizer, f.jsonl, /*add_special=*/!f.no_bos);
  if (!out.ok()) return Fail(out.status());
  std::fwrite(out->data(), 1, out->size(), stdout);
  return 0;
}

}  // namespace

Command RegisterTokenize(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "print token ids: one line per <|endoftext|>-separated document, BOS first when the "
      "vocabulary adds one; special tokens written in the text (<|eot_id|>) are those tokens");
  cmd->add_option("-m,--model", flags->model_path,
                  "GGUF file with a vocabulary (a model or a vocab-only file)")
      ->required();
  cmd->add_option("-f,--file", flags->file, "text file, - for standard input (one input: -f, -p or --jsonl)");
  cmd->add_option("-p,--prompt", flags->prompt, "text");
  cmd->add_option("--jsonl", flags->jsonl,
                  "JSON lines file: prints a JSON array of ids for each line's \"text\"");
  RequireOneOf(*cmd, {"--file", "--prompt", "--jsonl"},
               "an input (-f FILE, -p TEXT or --jsonl FILE)");
  cmd->add_flag("--show-pieces", flags->show_pieces,
                "one token a line with its text: \"   403 -> ' Once'\"")
      ->excludes("--jsonl");
  cmd->add_flag("--no-bos", flags->no_bos,
                "add neither BOS nor EOS, even where the vocabulary asks for them");
  return {cmd, [flags] { return RunTokenize(*flags); }};
}

}  // namespace h2o::cli
