// Random-weight models (h2o mkmodel): they load and run with the requested
// shape and types, are a pure function of the seed, and the quantized files
// hold the f32 file's values within each type's rounding bound.
#include "convert/mkmodel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o {
namespace {

const char* const kTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0"};

class MkModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_mkmodel_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // The brief's small model: dim 64, 2 layers, 4 heads, 2 KV heads, ffn 96.
  MkModelOptions Small(const std::string& type, const std::string& file, uint64_t seed = 1) const {
    MkModelOptions o;
    o.n_embd = 64;
    o.n_layer = 2;
    o.n_head = 4;
    o.n_head_kv = 2;
    o.n_ff = 96;
    o.n_vocab = 300;
    o.n_ctx = 128;
    o.type = type;
    o.seed = seed;
    o.n_threads = 2;
    o.output_path = Path(file);
    return o;
  }

  std::filesystem::path dir_;
};

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(MkModel, EachTypeLoadsWithItsShapeAndGeneratesFiniteLogits) {
  const std::pair<const char*, uint32_t> file_types[] = {
      {"f32", 0}, {"f16", 1}, {"bf16", 32}, {"q8_0", 7}, {"q4_0", 2}};
  for (const auto& [type_name, file_type] : file_types) {
    SCOPED_TRACE(type_name);
    const MkModelOptions o = Small(type_name, std::string(type_name) + ".gguf");
    const Status s = MakeRandomModel(o).status();
    ASSERT_TRUE(s.ok()) << s.message();

    auto model = Model::Load(o.output_path);
    ASSERT_TRUE(model.ok()) << model.status().message();
    const HParams& hp = (*model)->hparams();
    EXPECT_EQ(hp.arch, "llama");
    EXPECT_EQ(hp.n_embd, 64);
    EXPECT_EQ(hp.n_layer, 2);
    EXPECT_EQ(hp.n_head, 4);
    EXPECT_EQ(hp.n_head_kv, 2);
    EXPECT_EQ(hp.head_dim, 16);
    EXPECT_EQ(hp.n_rot, 16);
    EXPECT_EQ(hp.n_ff, 96);
    EXPECT_EQ(hp.n_vocab, 300);
    EXPECT_EQ(hp.n_ctx_train, 128);
    EXPECT_FLOAT_EQ(hp.norm_eps, 1e-5f);
    EXPECT_FLOAT_EQ(hp.rope_freq_base, 10000.0f);
    EXPECT_FALSE((*model)->weights().tied_output);

    const gguf::File& f = (*model)->file();
    EXPECT_EQ(f.GetU32("general.file_type").value(), file_type);
    EXPECT_EQ(f.tensors().size(), 3u + 2u * 9u);
    const TensorType want = *ParseTensorType(type_name);
    for (const gguf::TensorInfo& t : f.tensors()) {
      const bool is_norm = t.name.find("norm") != std::string::npos;
      EXPECT_EQ(t.type, is_norm ? TensorType::kF32 : want) << t.name;
    }
    EXPECT_EQ(f.FindTensor("output.weight")->dims, (std::vector<int64_t>{64, 300}));
    EXPECT_EQ(f.FindTensor("blk.1.attn_k.weight")->dims, (std::vector<int64_t>{64, 32}));
    EXPECT_EQ(f.FindTensor("blk.1.ffn_down.weight")->dims, (std::vector<int64_t>{96, 64}));

    auto vocab = LoadVocabFromGguf(f);
    ASSERT_TRUE(vocab.ok()) << vocab.status().message();
    ASSERT_EQ(vocab->tokens.size(), 300u);
    EXPECT_EQ(vocab->tokens[0], "<unk>");
    EXPECT_EQ(vocab->tokens[1], "<s>");
    EXPECT_EQ(vocab->tokens[2], "</s>");
    EXPECT_EQ(vocab->tokens[3], "<0x00>");
    EXPECT_EQ(vocab->tokens[258], "<0xFF>");
    EXPECT_EQ(vocab->types[258], TokenType::kByte);
    EXPECT_EQ(vocab->tokens[259], "\xE2\x96\x81t259");
    EXPECT_EQ(vocab->types[299], TokenType::kNormal);
    EXPECT_EQ(vocab->bos_id, 1);
    EXPECT_EQ(vocab->eos_id, 2);
    EXPECT_EQ(vocab->unk_id, 0);

    auto session = Session::Create(**model, {});
    ASSERT_TRUE(session.ok()) << session.status().message();
    std::vector<int32_t> ids = {1, 2, 3};
    ASSERT_TRUE((*session)->Eval(ids).ok());
    for (int i = 0; i < 5; ++i) {
      const std::span<const float> logits = (*session)->last_logits();
      ASSERT_EQ(logits.size(), 300u);
      ASSERT_TRUE(
          std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
      // Random weights still give distinct logits, not a constant vector.
      EXPECT_NE(*std::max_element(logits.begin(), logits.end()),
                *std::min_element(logits.begin(), logits.end()));
      const int32_t next[] = {ArgMax(logits)};
      ASSERT_TRUE((*session)->Eval(next).ok());
    }
  }
}

// The relative rounding of one stored weight, at most: half an ulp for
// f16 (2^-11) and bf16 (2^-8); for q8_0 and q4_0 half a step of the block's
// scale, as a fraction of the block's largest magnitude (1/254, 1/16 plus
// the clamp of +8 to 7, 1/8).
double WeightRounding(const std::string& type) {
  if (type == "f16") return 0x1p-11;
  if (type == "bf16") return 0x1p-8;
  if (type == "q8_0") return 1.0 / 254;
  if (type == "q4_0") return 1.0 / 8;
  return 0.0;
}

// The same seed in each type holds the f32 weights within WeightRounding
// (TypesHoldTheF32ValuesWithinTheirErrorBound); the logits must then stay
// within a small multiple of it of the f32 model's, relative to the
// logits' spread: two layers of matrix products, each adding at most its
// weights' relative error (the weights are random and the activations
// normalized, so errors add, they do not compound), plus the output
// matrix's: 4 times it (measured: 0.65 f16, 0.73 bf16, 2.6 q8_0, 1.0 q4_0).
// A wrong dequantization (a swapped scale, a nibble order) moves logits by
// their whole spread and fails this.
TEST_F(MkModel, QuantizedLogitsStayWithinTheirRoundingOfTheF32Models) {
  const std::vector<int32_t> ids = {1, 2, 3, 100, 200, 299, 17, 42};
  std::vector<float> want;
  for (const char* type_name : kTypes) {
    SCOPED_TRACE(type_name);
    const MkModelOptions o = Small(type_name, std::string("logits_") + type_name + ".gguf", 5);
    ASSERT_TRUE(MakeRandomModel(o).ok());
    auto model = Model::Load(o.output_path);
    ASSERT_TRUE(model.ok()) << model.status().message();
    SessionOptions options;
    options.kv_types = {TensorType::kF32, TensorType::kF32};
    auto session = Session::Create(**model, options);
    ASSERT_TRUE(session.ok());
    std::vector<float> got;
    for (int32_t id : ids) {
      const int32_t one[] = {id};
      ASSERT_TRUE((*session)->Eval(one).ok());
      got.insert(got.end(), (*session)->last_logits().begin(), (*session)->last_logits().end());
    }
    if (want.empty()) {
      ASSERT_STREQ(type_name, "f32");  // kTypes starts with the reference
      want = got;
      continue;
    }
    double spread = 0.0, worst = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
      spread = std::max(spread, static_cast<double>(std::abs(want[i])));
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
    }
    const double bound = 4 * WeightRounding(type_name) * spread;
    EXPECT_LE(worst, bound) << "spread " << spread;
    // And not trivially: the types do differ from f32.
    EXPECT_GT(worst, 0.0);
  }
}

TEST_F(MkModel, SameSeedSameBytesOtherSeedOtherBytes) {
  MkModelOptions a = Small("q4_0", "a.gguf", 7);
  MkModelOptions b = Small("q4_0", "b.gguf", 7);
  b.n_threads = 3;  // rows are seeded independently: threads do not matter
  MkModelOptions c = Small("q4_0", "c.gguf", 8);
  ASSERT_TRUE(MakeRandomModel(a).ok());
  ASSERT_TRUE(MakeRandomModel(b).ok());
  ASSERT_TRUE(MakeRandomModel(c).ok());
  const std::string bytes_a = ReadBytes(a.output_path);
  ASSERT_FALSE(bytes_a.empty());
  EXPECT_EQ(bytes_a, ReadBytes(b.output_path));
  const std::string bytes_c = ReadBytes(c.output_path);
  ASSERT_EQ(bytes_a.size(), bytes_c.size());  // only general.name's digit and weights differ
  EXPECT_NE(bytes_a, bytes_c);

  // Every weight tensor changes with the seed.
  auto fa = gguf::File::Open(a.output_path);
  auto fc = gguf::File::Open(c.output_path);
  ASSERT_TRUE(fa.ok() && fc.ok());
  for (const gguf::TensorInfo& t : (*fa)->tensors()) {
    if (t.name.find("norm") != std::string::npos) continue;
    const gguf::TensorInfo* u = (*fc)->FindTensor(t.name);
    ASSERT_NE(u, nullptr);
    EXPECT_NE(std::memcmp(t.data, u->data, t.nbytes), 0) << t.name;
  }
}

// The generator is fixed by the C++ standard (mt19937_64) and integer
// arithmetic, so these values are the same on every platform and library.
TEST_F(MkModel, WeightValuesArePinned) {
  const MkModelOptions o = Small("f32", "pinned.gguf", 1);
  ASSERT_TRUE(MakeRandomModel(o).ok());
  auto f = gguf::File::Open(o.output_path);
  ASSERT_TRUE(f.ok());
  const auto* q = reinterpret_cast<const float*>((*f)->FindTensor("blk.0.attn_q.weight")->data);
  const float expected[] = {0x1.4177f8p-7f, 0x1.341f88p-6f,  -0x1.63c12cp-6f,
                            -0x1.63d52p-8f, -0x1.af12a2p-9f, -0x1.d9296p-8f};
  for (size_t i = 0; i < std::size(expected); ++i) EXPECT_EQ(q[i], expected[i]) << i;
  const float* out = reinterpret_cast<const float*>((*f)->FindTensor("output.weight")->data);
  EXPECT_EQ(out[64 * 299 + 63], -0x1.7a9be6p-7f);  // the last element of the last row
}

TEST_F(MkModel, WeightsLookLikeAnInitializer) {
  const MkModelOptions o = Small("f32", "stats.gguf");
  ASSERT_TRUE(MakeRandomModel(o).ok());
  auto f = gguf::File::Open(o.output_path);
  ASSERT_TRUE(f.ok());
  double sum = 0, sum_sq = 0, max_abs = 0;
  int64_t n = 0;
  for (const gguf::TensorInfo& t : (*f)->tensors()) {
    const auto* x = reinterpret_cast<const float*>(t.data);
    if (t.name.find("norm") != std::string::npos) {
      for (int64_t i = 0; i < t.n_elements(); ++i) ASSERT_EQ(x[i], 1.0f) << t.name;
      continue;
    }
    for (int64_t i = 0; i < t.n_elements(); ++i) {
      sum += x[i];
      sum_sq += static_cast<double>(x[i]) * x[i];
      max_abs = std::max(max_abs, std::abs(static_cast<double>(x[i])));
    }
    n += t.n_elements();
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(stddev, 0.02, 0.0005);
  EXPECT_LE(max_abs, 0.02 * std::sqrt(12.0) * 1.0001);  // Irwin-Hall(4) bound: 2 sqrt(3) std
  EXPECT_GT(max_abs, 0.02 * 2.5);
}

// Each stored type holds the f32 file's values (same seed) within its
// rounding bound: per element for f16/bf16, per 32-element block (from the
// block's largest magnitude) for q8_0/q4_0.
TEST_F(MkModel, TypesHoldTheF32ValuesWithinTheirErrorBound) {
  const MkModelOptions ref_options = Small("f32", "ref.gguf", 3);
  ASSERT_TRUE(MakeRandomModel(ref_options).ok());
  auto ref = gguf::File::Open(ref_options.output_path);
  ASSERT_TRUE(ref.ok());
  for (const char* type_name : kTypes) {
    SCOPED_TRACE(type_name);
    const MkModelOptions o = Small(type_name, std::string("cmp_") + type_name + ".gguf", 3);
    ASSERT_TRUE(MakeRandomModel(o).ok());
    auto f = gguf::File::Open(o.output_path);
    ASSERT_TRUE(f.ok());
    const TensorType type = *ParseTensorType(type_name);
    for (const gguf::TensorInfo& t : (*f)->tensors()) {
      const gguf::TensorInfo* r = (*ref)->FindTensor(t.name);
      ASSERT_NE(r, nullptr) << t.name;
      ASSERT_EQ(t.dims, r->dims) << t.name;
      const int64_t cols = t.dims[0];
      const int64_t rows = t.n_elements() / cols;
      const auto* want_all = reinterpret_cast<const float*>(r->data);
      std::vector<float> got(cols);
      for (int64_t row = 0; row < rows; ++row) {
        kernels::DequantizeRow(t.type, t.data + row * RowBytes(t.type, cols), got.data(), cols);
        const float* want = want_all + row * cols;
        for (int64_t b = 0; b < cols; b += 32) {
          float amax = 0;
          for (int64_t i = b; i < b + 32; ++i) amax = std::max(amax, std::abs(want[i]));
          for (int64_t i = b; i < b + 32; ++i) {
            float bound = 0;
            switch (t.type == TensorType::kF32 ? TensorType::kF32 : type) {
              case TensorType::kF32:
                bound = 0;
                break;
              case TensorType::kF16:
                bound = std::abs(want[i]) * 0x1p-11f + 0x1p-24f;
                break;
              case TensorType::kBF16:
                bound = std::abs(want[i]) * 0x1p-8f;
                break;
              // |x - d q| <= d / 2 with d = amax / 127, plus the fp16
              // rounding of d times |q| <= 127.
              case TensorType::kQ8_0:
                bound = amax / 127 * (0.5f + 127 * 0x1p-11f) + 1e-7f;
                break;
              // d = amax / 8; the clamp of +8 to 7 costs up to a whole d.
              case TensorType::kQ4_0:
                bound = amax / 8 * (1.0f + 8 * 0x1p-11f) + 1e-7f;
                break;
              default:  // kTypes lists the types this test bounds
                FAIL() << "no bound for " << TraitsOf(type).name;
            }
            ASSERT_LE(std::abs(got[i] - want[i]), bound)
                << t.name << " row " << row << " col " << i << ": " << got[i] << " vs " << want[i];
          }
        }
      }
    }
  }
}

// Llama 3.2's shape features: heads wider than dim / heads, rope_freqs and
// a YaRN extension, written under llama.cpp's keys and read back.
TEST_F(MkModel, Llama3PositionOptionsLoad) {
  MkModelOptions o = Small("f16", "llama3.gguf");
  o.head_dim = 32;  // q_dim 128 from a 64-wide embedding
  o.rope_base = 500000.0f;
  o.rope_freqs = "llama3";
  o.rope_scaling = "yarn";
  o.rope_factor = 4.0f;
  o.rope_orig_ctx = 64;
  ASSERT_TRUE(MakeRandomModel(o).ok());
  auto model = Model::Load(o.output_path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const HParams& hp = (*model)->hparams();
  EXPECT_EQ(hp.head_dim, 32);
  EXPECT_EQ(hp.q_dim(), 128);
  EXPECT_EQ(hp.n_rot, 32);
  EXPECT_EQ(hp.rope_scaling, RopeScalingType::kYarn);
  EXPECT_EQ(hp.rope_freq_scale, 0.25f);
  EXPECT_EQ(hp.n_ctx_orig, 64);
  EXPECT_EQ((*model)->file().FindTensor("blk.0.attn_output.weight")->dims,
            (std::vector<int64_t>{128, 64}));
  // Llama 3.1's factors: wavelengths 2 pi 500000^(2i/32) below 8192/4 keep
  // their frequency (i = 0: wavelength 2 pi), above 8192 are slowed 8x
  // (i = 15: 2 pi 500000^(30/32), about 1.3e6), smoothly between.
  const std::vector<float>& f = (*model)->weights().rope_freqs;
  ASSERT_EQ(f.size(), 16u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[15], 8.0f);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]) << i;
  for (size_t i = 0; i < f.size(); ++i) {
    const double wavelen = 2 * M_PI * std::pow(500000.0, 2.0 * static_cast<double>(i) / 32);
    if (wavelen > 2048 && wavelen < 8192) {
      const double smooth = (8192 / wavelen - 1) / 3;
      EXPECT_NEAR(f[i], 1 / ((1 - smooth) / 8 + smooth), 1e-5) << i;
    }
  }
  auto session = Session::Create(**model, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  const std::vector<int32_t> ids = {1, 5, 9, 200};
  ASSERT_TRUE((*session)->Eval(ids).ok());
  const std::span<const float> logits = (*session)->last_logits();
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
}

TEST_F(MkModel, TiedOutputReusesTheEmbedding) {
  MkModelOptions o = Small("q8_0", "tied.gguf");
  o.tied = true;
  const auto size = MakeRandomModel(o);
  ASSERT_TRUE(size.ok()) << size.status().message();
  auto model = Model::Load(o.output_path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->file().FindTensor("output.weight"), nullptr);
  EXPECT_TRUE((*model)->weights().tied_output);
  MkModelOptions untied = Small("q8_0", "untied.gguf");
  const auto untied_size = MakeRandomModel(untied);
  ASSERT_TRUE(untied_size.ok());
  EXPECT_EQ(untied_size->data_bytes - size->data_bytes, RowBytes(TensorType::kQ8_0, 64) * 300);
}

TEST_F(MkModel, VocabFromCopiesTheTokenizer) {
  MkModelOptions o = Small("f16", "with_vocab.gguf");
  o.vocab_from = std::string(H2O_MODELS_DIR) + "/stories260K.gguf";
  ASSERT_TRUE(MakeRandomModel(o).ok());
  auto source = gguf::File::Open(o.vocab_from);
  auto made = gguf::File::Open(o.output_path);
  ASSERT_TRUE(source.ok() && made.ok());
  int copied = 0;
  for (const gguf::KeyValue& kv : (*source)->metadata()) {
    if (!kv.key.starts_with("tokenizer.")) continue;
    const gguf::Value* v = (*made)->Find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    EXPECT_TRUE(*v == kv.value) << kv.key;
    ++copied;
  }
  EXPECT_GE(copied, 4);
  auto model = Model::Load(o.output_path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->hparams().n_vocab, 512);  // the source's, not o.n_vocab
  EXPECT_EQ((*model)->file().GetU32("llama.vocab_size").value(), 512u);
}

TEST_F(MkModel, SharpenScalesTheOutputAndQueryKeyMatrices) {
  const MkModelOptions plain = Small("f32", "plain.gguf");
  MkModelOptions sharp = Small("f32", "sharp.gguf");
  sharp.sharpen = 8.0f;  // a power of two: the values scale exactly
  ASSERT_TRUE(MakeRandomModel(plain).ok());
  ASSERT_TRUE(MakeRandomModel(sharp).ok());
  auto a = gguf::File::Open(plain.output_path);
  auto b = gguf::File::Open(sharp.output_path);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const gguf::TensorInfo& t : (*a)->tensors()) {
    const auto* x = reinterpret_cast<const float*>(t.data);
    const auto* y = reinterpret_cast<const float*>((*b)->FindTensor(t.name)->data);
    const bool sharpened = t.name == "output.weight" || t.name.ends_with("attn_q.weight") ||
                           t.name.ends_with("attn_k.weight");
    const float gain = sharpened ? 8.0f : 1.0f;
    for (int64_t i = 0; i < t.n_elements(); ++i) ASSERT_EQ(y[i], x[i] * gain) << t.name << " " << i;
  }
}

TEST_F(MkModel, BadOptionsGiveOneLineErrors) {
  struct Case {
    std::function<void(MkModelOptions&)> change;
    const char* needle;
  };
  const Case cases[] = {
      {[](MkModelOptions& o) { o.n_embd = 66; }, "--dim 66 is not a multiple of --heads 4"},
      {[](MkModelOptions& o) { o.n_head_kv = 3; }, "--heads 4 is not a multiple of --kv-heads 3"},
      {[](MkModelOptions& o) {
         o.n_embd = 96;
         o.n_head = 32;
         o.n_head_kv = 4;
       },
       "head dimension 3 is odd"},
      {[](MkModelOptions& o) { o.head_dim = 7; }, "head dimension 7 is odd"},
      {[](MkModelOptions& o) { o.head_dim = -2; }, "--head-dim must be positive"},
      {[](MkModelOptions& o) { o.rope_scaling = "longrope"; }, "unknown --rope-scaling 'longrope'"},
      {[](MkModelOptions& o) { o.rope_factor = 0; }, "--rope-factor must be positive"},
      {[](MkModelOptions& o) { o.rope_freqs = "llama2"; }, "unknown --rope-freqs 'llama2'"},
      {[](MkModelOptions& o) { o.sharpen = -1; }, "--sharpen must be positive"},
      {[](MkModelOptions& o) { o.rope_base = 0.5f; }, "--rope-base must be above 1"},
      {[](MkModelOptions& o) { o.vocab_from = "/nonexistent/vocab.gguf"; },
       "/nonexistent/vocab.gguf"},
      {[](MkModelOptions& o) { o.n_ff = 100; }, "multiples of 32"},
      {[](MkModelOptions& o) {
         o.n_embd = 72;
         o.n_head = 4;
       },
       "multiples of 32"},
      {[](MkModelOptions& o) { o.type = "q6_k"; }, "unknown --type 'q6_k'"},
      {[](MkModelOptions& o) { o.arch = "mamba"; }, "unsupported --arch 'mamba'"},
      {[](MkModelOptions& o) {
         o.arch = "gpt2";
         o.rope_base = 500000.0f;
       },
       "--arch gpt2 has learned positions"},
      {[](MkModelOptions& o) {
         o.arch = "gptneox";
         o.tied = true;
       },
       "no --tied"},
      {[](MkModelOptions& o) { o.window = 16; }, "no sliding-window layers"},
      {[](MkModelOptions& o) { o.rope_dims = 8; }, "rotates whole heads"},
      {[](MkModelOptions& o) {
         o.arch = "qwen2";
         o.rope_dims = 7;
       },
       "--rope-dims 7 must be even"},
      {[](MkModelOptions& o) { o.rope_freqs = "longrope"; }, "unknown --rope-freqs 'longrope'"},
      {[](MkModelOptions& o) { o.norm_std = -1; }, "--norm-std must be 0 or more"},
      {[](MkModelOptions& o) { o.n_vocab = 258; }, "--vocab 258 is too small"},
      {[](MkModelOptions& o) { o.n_layer = 0; }, "--layers must be positive"},
      {[](MkModelOptions& o) { o.n_ctx = -1; }, "--ctx must be positive"},
      {[](MkModelOptions& o) { o.n_embd = 1 << 20; }, "--dim 1048576 is too large"},
      {[](MkModelOptions& o) { o.output_path.clear(); }, "no output file"},
  };
  for (const Case& c : cases) {
    MkModelOptions o = Small("q8_0", "bad.gguf");
    c.change(o);
    const Status s = MakeRandomModel(o).status();
    ASSERT_FALSE(s.ok()) << c.needle;
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    EXPECT_FALSE(std::filesystem::exists(Path("bad.gguf")));
  }
  // f16 and f32 rows have no block constraint.
  MkModelOptions o = Small("f16", "odd_ffn.gguf");
  o.n_ff = 100;
  o.n_embd = 72;
  EXPECT_TRUE(MakeRandomModel(o).ok());
}

TEST_F(MkModel, UnwritableOutputLeavesNoFile) {
  MkModelOptions o = Small("f16", "missing_dir/model.gguf");
  const Status s = MakeRandomModel(o).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(o.output_path + ": ", 0), 0u) << s.message();
  EXPECT_FALSE(std::filesystem::exists(Path("missing_dir")));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

// The writer's lazy tensors produce the same file as copied ones.
TEST_F(MkModel, LazyTensorsWriteTheSameBytesAsCopiedOnes) {
  std::vector<float> data(64 * 3);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.25f - 7.0f;
  gguf::Writer copied, lazy;
  copied.SetString("general.architecture", "test");
  lazy.SetString("general.architecture", "test");
  ASSERT_TRUE(copied.AddTensor("a", TensorType::kF32, {64, 3}, data.data(), data.size() * 4).ok());
  ASSERT_TRUE(copied.AddTensor("b", TensorType::kF32, {5}, data.data(), 5 * 4).ok());
  int calls = 0;
  ASSERT_TRUE(lazy.AddTensorLazy("a", TensorType::kF32, {64, 3},
                                 [&](void* dst) {
                                   ++calls;
                                   std::memcpy(dst, data.data(), data.size() * 4);
                                 })
                  .ok());
  ASSERT_TRUE(lazy.AddTensorLazy("b", TensorType::kF32, {5},
                                 [&](void* dst) {
                                   ++calls;
                                   std::memcpy(dst, data.data(), 5 * 4);
                                 })
                  .ok());
  EXPECT_FALSE(lazy.AddTensorLazy("a", TensorType::kF32, {4}, [](void*) {}).ok());
  EXPECT_FALSE(lazy.AddTensorLazy("c", TensorType::kQ8_0, {16}, [](void*) {}).ok());
  ASSERT_TRUE(copied.Write(Path("copied.gguf")).ok());
  ASSERT_TRUE(lazy.Write(Path("lazy.gguf")).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(ReadBytes(Path("copied.gguf")), ReadBytes(Path("lazy.gguf")));
}

}  // namespace
}  // namespace h2o
