// llama-server's introspection endpoints on a real h2o serve: /tokenize and
// /detokenize (its shapes, against the tokenizer and the text itself),
// /props, /slots while a request runs and after, /v1/models/{id}, and what
// each answers to a bad body or a missing key.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::PostStreaming;
using testing::Running;
using testing::StoriesTokenizer;

// The status and parsed body of a POST that may fail.
std::pair<int, json> PostAny(const Running& s, const std::string& path, const std::string& body) {
  auto r = s.Client().Post(path.c_str(), body, "application/json");
  EXPECT_TRUE(r);
  if (!r) return {0, {}};
  return {r->status, json::parse(r->body, nullptr, false)};
}

TEST(ServeInfo, TokenizeGivesTheTokenizersIdsAndPiecesThatSpellTheText) {
  Running s;
  const std::string text = "Once upon a time, there was a little dog.";
  const json plain = s.Post("/tokenize", {{"content", text}});
  EXPECT_EQ(plain["tokens"].get<std::vector<int32_t>>(), StoriesTokenizer().Encode(text, false));

  const json special = s.Post("/tokenize", {{"content", text}, {"add_special", true}});
  ASSERT_EQ(special["tokens"].size(), plain["tokens"].size() + 1);
  EXPECT_EQ(special["tokens"][0], StoriesTokenizer().bos_id());

  const json pieces = s.Post("/tokenize", {{"content", text}, {"with_pieces", true}});
  std::string spelled;
  ASSERT_EQ(pieces["tokens"].size(), plain["tokens"].size());
  for (size_t i = 0; i < pieces["tokens"].size(); ++i) {
    EXPECT_EQ(pieces["tokens"][i]["id"], plain["tokens"][i]);
    spelled += pieces["tokens"][i]["piece"].get<std::string>();
  }
  // SentencePiece: the dummy prefix's space starts the first piece.
  EXPECT_EQ(spelled, " " + text);

  const json back = s.Post("/detokenize", {{"tokens", plain["tokens"]}});
  EXPECT_EQ(back["content"], text);
}

TEST(ServeInfo, BadBodiesAre400sNamingTheField) {
  Running s;
  const int32_t n_vocab = StoriesTokenizer().n_vocab();
  struct Case {
    const char* path;
    std::string body;
    const char* param;  // nullptr: the body as a whole
  };
  const Case cases[] = {
      {"/tokenize", "{}", "content"},
      {"/tokenize", R"({"content": 7})", "content"},
      {"/tokenize", R"({"content": "a", "parse_special": false})", "parse_special"},
      {"/tokenize", R"({"content": "a", "with_pieces": "yes"})", "with_pieces"},
      {"/tokenize", "not json", nullptr},
      {"/tokenize", "[1, 2]", nullptr},
      {"/detokenize", R"({"tokens": "abc"})", "tokens"},
      {"/detokenize", R"({"tokens": [1, -1]})", "tokens"},
      {"/detokenize", fmt::format(R"({{"tokens": [1, {}]}})", n_vocab), "tokens"},
      {"/detokenize", R"({"tokens": [1.5]})", "tokens"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const auto [status, body] = PostAny(s, c.path, c.body);
    EXPECT_EQ(status, 400);
    ASSERT_TRUE(body.contains("error"));
    if (c.param) {
      EXPECT_EQ(body["error"]["param"], c.param);
    } else {
      EXPECT_TRUE(body["error"]["param"].is_null());
    }
  }
  // And the server goes on.
  EXPECT_EQ(s.Post("/detokenize", {{"tokens", json::array()}})["content"], "");
}

TEST(ServeInfo, PropsTellTheServersSettings) {
  ServerOptions o = Running::Defaults();
  o.parallel = 3;
  o.default_kv = ParseKvSpec("h2o:heavy=10%,recent=10%").value();
  o.prompt_cache_bytes = 1 << 20;
  Running s(o);
  auto r = s.Client().Get("/props");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const json props = json::parse(r->body);
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], 512);
  EXPECT_EQ(props["default_generation_settings"]["params"]["cache_prompt"], true);
  EXPECT_EQ(props["total_slots"], 3);
  EXPECT_EQ(props["model_alias"], "stories260K");
  EXPECT_EQ(props["chat_template"], "chatml");
  EXPECT_EQ(props["h2o"]["kv"], "h2o:heavy=10%,recent=10%");
  EXPECT_EQ(props["h2o"]["prompt_cache_bytes"], 1 << 20);
}

TEST(ServeInfo, SlotsShowARunningRequestAndNothingOnceItEnds) {
  Running s;
  json seen;
  // While the stream runs (its first chunk came), /slots holds it; on a
  // loaded machine the request may end first, so it is tried again.
  for (int attempt = 0; attempt < 5 && seen.empty(); ++attempt) {
    std::atomic<bool> asked{false};
    const bool done = PostStreaming(s.Client(), "/v1/completions",
                                    {{"prompt", "Once upon a time"},
                                     {"max_tokens", 500},
                                     {"temperature", 0},
                                     {"ignore_eos", true},
                                     {"stream", true},
                                     {"kv", "h2o:heavy=8,recent=8"}},
                                    [&](const char*, size_t) {
                                      if (!asked.exchange(true)) {
                                        auto r = s.Client().Get("/slots");
                                        if (r && r->status == 200) seen = json::parse(r->body);
                                      }
                                      return true;
                                    });
    ASSERT_TRUE(done);
    ASSERT_TRUE(seen.is_array());
  }
  ASSERT_EQ(seen.size(), 1u) << seen.dump();
  EXPECT_EQ(seen[0]["n_prompt_tokens"], 5);
  EXPECT_EQ(seen[0]["params"]["kv"], "h2o:heavy=8,recent=8");
  EXPECT_EQ(seen[0]["params"]["n_predict"], 500);
  EXPECT_EQ(seen[0]["is_processing"], true);
  EXPECT_GT(seen[0]["kv_held_bytes"].get<int64_t>(), 0);
  EXPECT_LE(seen[0]["kv_held_bytes"].get<int64_t>(), seen[0]["kv_reserved_bytes"].get<int64_t>());

  // Finished: the slot is gone at the next step boundary.
  json after;
  for (int i = 0; i < 1000; ++i) {
    after = json::parse(s.Client().Get("/slots")->body);
    if (after.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(after, json::array());
}

TEST(ServeInfo, AModelByItsIdAnd404ForAnother) {
  Running s;
  auto r = s.Client().Get("/v1/models/stories260K");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const json model = json::parse(r->body);
  EXPECT_EQ(model["id"], "stories260K");
  EXPECT_EQ(model["object"], "model");
  EXPECT_EQ(model["meta"]["n_ctx"], 512);
  const json list = json::parse(s.Client().Get("/v1/models")->body);
  EXPECT_EQ(list["data"][0], model);

  r = s.Client().Get("/v1/models/gpt-4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "model_not_found");
}

TEST(ServeInfo, WithApiKeysTheEndpointsNeedOne) {
  ServerOptions o = Running::Defaults();
  o.api_keys = {"secret"};
  Running s(o);
  for (const char* path : {"/props", "/slots"}) {
    auto r = s.Client().Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << path;
  }
  const auto [status, body] = PostAny(s, "/tokenize", R"({"content": "a"})");
  EXPECT_EQ(status, 401);
  httplib::Client c = s.Client();
  c.set_bearer_token_auth("secret");
  auto r = c.Get("/props");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(s.Client().Get("/health")->status, 200);
}

}  // namespace
}  // namespace h2o::server
