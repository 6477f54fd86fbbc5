// GET /v1/kv/{id} and the playground page over real HTTP: a finished
// request's cache equals `h2o generate --kv-dump` of the same run, a
// running one is readable while it runs, unknown ids and bad layers are
// JSON errors, old requests are forgotten after kKeepFinishedKv (16), a
// cache is readable only when kept (--kv-endpoint, or the request's
// "kv_endpoint": true) and only with the API key that made it, and "/"
// serves the page compiled in from web/playground.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_binary.h"
#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::Running;
using testing::StoriesTokenizer;

const std::string kPrompt = "Once upon a time";

// A server that keeps every request's cache readable (--kv-endpoint).
ServerOptions KvEndpointOn() {
  ServerOptions o = Running::Defaults();
  o.kv_endpoint = true;
  return o;
}

json GetJson(const Running& s, const std::string& path, int want_status,
             const httplib::Headers& headers = {}) {
  auto r = s.Client().Get(path.c_str(), headers);
  EXPECT_TRUE(r) << path;
  if (!r) return {};
  EXPECT_EQ(r->status, want_status) << path << " -> " << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
  return json::parse(r->body);
}

// `h2o generate --kv-dump` of the run the server is asked for: same prompt,
// policy, greedy, context (prompt + max_tokens), chunk and threads.
json GenerateKvDump(const std::string& kv, int32_t max_tokens, int32_t chunk) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("h2o_kv_endpoint_" + std::to_string(::getpid()) + ".json");
  const int32_t n_ctx = static_cast<int32_t>(StoriesTokenizer().Encode(kPrompt, true).size()) +
                        max_tokens;
  const auto r = h2o::testing::RunH2o(
      "generate -m " + h2o::testing::ModelPath() + " -t 2 -p '" + kPrompt + "' -n " +
      std::to_string(max_tokens) + " --temp 0 --ignore-eos --kv '" + kv + "' --chunk " +
      std::to_string(chunk) + " -c " + std::to_string(n_ctx) + " --kv-dump " + path.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json dump = json::parse(h2o::testing::ReadFileOrEmpty(path.string()), nullptr, false);
  std::filesystem::remove(path);
  return dump;
}

// Both paths run the same kernels on the same tokens in the same order (a
// server batch of one request is the generate loop's batch), so positions
// and scores are compared exactly, not within a bound.
TEST(KvEndpoint, FinishedRequestEqualsGenerateKvDump) {
  Running s(KvEndpointOn());
  const int32_t n_prompt = static_cast<int32_t>(StoriesTokenizer().Encode(kPrompt, true).size());
  for (const std::string kv : {"h2o:heavy=8,recent=8", "full", "local:recent=10"}) {
    SCOPED_TRACE(kv);
    const int32_t max_tokens = 24;
    auto r = s.Client().Post("/v1/completions",
                             json({{"prompt", kPrompt},
                                   {"max_tokens", max_tokens},
                                   {"temperature", 0},
                                   {"ignore_eos", true},
                                   {"kv", kv}})
                                 .dump(),
                             "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const std::string id = json::parse(r->body)["id"];
    EXPECT_EQ(r->get_header_value("X-Request-Id"), id);

    const json state = GetJson(s, "/v1/kv/" + id, 200);
    const json dump = GenerateKvDump(kv, max_tokens, Running::Defaults().sequence.max_chunk);
    ASSERT_FALSE(dump.is_discarded());
    for (const char* key : {"policy", "budget", "capacity", "scores_tracked", "layers"}) {
      EXPECT_EQ(state[key], dump[key]) << key;
    }
    EXPECT_EQ(state["id"], id);
    EXPECT_EQ(state["status"], "finished");
    // The last generated token is sampled, never fed.
    const int32_t n_past = n_prompt + max_tokens - 1;
    EXPECT_EQ(state["n_past"], n_past);
    EXPECT_EQ(state["n_layer"], testing::Stories().hparams().n_layer);
    EXPECT_EQ(state["n_head_kv"], testing::Stories().hparams().n_head_kv);
    ASSERT_EQ(state["tokens"].size(), static_cast<size_t>(n_past));
    EXPECT_EQ(state["tokens"][1], StoriesTokenizer().TokenToPiece(
                                      StoriesTokenizer().Encode(kPrompt, true)[1]));
    // The summary counts what the layers list, and the evictions are the
    // slots every token entered but no longer holds.
    int64_t kept = 0;
    for (const json& layer : state["layers"]) {
      for (const json& head : layer["heads"]) kept += std::ssize(head["positions"]);
    }
    int64_t summed = 0;
    for (const json& n : state["slots_per_position"]) summed += n.get<int64_t>();
    EXPECT_EQ(summed, kept);
    const int64_t slots = int64_t{n_past} * state["n_layer"].get<int>() *
                          state["n_head_kv"].get<int>();
    EXPECT_EQ(state["evictions"], slots - kept);
    EXPECT_EQ(state["evictions"], json::parse(r->body)["usage"]["evictions"]);
    // Kept rows against all rows: a full cache keeps what it would need.
    EXPECT_EQ(state["kv_bytes_kept"].get<int64_t>() * slots,
              state["kv_bytes_full"].get<int64_t>() * kept);
    EXPECT_GT(state["kv_bytes_full"].get<int64_t>(), 0);
    if (kv == "full") {
      EXPECT_EQ(state["kv_bytes_kept"], state["kv_bytes_full"]);
      EXPECT_EQ(state["evictions"], 0);
    } else {
      EXPECT_GT(state["evictions"].get<int64_t>(), 0);
    }
    // One layer alone is that layer of the dump.
    const json layer2 = GetJson(s, "/v1/kv/" + id + "?layer=2", 200);
    EXPECT_EQ(layer2["layers"], json::array({dump["layers"][2]}));
    EXPECT_EQ(GetJson(s, "/v1/kv/" + id + "?layer=all", 200)["layers"], dump["layers"]);
  }
}

TEST(KvEndpoint, HeavyHitterBudgetHoldsInEveryHead) {
  Running s(KvEndpointOn());
  const json r = s.Post("/v1/completions", {{"prompt", kPrompt},
                                            {"max_tokens", 30},
                                            {"temperature", 0},
                                            {"ignore_eos", true},
                                            {"kv", "h2o:heavy=8,recent=8"}});
  const json state = GetJson(s, "/v1/kv/" + r["id"].get<std::string>() + "?layer=0", 200);
  EXPECT_EQ(state["budget"], 16);
  ASSERT_EQ(state["layers"].size(), 1u);
  ASSERT_EQ(state["layers"][0]["heads"].size(), state["n_head_kv"].get<size_t>());
  for (const json& head : state["layers"][0]["heads"]) {
    EXPECT_EQ(head["positions"].size(), 16u);
    EXPECT_EQ(head["scores"].size(), 16u);
    EXPECT_TRUE(std::is_sorted(head["positions"].begin(), head["positions"].end()));
  }
}

// A stream is read from its first chunk to its end while another client
// reads the cache: n_past only grows, and hanging up leaves the final state.
TEST(KvEndpoint, RunningRequestIsReadableAndItsFinalStateStays) {
  ServerOptions o = KvEndpointOn();
  o.sequence.n_ctx = 2048;
  Running s(o);
  const json body = {{"prompt", kPrompt},   {"max_tokens", 1500}, {"ignore_eos", true},
                     {"temperature", 0},    {"stream", true},     {"kv", "h2o:heavy=8,recent=8"}};
  std::string received;
  std::string id;
  std::vector<int> n_past;
  EXPECT_FALSE(testing::PostStreaming(s.Client(), "/v1/completions", body, [&](const char* d, size_t n) {
    received.append(d, n);
    const std::vector<std::string> data = testing::SseData(received);
    if (data.empty()) return true;
    if (id.empty()) id = json::parse(data[0])["id"];
    const json state = GetJson(s, "/v1/kv/" + id + "?layer=1", 200);
    EXPECT_EQ(state["status"], "running");
    n_past.push_back(state["n_past"]);
    for (const json& head : state["layers"][0]["heads"]) {
      EXPECT_LE(head["positions"].size(), 16u);
    }
    return n_past.size() < 3;  // then hang up
  }));
  ASSERT_EQ(n_past.size(), 3u);
  EXPECT_GT(n_past[0], 0);
  EXPECT_TRUE(std::is_sorted(n_past.begin(), n_past.end()));
  json state;
  for (int i = 0; i < 200; ++i) {
    state = GetJson(s, "/v1/kv/" + id, 200);
    if (state["status"] == "finished") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(state["status"], "finished");
  EXPECT_LT(state["n_past"].get<int>(), 1500);  // cancelled long before its end
  EXPECT_GE(state["n_past"].get<int>(), n_past.back());
}

TEST(KvEndpoint, UnknownIdsAndBadLayersAreJsonErrors) {
  Running s(KvEndpointOn());
  const json r = s.Post("/v1/completions", {{"prompt", kPrompt}, {"max_tokens", 3}});
  const std::string id = r["id"];
  const json missing = GetJson(s, "/v1/kv/cmpl-999999", 404);
  EXPECT_EQ(missing["error"]["code"], "request_not_found");
  EXPECT_NE(missing["error"]["message"].get<std::string>().find("cmpl-999999"),
            std::string::npos);
  const int n_layer = testing::Stories().hparams().n_layer;
  for (const std::string& layer :
       std::vector<std::string>{"-1", std::to_string(n_layer), "x", "1.5", "", "2x"}) {
    const json e = GetJson(s, "/v1/kv/" + id + "?layer=" + layer, 400);
    EXPECT_EQ(e["error"]["param"], "layer") << layer;
    EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  }
  GetJson(s, "/v1/kv/" + id + "?layer=" + std::to_string(n_layer - 1), 200);
}

TEST(KvEndpoint, KeepsTheLast16FinishedRequests) {
  Running s(KvEndpointOn());
  std::vector<std::string> ids;
  for (int i = 0; i < 17; ++i) {
    ids.push_back(s.Post("/v1/completions", {{"prompt", kPrompt}, {"max_tokens", 1}})["id"]);
  }
  GetJson(s, "/v1/kv/" + ids[0], 404);
  GetJson(s, "/v1/kv/" + ids[1], 200);
  GetJson(s, "/v1/kv/" + ids[16], 200);
}

TEST(KvEndpoint, NeedsTheApiKeyButThePageDoesNot) {
  ServerOptions o = KvEndpointOn();
  o.api_keys = {"sekret"};
  Running s(o);
  EXPECT_EQ(s.Client().Get("/v1/kv/cmpl-1")->status, 401);
  EXPECT_EQ(s.Client().Get("/")->status, 200);
}

// Without --kv-endpoint a request's cache is kept only when it asks, as
// the playground's requests do.
TEST(KvEndpoint, OffUnlessTheServerOrTheRequestTurnsItOn) {
  Running s;
  const json plain = s.Post("/v1/completions", {{"prompt", kPrompt}, {"max_tokens", 2}});
  const json e = GetJson(s, "/v1/kv/" + plain["id"].get<std::string>(), 404);
  EXPECT_EQ(e["error"]["code"], "request_not_found");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("kv_endpoint"), std::string::npos);
  const json asked = s.Post("/v1/completions",
                            {{"prompt", kPrompt}, {"max_tokens", 2}, {"kv_endpoint", true}});
  EXPECT_EQ(GetJson(s, "/v1/kv/" + asked["id"].get<std::string>(), 200)["status"], "finished");
}

// With several API keys, a cache is read back only with the key that made
// the request: another key gets the same 404 as an unknown id.
TEST(KvEndpoint, ReadableOnlyWithTheKeyThatMadeIt) {
  ServerOptions o = KvEndpointOn();
  o.api_keys = {"alice-key", "bob-key"};
  Running s(o);
  const httplib::Headers alice = {{"Authorization", "Bearer alice-key"}};
  const httplib::Headers bob = {{"Authorization", "Bearer bob-key"}};
  auto r = s.Client().Post("/v1/completions", alice,
                           json({{"prompt", "My password is"}, {"max_tokens", 2}}).dump(),
                           "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string id = json::parse(r->body)["id"];
  EXPECT_EQ(GetJson(s, "/v1/kv/" + id, 200, alice)["id"], id);
  EXPECT_EQ(GetJson(s, "/v1/kv/" + id, 404, bob)["error"]["code"], "request_not_found");
}

// Ids are 128 random bits: nothing to count up from.
TEST(KvEndpoint, RequestIdsAreUnguessable) {
  Running s;
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(s.Post("/v1/completions", {{"prompt", kPrompt}, {"max_tokens", 1}})["id"]);
  }
  ids.push_back(s.Post("/v1/chat/completions",
                       {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                        {"max_tokens", 1}})["id"]);
  std::set<std::string> distinct;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string prefix = i < 3 ? "cmpl-" : "chatcmpl-";
    ASSERT_TRUE(ids[i].starts_with(prefix)) << ids[i];
    const std::string hex = ids[i].substr(prefix.size());
    EXPECT_EQ(hex.size(), 32u) << ids[i];
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << ids[i];
    distinct.insert(hex);
  }
  EXPECT_EQ(distinct.size(), ids.size());
}

TEST(Playground, RootServesThePageCompiledIn) {
  Running s;
  struct File {
    std::string path, source, type;
  };
  const std::string dir = std::string(H2O_SOURCE_DIR) + "/web/playground/";
  for (const File& f : {File{"/", "index.html", "text/html; charset=utf-8"},
                        File{"/playground.js", "playground.js", "text/javascript; charset=utf-8"},
                        File{"/playground.css", "playground.css", "text/css; charset=utf-8"}}) {
    auto r = s.Client().Get(f.path.c_str());
    ASSERT_TRUE(r) << f.path;
    EXPECT_EQ(r->status, 200) << f.path;
    EXPECT_EQ(r->get_header_value("Content-Type"), f.type) << f.path;
    const std::string source = h2o::testing::ReadFileOrEmpty(dir + f.source);
    ASSERT_FALSE(source.empty()) << dir + f.source;
    EXPECT_EQ(r->body, source) << f.path;
  }
  EXPECT_NE(s.Client().Get("/")->body.find("<canvas id=\"map\""), std::string::npos);
  EXPECT_EQ(s.Client().Get("/nothing.js")->status, 404);
}

}  // namespace
}  // namespace h2o::server
