// llama2.c -> GGUF: the converted stories260K must run exactly like the
// shipped GGUF (same tensors, same vocabulary, same greedy ids).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "convert/llama2c.h"
#include "gguf/file.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "greedy.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o {
namespace {

class Llama2cConvert : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_convert_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Models(const std::string& name) { return std::string(H2O_MODELS_DIR) + "/" + name; }

  std::filesystem::path dir_;
};

std::vector<int32_t> GreedyIds(const Model& model, std::vector<int32_t> ids, int n) {
  auto session = Session::Create(model, {});
  EXPECT_TRUE(session.ok());
  return testing::GreedyContinue(**session, std::move(ids), n);
}

TEST_F(Llama2cConvert, Stories260KEqualsShippedGguf) {
  Llama2cConvertOptions o;
  o.checkpoint_path = Models("stories260K.bin");
  o.tokenizer_path = Models("tok512.bin");
  o.output_path = Path("converted.gguf");
  const Status s = ConvertLlama2c(o);
  ASSERT_TRUE(s.ok()) << s.message();

  auto converted = gguf::File::Open(o.output_path);
  auto shipped = gguf::File::Open(testing::ModelPath());
  ASSERT_TRUE(converted.ok() && shipped.ok());
  for (const auto& t : (*converted)->tensors()) {
    const gguf::TensorInfo* ref = (*shipped)->FindTensor(t.name);
    ASSERT_NE(ref, nullptr) << t.name;
    EXPECT_EQ(t.dims, ref->dims) << t.name;
    ASSERT_EQ(t.nbytes, ref->nbytes) << t.name;
    EXPECT_EQ(std::memcmp(t.data, ref->data, t.nbytes), 0) << t.name;
  }
  // The shipped file stores the tied classifier explicitly; ours leaves it tied.
  EXPECT_EQ((*converted)->tensors().size() + 1, (*shipped)->tensors().size());

  auto vocab_a = LoadVocabFromGguf(**converted);
  auto vocab_b = LoadVocabFromGguf(**shipped);
  ASSERT_TRUE(vocab_a.ok() && vocab_b.ok());
  EXPECT_EQ(vocab_a->tokens, vocab_b->tokens);
  EXPECT_EQ(vocab_a->scores, vocab_b->scores);
  EXPECT_EQ(vocab_a->types, vocab_b->types);

  auto model_a = Model::Load(o.output_path);
  auto model_b = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model_a.ok()) << model_a.status().message();
  ASSERT_TRUE(model_b.ok());
  EXPECT_EQ((*model_a)->hparams().n_ctx_train, 512);  // the checkpoint's own seq_len
  EXPECT_EQ(GreedyIds(**model_a, {1}, 80), GreedyIds(**model_b, {1}, 80));
}

TEST_F(Llama2cConvert, TruncatedCheckpointFailsAndWritesNothing) {
  const std::string bytes = testing::ReadFileOrEmpty(Models("stories260K.bin"));
  for (size_t len : {size_t{0}, size_t{10}, size_t{28}, size_t{1000}, bytes.size() - 4}) {
    const std::string in = Path("cut.bin");
    std::ofstream(in, std::ios::binary) << bytes.substr(0, len);
    Llama2cConvertOptions o;
    o.checkpoint_path = in;
    o.output_path = Path("out.gguf");
    const Status s = ConvertLlama2c(o);
    ASSERT_FALSE(s.ok()) << len;
    EXPECT_EQ(s.message().rfind(in + ": ", 0), 0u) << s.message();
    EXPECT_FALSE(std::filesystem::exists(o.output_path));
  }
}

TEST_F(Llama2cConvert, MissingTokenizerFails) {
  Llama2cConvertOptions o;
  o.checkpoint_path = Models("stories260K.bin");
  o.tokenizer_path = Path("no_such_tokenizer.bin");
  o.output_path = Path("out.gguf");
  const Status s = ConvertLlama2c(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no_such_tokenizer.bin"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(o.output_path));
}

}  // namespace
}  // namespace h2o
