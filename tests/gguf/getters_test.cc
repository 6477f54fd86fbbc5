// File's typed getters: conversions that are allowed and the errors otherwise.
#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

using testing::TempDir;

class GettersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("meta.gguf");
    Writer w;
    w.Set("u8", Value::U8(200));
    w.Set("i64.small", Value::I64(123));
    w.Set("i64.big", Value::I64(4294967296LL));
    w.SetI32("i32.neg", -1);
    w.SetU32("u32", 77);
    w.SetF32("f32", 0.25f);
    w.Set("f64", Value::F64(1e-5));
    w.SetBool("flag", true);
    w.SetString("name", "llama");
    w.SetStringArray("tokens", {"<unk>", "<s>", "</s>"});
    w.SetF32Array("scores", {0.5f, -1.0f});
    w.Set("scores64", Value::Array(ValueType::kFloat64, {Value::F64(2.0)}));
    w.SetI32Array("types", {1, -2, 3});
    w.Set("types.u8", Value::Array(ValueType::kUint8, {Value::U8(1), Value::U8(255)}));
    w.Set("types.u32.big",
          Value::Array(ValueType::kUint32, {Value::U32(1), Value::U32(3000000000u)}));
    ASSERT_TRUE(w.Write(path_).ok());
    auto file = File::Open(path_);
    ASSERT_TRUE(file.ok()) << file.status().message();
    file_ = std::move(file).value();
  }

  // Asserts that `status` failed with a message "path: " + `message`.
  void ExpectError(const Status& status, const std::string& message) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message(), path_ + ": " + message);
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<File> file_;
};

TEST_F(GettersTest, U32ConvertsIntegersThatFit) {
  EXPECT_EQ(file_->GetU32("u8").value(), 200u);
  EXPECT_EQ(file_->GetU32("i64.small").value(), 123u);
  EXPECT_EQ(file_->GetU32("u32").value(), 77u);
  ExpectError(file_->GetU32("i64.big").status(),
              "key 'i64.big' value 4294967296 does not fit uint32");
  ExpectError(file_->GetU32("i32.neg").status(), "key 'i32.neg' value -1 does not fit uint32");
  ExpectError(file_->GetU32("name").status(), "key 'name' has type string, expected uint32");
  ExpectError(file_->GetU32("f32").status(), "key 'f32' has type float32, expected uint32");
  ExpectError(file_->GetU32("missing").status(), "missing required key 'missing'");
}

TEST_F(GettersTest, OrVariantsFallBackOnlyWhenAbsent) {
  EXPECT_EQ(file_->GetU32Or("missing", 9).value(), 9u);
  EXPECT_EQ(file_->GetU32Or("u32", 9).value(), 77u);
  ExpectError(file_->GetU32Or("name", 9).status(), "key 'name' has type string, expected uint32");
  EXPECT_EQ(file_->GetF32Or("missing", 1.5f).value(), 1.5f);
  EXPECT_EQ(file_->GetF32Or("f32", 1.5f).value(), 0.25f);
  ExpectError(file_->GetF32Or("u32", 1.5f).status(), "key 'u32' has type uint32, expected float32");
  EXPECT_EQ(file_->GetBoolOr("missing", false).value(), false);
  EXPECT_EQ(file_->GetBoolOr("flag", false).value(), true);
  ExpectError(file_->GetBoolOr("u8", false).status(), "key 'u8' has type uint8, expected bool");
}

TEST_F(GettersTest, FloatsAcceptFloat32AndFloat64) {
  EXPECT_EQ(file_->GetF32("f32").value(), 0.25f);
  EXPECT_EQ(file_->GetF32("f64").value(), 1e-5f);
  ExpectError(file_->GetF32("missing").status(), "missing required key 'missing'");
}

TEST_F(GettersTest, Strings) {
  EXPECT_EQ(file_->GetString("name").value(), "llama");
  ExpectError(file_->GetString("tokens").status(),
              "key 'tokens' has type array<string>, expected string");
  EXPECT_EQ(file_->GetStringArray("tokens").value(),
            (std::vector<std::string>{"<unk>", "<s>", "</s>"}));
  ExpectError(file_->GetStringArray("types").status(),
              "key 'types' has type array<int32>, expected array<string>");
  ExpectError(file_->GetStringArray("name").status(),
              "key 'name' has type string, expected array<string>");
}

TEST_F(GettersTest, NumericArrays) {
  EXPECT_EQ(file_->GetF32Array("scores").value(), (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(file_->GetF32Array("scores64").value(), (std::vector<float>{2.0f}));
  ExpectError(file_->GetF32Array("types").status(),
              "key 'types' has type array<int32>, expected array<float32>");
  EXPECT_EQ(file_->GetI32Array("types").value(), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(file_->GetI32Array("types.u8").value(), (std::vector<int32_t>{1, 255}));
  ExpectError(file_->GetI32Array("types.u32.big").status(),
              "key 'types.u32.big' item 1 value 3000000000 does not fit int32");
  ExpectError(file_->GetI32Array("scores").status(),
              "key 'scores' has type array<float32>, expected array<int32>");
  ExpectError(file_->GetI32Array("missing").status(), "missing required key 'missing'");
}

}  // namespace
}  // namespace h2o::gguf
