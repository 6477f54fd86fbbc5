// POST /v1/embeddings on a real h2o serve (--embeddings): the vectors are
// Engine::Embed's for the same tokens, run here on an engine of our own;
// text and id inputs agree; base64 is the float32 bytes; bad bodies are
// 400s naming the field, and a server without --embeddings answers 501.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kv/kv_spec.h"
#include "runtime/engine.h"
#include "server/embeddings.h"
#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::Running;
using testing::Stories;
using testing::StoriesTokenizer;

ServerOptions WithEmbeddings() {
  ServerOptions o = Running::Defaults();
  o.embeddings = true;
  return o;
}

std::vector<float> Reference(const std::vector<int32_t>& ids) {
  auto engine = Engine::Create(Stories(), {.n_threads = 1, .max_batch_tokens = 64}).value();
  SequenceOptions o;
  o.n_ctx = static_cast<int32_t>(ids.size());
  o.max_chunk = o.n_ctx;
  auto sequence = engine->NewSequence(o).value();
  return engine->Embed(*sequence, ids).value();
}

TEST(ServeEmbeddings, TheEnginesVectorsForTextAndIds) {
  Running s(WithEmbeddings());
  const std::vector<int32_t> ids = StoriesTokenizer().Encode("Once upon a time", true);
  const json r = s.Post("/v1/embeddings", {{"input", {"Once upon a time", "The cat"}}});
  EXPECT_EQ(r["object"], "list");
  EXPECT_EQ(r["model"], "stories260K");
  ASSERT_EQ(r["data"].size(), 2u);
  EXPECT_EQ(r["data"][1]["index"], 1);
  const std::vector<float> got = r["data"][0]["embedding"].get<std::vector<float>>();
  const std::vector<float> want = Reference(ids);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  EXPECT_EQ(r["usage"]["prompt_tokens"],
            ids.size() + StoriesTokenizer().Encode("The cat", true).size());
  // The same input as ids, and base64 of the same float32 values.
  const json by_ids = s.Post("/v1/embeddings", {{"input", ids}});
  EXPECT_EQ(by_ids["data"][0]["embedding"], r["data"][0]["embedding"]);
  const json encoded =
      s.Post("/v1/embeddings", {{"input", {ids}}, {"encoding_format", "base64"}});
  const std::string expected(reinterpret_cast<const char*>(got.data()), got.size() * sizeof(float));
  EXPECT_EQ(encoded["data"][0]["embedding"], Base64(expected));
}

TEST(ServeEmbeddings, Base64AsRfc4648) {
  // RFC 4648 section 10's test vectors.
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

TEST(ServeEmbeddings, BadInputsAre400sAndWithoutTheFlag501) {
  Running s(WithEmbeddings());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({})", "input"},
      {R"({"input": ""})", "input"},
      {R"({"input": []})", "input"},
      {R"({"input": ["a", [1, 2]]})", "input"},
      {R"({"input": [1, -2]})", "input"},
      {R"({"input": [100000]})", "input"},
      {R"({"input": "a", "encoding_format": "int8"})", "encoding_format"},
      {R"({"input": "a", "dimensions": 32})", "dimensions"},
      {"[1]", ""},
  };
  for (const auto& [body, param] : bad) {
    auto r = s.Client().Post("/v1/embeddings", body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << body << " " << r->body;
    const json e = json::parse(r->body)["error"];
    if (!param.empty()) {
      EXPECT_EQ(e["param"], param) << body;
    }
  }
  std::vector<int32_t> long_input(513, 5);  // the context is 512
  auto r = s.Client().Post("/v1/embeddings", json({{"input", long_input}}).dump(),
                           "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "context_length_exceeded");
  // The server still answers.
  EXPECT_EQ(s.Post("/v1/embeddings", {{"input", "ok"}})["data"].size(), 1u);

  Running plain;
  auto no = plain.Client().Post("/v1/embeddings", R"({"input": "a"})", "application/json");
  ASSERT_TRUE(no);
  EXPECT_EQ(no->status, 501);
}

}  // namespace
}  // namespace h2o::server
