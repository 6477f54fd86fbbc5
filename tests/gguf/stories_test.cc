// The bundled stories260K.gguf: what a real llama.cpp-written file holds,
// and that every truncation of it fails cleanly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

const std::string kModel = std::string(H2O_MODELS_DIR) + "/stories260K.gguf";

TEST(StoriesTest, MetadataAndTensors) {
  Result<std::unique_ptr<File>> opened = File::Open(kModel);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  const File& f = *opened.value();
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.file_size(), 1185376u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.GetString("general.architecture").value(), "llama");
  EXPECT_EQ(f.GetU32("llama.block_count").value(), 5u);
  EXPECT_EQ(f.GetU32("llama.embedding_length").value(), 64u);
  EXPECT_EQ(f.GetU32("llama.feed_forward_length").value(), 172u);
  EXPECT_EQ(f.GetU32("llama.attention.head_count").value(), 8u);
  EXPECT_EQ(f.GetU32("llama.attention.head_count_kv").value(), 4u);
  EXPECT_EQ(f.GetU32("llama.context_length").value(), 512u);  // what it was trained at
  EXPECT_FLOAT_EQ(f.GetF32("llama.attention.layer_norm_rms_epsilon").value(), 1e-5f);
  EXPECT_EQ(f.GetU32("tokenizer.ggml.bos_token_id").value(), 1u);
  EXPECT_EQ(f.GetU32("tokenizer.ggml.eos_token_id").value(), 2u);

  Result<std::vector<std::string>> tokens = f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 512u);
  EXPECT_EQ((*tokens)[0], "<unk>");
  EXPECT_EQ((*tokens)[1], "<s>");
  EXPECT_EQ((*tokens)[2], "</s>");
  EXPECT_EQ(f.GetF32Array("tokenizer.ggml.scores")->size(), 512u);
  EXPECT_EQ(f.GetI32Array("tokenizer.ggml.token_type")->size(), 512u);

  // 5 blocks of 9 tensors + token_embd, output_norm, output.
  EXPECT_EQ(f.tensors().size(), 48u);
  const TensorInfo* embd = f.FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->dims, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(embd->type, TensorType::kF32);
  EXPECT_EQ(embd->nbytes, 64u * 512u * 4u);
  const TensorInfo* down = f.FindTensor("blk.4.ffn_down.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->dims, (std::vector<int64_t>{172, 64}));
  EXPECT_EQ(f.FindTensor("blk.5.ffn_down.weight"), nullptr);

  // The embedding is bit-identical to the llama2.c checkpoint's, which
  // follows a header of 7 int32 (dim, hidden, layers, heads, kv heads,
  // vocab, seq len): an independent check of the data pointer.
  const std::vector<uint8_t> bin =
      testing::ReadBytes(std::string(H2O_MODELS_DIR) + "/stories260K.bin");
  ASSERT_GE(bin.size(), 28u + embd->nbytes);
  int32_t header[7];
  std::memcpy(header, bin.data(), sizeof(header));
  ASSERT_EQ(header[0], 64);
  ASSERT_EQ(header[5], 512);
  EXPECT_EQ(std::memcmp(embd->data, bin.data() + 28, embd->nbytes), 0);
}

// Every prefix of the file shorter than the end of its last tensor must fail
// with an error naming the path (the last tensor ends exactly at the end of
// this file). The file is truncated in place, longest prefix first.
TEST(StoriesTest, TruncationSweepAlwaysFailsCleanly) {
  Result<std::unique_ptr<File>> full = File::Open(kModel);
  ASSERT_TRUE(full.ok());
  uint64_t end = 0;
  for (const TensorInfo& t : full.value()->tensors()) {
    end = std::max<uint64_t>(end, full.value()->data_offset() + t.offset + t.nbytes);
  }
  ASSERT_EQ(end, full.value()->file_size());

  testing::TempDir dir;
  const std::string path = dir.File("cut.gguf");
  std::filesystem::copy_file(kModel, path);
  std::vector<uint64_t> lengths;
  for (uint64_t len = end - 1; len >= 997; len -= 997) lengths.push_back(len);
  for (uint64_t len = 0; len < 200; ++len) lengths.push_back(199 - len);
  lengths.insert(lengths.begin(),
                 {end - 1, end - 4, full.value()->data_offset(), full.value()->data_offset() - 1});
  std::sort(lengths.rbegin(), lengths.rend());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (uint64_t len : lengths) {
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(len)), 0);
    Result<std::unique_ptr<File>> file = File::Open(path);
    ASSERT_FALSE(file.ok()) << "opened a prefix of " << len << " bytes";
    EXPECT_EQ(file.status().message().rfind(path + ": ", 0), 0u) << file.status().message();
  }
  EXPECT_GT(lengths.size(), 1300u);
}

}  // namespace
}  // namespace h2o::gguf
