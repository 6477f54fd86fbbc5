// h2o.cpp against llama.cpp (b7847) on the same files: windowed perplexity
// and greedy ids captured from llama.cpp by scripts/peer_reference.sh into
// tests/data/peer/reference.json. The files are mkmodel models (rebuilt
// here from the options recorded there: mkmodel output is a pure function
// of its options) and llama.cpp's own quantizations of the f16 one
// (committed, since quantizing needs llama.cpp). Both engines keep K/V in
// f32, so the remaining differences are float rounding and, for quantized
// weights, how each engine quantizes activations for its integer dots.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "eval/perplexity.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

using nlohmann::json;

// The `h2o mkmodel` flags scripts/peer_reference.sh uses, into options.
MkModelOptions ParseMkModelFlags(const std::string& flags, const std::string& output) {
  MkModelOptions o;
  o.output_path = output;
  o.n_threads = 2;
  std::istringstream in(flags);
  std::string flag, value;
  while (in >> flag) {
    if (flag == "--tied") {
      o.tied = true;
      continue;
    }
    in >> value;
    if (flag == "--dim")
      o.n_embd = std::stoll(value);
    else if (flag == "--layers")
      o.n_layer = std::stoll(value);
    else if (flag == "--heads")
      o.n_head = std::stoll(value);
    else if (flag == "--kv-heads")
      o.n_head_kv = std::stoll(value);
    else if (flag == "--ffn")
      o.n_ff = std::stoll(value);
    else if (flag == "--vocab")
      o.n_vocab = std::stoll(value);
    else if (flag == "--ctx")
      o.n_ctx = std::stoll(value);
    else if (flag == "--sharpen")
      o.sharpen = std::stof(value);
    else if (flag == "--seed")
      o.seed = std::stoull(value);
    else if (flag == "--type")
      o.type = value;
    else if (flag == "--rope-base")
      o.rope_base = std::stof(value);
    else if (flag == "--rope-freqs")
      o.rope_freqs = value;
    else if (flag == "--rope-scaling")
      o.rope_scaling = value;
    else if (flag == "--rope-factor")
      o.rope_factor = std::stof(value);
    else if (flag == "--rope-orig-ctx")
      o.rope_orig_ctx = std::stoll(value);
    else if (flag == "--arch")
      o.arch = value;
    else if (flag == "--norm-std")
      o.norm_std = std::stof(value);
    else if (flag == "--rope-dims")
      o.rope_dims = std::stoll(value);
    else if (flag == "--window")
      o.window = std::stoll(value);
    else if (flag == "--head-dim")
      o.head_dim = std::stoll(value);
    else if (flag == "--vocab-from")
      o.vocab_from = std::string(H2O_SOURCE_DIR) + "/" + value;
    else
      ADD_FAILURE() << "peer_parity_test does not know mkmodel flag " << flag;
  }
  return o;
}

class PeerParity : public ::testing::TestWithParam<json> {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_peer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  // The entry's model: its committed file, or the mkmodel file rebuilt.
  std::unique_ptr<Model> LoadEntryModel() {
    const json& entry = GetParam();
    std::string path;
    if (entry.contains("file")) {
      path = std::string(H2O_SOURCE_DIR) + "/" + entry["file"].get<std::string>();
    } else {
      path = (dir_ / (entry["name"].get<std::string>() + ".gguf")).string();
      if (!std::filesystem::exists(path)) {  // the other test of the entry made it
        const auto made = MakeRandomModel(ParseMkModelFlags(entry["mkmodel"], path));
        EXPECT_TRUE(made.ok()) << made.status().message();
      }
    }
    auto model = Model::Load(path);
    EXPECT_TRUE(model.ok()) << model.status().message();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  static std::unique_ptr<Session> F32Session(const Model& model, int32_t n_ctx) {
    SessionOptions options;
    options.n_ctx = n_ctx;
    options.n_threads = 2;
    options.kv_types = {TensorType::kF32, TensorType::kF32};
    auto session = Session::Create(model, options);
    EXPECT_TRUE(session.ok()) << session.status().message();
    return std::move(session).value();
  }

  // f32 weights: llama.cpp rounds nothing either (it rounds activations to
  // f16 for f16 weights, and quantizes them for quantized ones).
  static bool IsF32Model(const json& entry) {
    return entry.contains("mkmodel") &&
           entry["mkmodel"].get<std::string>().find("--type f32") != std::string::npos;
  }

  static inline std::filesystem::path dir_;
};

Tokenizer LoadModelTokenizer(const Model& model) {
  auto tokenizer = LoadTokenizerFromGguf(model.file());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  return std::move(tokenizer).value();
}

// What llb ppl scored: the entry's text tokenized as llama.cpp does (BOS as
// the vocabulary says), or the shared ids.
std::vector<int32_t> PerplexityIds(const json& entry, const Tokenizer& tokenizer) {
  if (entry.contains("text_file")) {
    const std::string text = testing::ReadFileOrEmpty(std::string(H2O_SOURCE_DIR) + "/" +
                                                      entry["text_file"].get<std::string>());
    return tokenizer.Encode(text, /*add_special=*/true);
  }
  std::istringstream in(testing::ReadFileOrEmpty(testing::DataPath("peer/ids.txt")));
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// llama-perplexity's windows (llb ppl). Quantized files: perplexity within
// 2e-3 of llama.cpp's (the engines quantize activations differently);
// mkmodel files: mean NLL within 1e-5 (f32 weights: neither engine rounds
// but for llama.cpp's fp16 GELU table) or 1e-3 (f16: llama.cpp rounds
// activations to f16 for its dots) relative, the bounds of issue #11 (1e-4
// for f32 there) tightened where the measurements allow.
TEST_P(PeerParity, WindowedPerplexity) {
  const json& entry = GetParam();
  const std::unique_ptr<Model> model = LoadEntryModel();
  ASSERT_NE(model, nullptr);
  const json reference = testing::ReadJson("peer/reference.json");
  const int32_t window = reference["window"];
  const std::unique_ptr<Session> session = F32Session(*model, window);
  const Tokenizer tokenizer = LoadModelTokenizer(*model);
  const int32_t bos = tokenizer.vocab().add_bos ? tokenizer.bos_id() : -1;
  NllResult total;
  for (const std::vector<int32_t>& w : SplitWindows(PerplexityIds(entry, tokenizer), window, bos)) {
    Sequence* sequences[] = {&session->sequence()};
    ScoreOptions options;
    options.first_scored = WindowFirstScored(window);
    auto scores = ScoreStreamLockstep(session->engine(), sequences, nullptr, w, options);
    ASSERT_TRUE(scores.ok()) << scores.status().message();
    total.Add((*scores)[0].nll);
  }
  EXPECT_EQ(total.tokens, entry["tokens_scored"].get<int64_t>());
  if (entry.contains("file")) {
    const double want = entry["ppl"];
    EXPECT_NEAR(total.perplexity() / want, 1.0, 2e-3)
        << "h2o ppl " << total.perplexity() << " vs llama.cpp " << want;
  } else {
    const double want = entry["mean_nll"];
    EXPECT_NEAR(total.mean() / want, 1.0, IsF32Model(entry) ? 1e-5 : 1e-3)
        << "h2o mean NLL " << total.mean() << " vs llama.cpp " << want;
  }
}

// llama.cpp's greedy continuation, fed back token by token: at every step
// where our top two logits are further apart than rounding could move them,
// our argmax must be llama.cpp's token. f32 models must agree at every
// step. Elsewhere the engines round activations differently (f16, or 8-bit
// blocks of their own layouts), and --sharpen's peaked attention amplifies
// that: measured, their top logits then differ by up to about 1.3% of the
// largest logit, so steps whose gap is within 3% of it only need
// llama.cpp's token near our top, and at least 60% of the steps must be
// clear of that margin (65-90% are, depending on the type).
TEST_P(PeerParity, GreedyIds) {
  const json& entry = GetParam();
  const std::unique_ptr<Model> model = LoadEntryModel();
  ASSERT_NE(model, nullptr);
  const json reference = testing::ReadJson("peer/reference.json");
  std::vector<int32_t> prompt = reference["prompt"];
  if (entry.contains("prompt_text")) {
    prompt = entry["prompt_ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(LoadModelTokenizer(*model).Encode(entry["prompt_text"].get<std::string>(), true),
              prompt);
  }
  const std::vector<int32_t> greedy = entry["greedy"];
  const std::unique_ptr<Session> session = F32Session(*model, 256);
  ASSERT_TRUE(session->Eval(prompt).ok());
  const bool exact = IsF32Model(entry);
  int checked = 0;
  for (size_t step = 0; step < greedy.size(); ++step) {
    const std::span<const float> logits = session->last_logits();
    std::vector<float> sorted(logits.begin(), logits.end());
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
    float scale = 0;
    for (const float l : logits) scale = std::max(scale, std::fabs(l));
    const float margin = (exact ? 1e-4f : 3e-2f) * scale;
    const int32_t ours =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (sorted[0] - sorted[1] > margin) {
      EXPECT_EQ(ours, greedy[step]) << "step " << step << " gap " << sorted[0] - sorted[1];
      ++checked;
    } else {
      EXPECT_TRUE(ours == greedy[step] || logits[greedy[step]] >= sorted[0] - margin)
          << "step " << step << ": llama.cpp's token is not even near our top";
    }
    const int32_t next[] = {greedy[step]};
    ASSERT_TRUE(session->Eval(next).ok());
  }
  if (exact) {
    EXPECT_EQ(checked, static_cast<int>(greedy.size()));
  } else {
    EXPECT_GE(checked, static_cast<int>(greedy.size()) * 6 / 10);
  }
}

std::vector<json> Entries() {
  const json reference = testing::ReadJson("peer/reference.json");
  return reference["models"].get<std::vector<json>>();
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, PeerParity, ::testing::ValuesIn(Entries()),
                         [](const ::testing::TestParamInfo<json>& info) {
                           return info.param["name"].get<std::string>();
                         });

}  // namespace
}  // namespace h2o
