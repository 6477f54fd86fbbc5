// Byte-level BPE speed on the real Llama 3 vocabulary
// (tests/data/tokenizers/llama3-vocab.gguf): loading the tokenizer, the
// pre-tokenizer (PCRE2) alone, and Encode and Decode of a text, reported as
// input bytes per second. The text is H2O_BENCH_TEXT when set (e.g. the
// 1 MiB of War and Peace the speed comparison with llama.cpp uses),
// otherwise the 473 texts of llama3_cases.jsonl joined by newlines.
//
//   H2O_BENCH_TEXT=war_and_peace_1mb.txt h2o_tokenizer_bench [--benchmark_filter=Encode]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/pre_tokenizer_specs.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

const std::string kDataDir = std::string(H2O_SOURCE_DIR) + "/tests/data/tokenizers/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  H2O_CHECK(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string& Text() {
  static const std::string text = [] {
    if (const char* path = std::getenv("H2O_BENCH_TEXT")) return ReadFile(path);
    std::string joined;
    std::istringstream lines(ReadFile(kDataDir + "llama3_cases.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      joined += nlohmann::json::parse(line).at("text").get<std::string>() + "\n";
    }
    return joined;
  }();
  return text;
}

std::unique_ptr<gguf::File> OpenVocab() {
  auto file = gguf::File::Open(kDataDir + "llama3-vocab.gguf");
  H2O_CHECK(file.ok());
  return std::move(file).value();
}

const Tokenizer& Llama3() {
  static const Tokenizer tokenizer = [] {
    auto t = LoadTokenizerFromGguf(*OpenVocab());
    H2O_CHECK(t.ok());
    return std::move(t).value();
  }();
  return tokenizer;
}

void SetBytes(benchmark::State& state, size_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_LoadTokenizer(benchmark::State& state) {
  const std::unique_ptr<gguf::File> file = OpenVocab();
  for (auto _ : state) {
    auto t = LoadTokenizerFromGguf(*file);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_LoadTokenizer)->Unit(benchmark::kMillisecond);

void BM_PreTokenize(benchmark::State& state) {
  const PreTokenizer pre(FindPreTokenizer("llama-bpe")->patterns);
  std::vector<std::string_view> words;
  for (auto _ : state) {
    words.clear();
    pre.Split(Text(), &words);
    benchmark::DoNotOptimize(words.data());
  }
  SetBytes(state, Text().size());
}
BENCHMARK(BM_PreTokenize)->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state) {
  const Tokenizer& t = Llama3();
  for (auto _ : state) benchmark::DoNotOptimize(t.Encode(Text(), /*add_special=*/true));
  SetBytes(state, Text().size());
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const Tokenizer& t = Llama3();
  const std::vector<int32_t> ids = t.Encode(Text(), /*add_special=*/true);
  for (auto _ : state) benchmark::DoNotOptimize(t.Decode(ids, /*remove_special=*/true));
  SetBytes(state, Text().size());
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace h2o

BENCHMARK_MAIN();
