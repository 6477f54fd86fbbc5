// Every architecture loads from a mkmodel file with the hyperparameters its
// spec and keys say, runs, and names what is wrong with a bad file in one
// line. (Agreement with llama.cpp is peer_parity_test.cc's.)
#include "model/arch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "runtime/session.h"

namespace h2o {
namespace {

class ArchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_arch_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  MkModelOptions Small(const std::string& arch) const {
    MkModelOptions o;
    o.arch = arch;
    o.n_embd = 64;
    o.n_layer = 2;
    o.n_head = 4;
    o.n_head_kv = arch == "gpt2" ? 4 : 2;
    o.n_ff = 96;
    o.n_vocab = 300;
    o.n_ctx = 128;
    o.type = "f32";
    o.n_threads = 2;
    o.norm_std = 0.1f;
    o.output_path = (dir_ / (arch + ".gguf")).string();
    return o;
  }

  std::unique_ptr<Model> Make(const MkModelOptions& o) {
    const auto made = MakeRandomModel(o);
    EXPECT_TRUE(made.ok()) << made.status().message();
    auto model = Model::Load(o.output_path);
    EXPECT_TRUE(model.ok()) << model.status().message();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  std::filesystem::path dir_;
};

// Weights repacked at load (the default) give the logits of the file's
// rows bit for bit, after a prefill and after each decoded token, on every
// architecture's matrices (fused QKV, biases, an output tied to the
// embedding or not, a vocabulary that ends in a partial panel), for each
// type the kernels repack; --no-repack (repack off) packs nothing. One KV
// head of 16 puts fused K and V at rows no panel starts on, so those are
// computed as one product and split after; with it llama and gemma3 tie
// their output, whose embedding rows are then read out of its panels.
TEST_F(ArchTest, RepackedWeightsGiveTheLogitsOfTheRowsBitForBit) {
  for (const char* type : {"q8_0", "q4_0"}) {
    for (const char* arch : {"llama", "qwen2", "phi3", "gemma3", "gptneox", "gpt2"}) {
      for (const int n_head_kv : {2, 1}) {
        SCOPED_TRACE(std::string(arch) + " " + type + " kv heads " + std::to_string(n_head_kv));
        MkModelOptions o = Small(arch);
        o.type = type;
        if (o.n_head_kv != o.n_head) o.n_head_kv = n_head_kv;
        // Llama 3.2 and Gemma tie the output to the embedding.
        o.tied = n_head_kv == 1 && (std::string(arch) == "llama" || std::string(arch) == "gemma3");
        o.output_path = (dir_ / (std::string(arch) + "_" + type + ".gguf")).string();
        ASSERT_TRUE(MakeRandomModel(o).ok());
        auto packed = Model::Load(o.output_path);
        auto rows = Model::Load(o.output_path, {.repack = false});
        ASSERT_TRUE(packed.ok() && rows.ok());
        EXPECT_EQ((*rows)->panels().matrices(), 0u);
        if (kernels::PanelsOffered(ParseTensorType(type).value())) {
          EXPECT_GT((*packed)->panels().matrices(), 0u);
          // A tied output is packed with the embedding, looked up from it.
          const ModelWeights& w = (*packed)->weights();
          EXPECT_EQ(w.token_embd.panels, w.tied_output);
          EXPECT_TRUE(w.output.panels);
        }
        std::vector<std::vector<float>> logits[2];
        for (int i = 0; i < 2; ++i) {
          auto session = Session::Create(i == 0 ? **packed : **rows, {});
          ASSERT_TRUE(session.ok()) << session.status().message();
          const std::vector<int32_t> prompt = {1, 7, 42, 299, 5, 64};
          ASSERT_TRUE((*session)->Eval(prompt).ok());
          const auto keep = [&] {
            const std::span<const float> l = (*session)->last_logits();
            logits[i].emplace_back(l.begin(), l.end());
          };
          keep();
          for (int32_t next : {9, 13, 250}) {
            const std::vector<int32_t> one = {next};
            ASSERT_TRUE((*session)->Eval(one).ok());
            keep();
          }
        }
        ASSERT_EQ(logits[0].size(), logits[1].size());
        for (size_t step = 0; step < logits[0].size(); ++step) {
          ASSERT_EQ(logits[0][step], logits[1][step]) << "step " << step;
        }
      }
    }
  }
}

TEST_F(ArchTest, EveryArchitectureLoadsAndRuns) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "phi3", "gemma3", "gptneox", "gpt2"}) {
    SCOPED_TRACE(arch);
    std::unique_ptr<Model> model = Make(Small(arch));
    ASSERT_NE(model, nullptr);
    const HParams& hp = model->hparams();
    EXPECT_EQ(hp.arch, arch);
    EXPECT_EQ(hp.spec, FindArch(arch));
    EXPECT_EQ(hp.head_dim, 16);
    EXPECT_FLOAT_EQ(hp.attn_scale, 0.25f);  // 1 / sqrt(16)
    auto session = Session::Create(*model, {});
    ASSERT_TRUE(session.ok()) << session.status().message();
    const std::vector<int32_t> ids = {1, 7, 42, 299};
    ASSERT_TRUE((*session)->Eval(ids).ok());
    const std::span<const float> logits = (*session)->last_logits();
    ASSERT_EQ(logits.size(), 300u);
    EXPECT_TRUE(
        std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    EXPECT_NE(*std::max_element(logits.begin(), logits.end()),
              *std::min_element(logits.begin(), logits.end()));
  }
}

TEST_F(ArchTest, SpecificHyperparameters) {
  {
    std::unique_ptr<Model> m = Make(Small("gptneox"));
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->hparams().parallel_residual);
    EXPECT_EQ(m->hparams().n_rot, 4);  // a quarter of 16, Pythia's rotary_pct
    EXPECT_EQ(m->hparams().rope_mode, kernels::RopeMode::kNeox);
    EXPECT_EQ(m->weights().layers[0].bq.size(), 64u);  // split from attn_qkv.bias
    EXPECT_EQ(m->weights().layers[0].attn_norm.bias.size(), 64u);
  }
  {
    MkModelOptions o = Small("gpt2");
    o.tied = true;
    std::unique_ptr<Model> m = Make(o);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->hparams().n_rot, 0);
    EXPECT_EQ(m->weights().position_embd.rows, 128);
    EXPECT_TRUE(m->weights().tied_output);
  }
  {
    MkModelOptions o = Small("gemma3");
    o.n_layer = 7;
    o.window = 8;
    std::unique_ptr<Model> m = Make(o);
    ASSERT_NE(m, nullptr);
    // Five windowed layers, then a global one, repeating.
    EXPECT_EQ(m->hparams().layer_window, (std::vector<int32_t>{8, 8, 8, 8, 8, 0, 8}));
    EXPECT_FLOAT_EQ(m->hparams().embed_scale, 8.0f);  // sqrt(64)
    EXPECT_EQ(m->weights().layers[0].q_norm.size(), 16u);
    EXPECT_EQ(m->weights().layers[0].ffn_post_norm.weight.size(), 64u);
    // The windowed layers have their own rope base (10000); the global ones
    // the file's.
    const auto ropes = m->LayerRopes(128);
    EXPECT_NE(ropes[0], ropes[5]);
    EXPECT_EQ(ropes[0], ropes[6]);
  }
  {
    MkModelOptions o = Small("phi3");
    o.rope_freqs = "longrope";
    o.rope_orig_ctx = 64;
    std::unique_ptr<Model> m = Make(o);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->weights().layers[0].wqkv.rows, 64 + 2 * 32);
    EXPECT_EQ(m->weights().layers[0].w_up.rows, 2 * 96);
    // Past the original context the long factors apply (llama.cpp's rule).
    EXPECT_NE(m->LayerRopes(65)[0], m->LayerRopes(64)[0]);
    EXPECT_GT(m->LayerRopes(65)[0]->inv_freq()[7], 0.0);
    EXPECT_LT(m->LayerRopes(65)[0]->inv_freq()[7], m->LayerRopes(64)[0]->inv_freq()[7]);
  }
  {
    std::unique_ptr<Model> m = Make(Small("qwen2"));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->weights().layers[1].bk.size(), 32u);
    EXPECT_TRUE(m->weights().layers[1].bo.empty());
  }
}

TEST_F(ArchTest, LearnedPositionsRefusePosShiftAndLongContexts) {
  std::unique_ptr<Model> m = Make(Small("gpt2"));
  ASSERT_NE(m, nullptr);
  SessionOptions shift;
  shift.kv = {.policy = "h2o", .budget = 16};
  shift.kv_pos_shift = true;
  auto s = Session::Create(*m, shift);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("gpt2 has learned positions"), std::string::npos)
      << s.status().message();
  SessionOptions long_ctx;
  long_ctx.n_ctx = 129;
  auto l = Session::Create(*m, long_ctx);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("exceeds the 128 positions gpt2 has learned"),
            std::string::npos)
      << l.status().message();
}

// A file of `arch` whose keys are edited by `edit` before writing.
std::string Rewrite(const std::string& from, const std::string& to,
                    const std::function<void(gguf::Writer&)>& edit,
                    const std::string& drop_tensor = "") {
  auto src = gguf::File::Open(from);
  EXPECT_TRUE(src.ok());
  gguf::Writer w;
  for (const gguf::KeyValue& kv : (*src)->metadata()) w.Set(kv.key, kv.value);
  for (const gguf::TensorInfo& t : (*src)->tensors()) {
    if (t.name == drop_tensor) continue;
    EXPECT_TRUE(w.AddTensor(t.name, t.type, t.dims, t.data, t.nbytes).ok());
  }
  edit(w);
  EXPECT_TRUE(w.Write(to).ok());
  return to;
}

TEST_F(ArchTest, BadFilesAreOneLineNamingTheThing) {
  const MkModelOptions neox = Small("gptneox");
  ASSERT_TRUE(MakeRandomModel(neox).ok());
  const MkModelOptions gemma = [&] {
    MkModelOptions o = Small("gemma3");
    o.window = 8;
    return o;
  }();
  ASSERT_TRUE(MakeRandomModel(gemma).ok());
  const MkModelOptions llama = Small("llama");
  ASSERT_TRUE(MakeRandomModel(llama).ok());
  struct Case {
    std::string from;
    std::function<void(gguf::Writer&)> edit;
    std::string drop;
    std::string needle;
  };
  const std::string bad = (dir_ / "bad.gguf").string();
  const Case cases[] = {
      {neox.output_path, [](gguf::Writer& w) { w.SetString("general.architecture", "mamba"); }, "",
       "architecture 'mamba' is not supported"},
      {neox.output_path, [](gguf::Writer& w) { w.SetU32("gptneox.rope.dimension_count", 5); }, "",
       "rope.dimension_count 5 must be even"},
      {neox.output_path, [](gguf::Writer& w) { w.SetU32("gptneox.attention.head_count_kv", 3); },
       "", "head_count 4 is not a multiple of head_count_kv 3"},
      {neox.output_path, [](gguf::Writer&) {}, "blk.1.attn_qkv.bias",
       "missing tensor 'blk.1.attn_qkv.bias'"},
      {neox.output_path, [](gguf::Writer&) {}, "output.weight", "missing tensor 'output.weight'"},
      {neox.output_path, [](gguf::Writer& w) { w.SetU32("gptneox.embedding_length", 0); }, "",
       "bad gptneox.embedding_length 0"},
      {gemma.output_path,
       [](gguf::Writer& w) { w.SetU32("gemma3.attention.sliding_window", 1u << 31); }, "",
       "bad attention.sliding_window"},
      {gemma.output_path, [](gguf::Writer&) {}, "blk.0.post_ffw_norm.weight",
       "missing tensor 'blk.0.post_ffw_norm.weight'"},
      // Hyperparameters: zero and negative sizes, heads that do not divide,
      // an odd head where RoPE turns pairs, position scaling it cannot do.
      {llama.output_path, [](gguf::Writer& w) { w.SetU32("llama.attention.head_count", 0); }, "",
       "bad llama.attention.head_count 0"},
      {llama.output_path, [](gguf::Writer& w) { w.SetI32("llama.block_count", -2); }, "",
       "llama.block_count' value -2 does not fit uint32"},
      {llama.output_path, [](gguf::Writer& w) { w.SetU32("llama.attention.head_count_kv", 0); }, "",
       "bad llama.attention.head_count_kv 0"},
      {llama.output_path, [](gguf::Writer& w) { w.SetU32("llama.feed_forward_length", 0); }, "",
       "bad llama.feed_forward_length 0"},
      {llama.output_path, [](gguf::Writer& w) { w.SetU32("llama.embedding_length", 66); }, "",
       "embedding_length 66 is not a multiple of head_count 4"},
      {llama.output_path, [](gguf::Writer& w) { w.SetU32("llama.attention.head_count_kv", 3); }, "",
       "head_count 4 is not a multiple of head_count_kv 3"},
      {llama.output_path,
       [](gguf::Writer& w) {
         w.SetU32("llama.embedding_length", 60);  // 4 heads of 15
       },
       "", "head dimension 15 is odd; RoPE needs it even"},
      {llama.output_path, [](gguf::Writer& w) { w.SetString("llama.rope.scaling.type", "ntk"); },
       "", "rope.scaling.type 'ntk' is not supported for llama"},
      {llama.output_path, [](gguf::Writer& w) { w.SetF32("llama.rope.scaling.factor", -2.0f); }, "",
       "bad rope.scaling.factor -2"},
      {llama.output_path, [](gguf::Writer& w) { w.SetF32("llama.rope.scaling.factor", NAN); }, "",
       "bad rope.scaling.factor nan"},
      {llama.output_path, [](gguf::Writer& w) { w.SetF32("llama.rope.freq_base", INFINITY); }, "",
       "bad rope.freq_base inf"},
      {llama.output_path, [](gguf::Writer& w) { w.SetF32("llama.rope.freq_base", 0.0f); }, "",
       "bad rope.freq_base 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    Rewrite(c.from, bad, c.edit, c.drop);
    auto m = Model::Load(bad);
    ASSERT_FALSE(m.ok());
    const std::string msg = m.status().message();
    EXPECT_EQ(msg.rfind(bad + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace h2o
