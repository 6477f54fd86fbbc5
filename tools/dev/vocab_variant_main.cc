// h2o-vocab-variant: a vocab-only GGUF with another file's vocabulary and a
// chosen pre-tokenizer (a developer tool for scripts/peer_tokenizers.sh).
//
//   h2o-vocab-variant SRC.gguf --pre qwen2 [--add-bos true|false]
//                     [--add-eos true|false] -o OUT.gguf
//
// Without --add-bos / --add-eos the output has no such key, so llama.cpp and
// h2o apply their default for the pre-tokenizer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "gguf/file.h"
#include "tokenizer/pre_tokenizer_specs.h"
#include "tokenizer/vocab_variant.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "h2o-vocab-variant: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("A vocab-only GGUF with SRC's vocabulary and another pre-tokenizer");
  std::string source_path, out_path;
  h2o::VocabVariant variant;
  app.add_option("source", source_path, "GGUF file with a byte-level BPE vocabulary")->required();
  app.add_option("--pre", variant.pre, "tokenizer.ggml.pre of the output")->required();
  app.add_option("--add-bos", variant.add_bos, "tokenizer.ggml.add_bos_token (default: absent)");
  app.add_option("--add-eos", variant.add_eos, "tokenizer.ggml.add_eos_token (default: absent)");
  app.add_option("-o,--output", out_path, "output GGUF")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (h2o::FindPreTokenizer(variant.pre) == nullptr) {
    return Fail("unknown pre-tokenizer '" + variant.pre + "'");
  }
  auto source = h2o::gguf::File::Open(source_path);
  if (!source.ok()) return Fail(source.status().message());
  if (h2o::Status s = h2o::WriteVocabVariant(**source, variant, out_path); !s.ok()) {
    return Fail(s.message());
  }
  return 0;
}
