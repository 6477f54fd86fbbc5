// h2o serve over real HTTP on 127.0.0.1, in process: completions (text and
// token ids), chat, SSE framing, stop strings, per-request KV policies run
// together giving what each gives alone, concurrent clients, a client that
// leaves mid-stream, auth, limits, bad requests, and draining.
#include "server/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/engine.h"
#include "runtime/generate.h"
#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::PostStreaming;
using testing::GreedyAlone;
using testing::Running;
using testing::SseData;
using testing::Stories;
using testing::StoriesTokenizer;

// What the runtime's generate loop gives alone for this prompt and policy
// (greedy), as text.
std::string Alone(const std::string& prompt, const std::string& kv, int32_t max_tokens) {
  return GreedyAlone(StoriesTokenizer().Encode(prompt, true), kv, max_tokens).text;
}

TEST(Serve, CompletionMatchesGenerateAndReportsUsage) {
  Running s;
  const json r = s.Post("/v1/completions", {{"prompt", "Once upon a time"},
                                            {"max_tokens", 30},
                                            {"temperature", 0},
                                            {"kv", "h2o:heavy=8,recent=8"}});
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["model"], "stories260K");
  EXPECT_EQ(r["choices"][0]["text"], Alone("Once upon a time", "h2o:heavy=8,recent=8", 30));
  EXPECT_EQ(r["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(r["usage"]["completion_tokens"].get<int>() + 5, r["usage"]["total_tokens"].get<int>());
  EXPECT_EQ(r["usage"]["kv_policy"], "h2o:heavy=8,recent=8");
  EXPECT_GT(r["usage"]["evictions"].get<int>(), 0);  // 35 tokens through a 16-token cache
  EXPECT_GT(r["usage"]["kv_bytes"].get<int>(), 0);
}

TEST(Serve, TokenIdPromptsAreUsedAsGiven) {
  Running s;
  const std::vector<int32_t> ids = StoriesTokenizer().Encode("Once upon a time", true);
  const json by_ids =
      s.Post("/v1/completions", {{"prompt", ids}, {"max_tokens", 12}, {"temperature", 0}});
  const json by_text = s.Post(
      "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}});
  EXPECT_EQ(by_ids["choices"][0]["text"], by_text["choices"][0]["text"]);
  EXPECT_EQ(by_ids["usage"]["prompt_tokens"], ids.size());
}

// Several requests with different policies run in one batch and each gets
// the text it gets alone.
TEST(Serve, MixedPoliciesTogetherGiveWhatEachGivesAlone) {
  Running s;
  const std::vector<std::string> kvs = {"full", "h2o:heavy=8,recent=8", "local:recent=16",
                                        "sink:sinks=4,recent=12"};
  std::vector<json> out(kvs.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < kvs.size(); ++i) {
    clients.emplace_back([&, i] {
      out[i] = s.Post(
          "/v1/completions",
          {{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}, {"kv", kvs[i]}});
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(out[i]["choices"][0]["text"], Alone("Once upon a time", kvs[i], 40)) << kvs[i];
  }
}

TEST(Serve, StreamFramingAndStopStrings) {
  Running s;
  const json body = {{"prompt", "Once upon a time"},
                     {"max_tokens", 60},
                     {"temperature", 0},
                     {"stream", true},
                     {"stop", {"."}},
                     {"stream_options", {{"include_usage", true}}}};
  auto r = s.Client().Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> data = SseData(r->body);
  ASSERT_GE(data.size(), 3u);
  EXPECT_EQ(data.back(), "[DONE]");
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    const json chunk = json::parse(data[i]);
    if (chunk.contains("usage")) continue;
    text += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null())
      finish = chunk["choices"][0]["finish_reason"];
  }
  const json usage = json::parse(data[data.size() - 2]);
  EXPECT_TRUE(usage.contains("usage"));
  const std::string full = Alone("Once upon a time", "full", 60);
  ASSERT_NE(full.find('.'), std::string::npos);
  EXPECT_EQ(text, full.substr(0, full.find('.')));  // cut before the stop string
  EXPECT_EQ(finish, "stop");
  // The same without streaming.
  json whole = body;
  whole["stream"] = false;
  EXPECT_EQ(s.Post("/v1/completions", whole)["choices"][0]["text"], text);
}

TEST(Serve, ChatCompletionsStreamedAndNot) {
  Running s;
  const json messages = {{{"role", "system"}, {"content", "Tell a story."}},
                         {{"role", "user"}, {"content", "A cat"}}};
  const json r = s.Post("/v1/chat/completions", {{"messages", messages},
                                                 {"max_tokens", 10},
                                                 {"temperature", 0},
                                                 {"logprobs", true},
                                                 {"top_logprobs", 2}});
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["choices"][0]["message"]["role"], "assistant");
  const std::string text = r["choices"][0]["message"]["content"];
  ASSERT_EQ(r["choices"][0]["logprobs"]["content"].size(), r["usage"]["completion_tokens"]);
  for (const json& t : r["choices"][0]["logprobs"]["content"]) {
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    ASSERT_EQ(t["top_logprobs"].size(), 2u);
    EXPECT_GE(t["top_logprobs"][0]["logprob"].get<double>(), t["logprob"].get<double>());
  }
  auto streamed = s.Client().Post(
      "/v1/chat/completions",
      json({{"messages", messages}, {"max_tokens", 10}, {"temperature", 0}, {"stream", true}})
          .dump(),
      "application/json");
  ASSERT_TRUE(streamed);
  const std::vector<std::string> data = SseData(streamed->body);
  ASSERT_EQ(data.back(), "[DONE]");
  std::string joined;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    const json delta = json::parse(data[i])["choices"][0]["delta"];
    if (i == 0) {
      EXPECT_EQ(delta["role"], "assistant");
    }
    if (delta.contains("content")) joined += delta["content"].get<std::string>();
  }
  EXPECT_EQ(joined, text);
}

TEST(Serve, ChatWithoutATemplateIsAClear400) {
  ServerOptions o = Running::Defaults();
  o.chat_template.reset();
  Running s(o);
  auto r = s.Client().Post("/v1/chat/completions",
                           json({{"messages", {{{"role", "user"}, {"content", "hi"}}}}}).dump(),
                           "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(json::parse(r->body)["error"]["message"].get<std::string>().find("--chat-template"),
            std::string::npos);
}

TEST(Serve, SixteenConcurrentClients) {
  Running s;
  std::vector<json> out(16);
  std::vector<std::thread> clients;
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&, i] {
      out[i] = s.Post(
          "/v1/completions",
          {{"prompt", "Once upon a time"}, {"max_tokens", 20}, {"seed", i}, {"temperature", 0.8}});
    });
  }
  for (std::thread& t : clients) t.join();
  for (const json& r : out) {
    EXPECT_GE(r["usage"]["completion_tokens"].get<int>(), 1);
    EXPECT_LE(r["usage"]["completion_tokens"].get<int>(), 20);
  }
  EXPECT_EQ(s.Metric("h2o_requests_total"), "16");
  EXPECT_EQ(s.Metric("h2o_kv_bytes_in_use"), "0");
}

// The client reads one chunk and hangs up: the server cancels the request
// and frees its KV memory long before its 3000 tokens.
TEST(Serve, AClientThatLeavesCancelsItsSequence) {
  ServerOptions o = Running::Defaults();
  o.sequence.n_ctx = 4096;
  Running s(o);
  const json body = {{"prompt", "Once upon a time"},
                     {"max_tokens", 3000},
                     {"ignore_eos", true},
                     {"temperature", 0},
                     {"stream", true}};
  int chunks = 0;
  EXPECT_FALSE(PostStreaming(s.Client(), "/v1/completions", body,
                             [&](const char*, size_t) { return ++chunks < 2; }));
  for (int i = 0; i < 200 && s.Metric("h2o_requests_cancelled_total") != "1"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.Metric("h2o_requests_cancelled_total"), "1");
  for (int i = 0; i < 200 && s.Metric("h2o_kv_bytes_in_use") != "0"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.Metric("h2o_kv_bytes_in_use"), "0");
  EXPECT_LT(std::stoll(s.Metric("h2o_generated_tokens_total")), 3000);
  EXPECT_EQ(s.Client().Get("/health")->status, 200);
}

TEST(Serve, ApiKey) {
  ServerOptions o = Running::Defaults();
  o.api_keys = {"sekret"};
  Running s(o);
  const std::string body = json({{"prompt", "Hi"}, {"max_tokens", 2}}).dump();
  auto no_key = s.Client().Post("/v1/completions", body, "application/json");
  ASSERT_TRUE(no_key);
  EXPECT_EQ(no_key->status, 401);
  EXPECT_EQ(json::parse(no_key->body)["error"]["code"], "invalid_api_key");
  auto wrong = s.Client().Post("/v1/completions", {{"Authorization", "Bearer nope"}}, body,
                               "application/json");
  EXPECT_EQ(wrong->status, 401);
  auto right = s.Client().Post("/v1/completions", {{"Authorization", "Bearer sekret"}}, body,
                               "application/json");
  EXPECT_EQ(right->status, 200);
  EXPECT_EQ(s.Client().Get("/health")->status, 200);  // not under /v1
}

TEST(Serve, BadRequestsGet4xxJsonAndTheServerKeepsServing) {
  Running s;
  struct Case {
    std::string body;
    int status;
    std::string param;
  };
  const std::vector<Case> cases = {
      {"{oops", 400, ""},
      {R"({"prompt": 5})", 400, "prompt"},
      {R"({"prompt": "x", "kv": "bogus:k=1"})", 400, "kv"},
      {R"({"prompt": "x", "kv": "h2o:heavy=8"})", 400, "kv"},
      {R"({"prompt": "x", "max_tokens": -1})", 400, "max_tokens"},
      {R"({"prompt": "x", "max_tokens": 600})", 400, "max_tokens"},  // past the 512 context
      {R"({"prompt": [1, 99999]})", 400, "prompt"},
      {std::string(70 * 1024, ' '), 413, ""},
  };
  // A prompt longer than the 512-token context.
  json long_prompt = {{"prompt", std::vector<int32_t>(600, 1)}};
  auto too_long = s.Client().Post("/v1/completions", long_prompt.dump(), "application/json");
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->status, 400);
  EXPECT_EQ(json::parse(too_long->body)["error"]["code"], "context_length_exceeded");
  for (const Case& c : cases) {
    auto r = s.Client().Post("/v1/completions", c.body, "application/json");
    ASSERT_TRUE(r) << c.body.substr(0, 40);
    EXPECT_EQ(r->status, c.status) << c.body.substr(0, 40) << " -> " << r->body;
    const json e = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << r->body;
    EXPECT_TRUE(e["error"]["message"].is_string());
    if (!c.param.empty()) {
      EXPECT_EQ(e["error"]["param"], c.param) << c.body;
    }
  }
  auto missing = s.Client().Get("/v2/nothing");
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body)["error"]["message"].is_string());
  // A served path asked with the wrong method: 405, naming the right one.
  auto get_completions = s.Client().Get("/v1/completions");
  ASSERT_TRUE(get_completions);
  EXPECT_EQ(get_completions->status, 405);
  EXPECT_EQ(get_completions->get_header_value("Allow"), "POST");
  EXPECT_EQ(json::parse(get_completions->body)["error"]["message"],
            "GET /v1/completions: method not allowed (use POST)");
  auto post_models = s.Client().Post("/v1/models", "{}", "application/json");
  ASSERT_TRUE(post_models);
  EXPECT_EQ(post_models->status, 405);
  EXPECT_EQ(post_models->get_header_value("Allow"), "GET");
  auto post_kv = s.Client().Post("/v1/kv/cmpl-1", "{}", "application/json");
  ASSERT_TRUE(post_kv);
  EXPECT_EQ(post_kv->status, 405);
  EXPECT_EQ(s.Post("/v1/completions",
                   {{"prompt", "Hi"}, {"max_tokens", 3}})["usage"]["completion_tokens"],
            3);
  const json models = json::parse(s.Client().Get("/v1/models")->body);
  EXPECT_EQ(models["data"][0]["id"], "stories260K");
}

// Shutdown while a stream runs: it is answered to the end, then Run returns.
TEST(Serve, ShutdownDrainsRunningRequests) {
  auto running = std::make_unique<Running>();
  const json body = {{"prompt", "Once upon a time"},
                     {"max_tokens", 300},
                     {"ignore_eos", true},
                     {"temperature", 0},
                     {"stream", true}};
  std::string received;
  bool asked = false;
  ASSERT_TRUE(
      PostStreaming(running->Client(), "/v1/completions", body, [&](const char* data, size_t n) {
        received.append(data, n);
        if (!asked) {
          asked = true;
          running->server().Shutdown();
        }
        return true;
      }));
  const std::vector<std::string> data = SseData(received);
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.back(), "[DONE]");
  EXPECT_NE(received.find("\"finish_reason\":\"length\""), std::string::npos);
  running.reset();  // Run has returned: the destructor joins at once
}

}  // namespace
}  // namespace h2o::server

namespace h2o::server {
namespace {

// With a prompt cache, a request that repeats a prompt resumes from its
// end (and, greedy, says the same), and one that extends it resumes from
// it; usage and /metrics say how many tokens were not fed again; a
// request with cache_prompt false feeds everything.
TEST(Serve, PromptCacheResumesRepeatedAndExtendedPrompts) {
  ServerOptions o = Running::Defaults();
  o.prompt_cache_bytes = size_t{64} << 20;
  Running s(o);
  const std::vector<int32_t> ids = StoriesTokenizer().Encode("Once upon a time", true);
  const json first =
      s.Post("/v1/completions", {{"prompt", ids}, {"max_tokens", 12}, {"temperature", 0}});
  EXPECT_EQ(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  const json again =
      s.Post("/v1/completions", {{"prompt", ids}, {"max_tokens", 12}, {"temperature", 0}});
  EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"], ids.size());
  EXPECT_EQ(again["choices"][0]["text"], first["choices"][0]["text"]);
  std::vector<int32_t> longer = ids;
  for (const int32_t id : StoriesTokenizer().Encode(" there was a cat", false))
    longer.push_back(id);
  const json extended =
      s.Post("/v1/completions", {{"prompt", longer}, {"max_tokens", 12}, {"temperature", 0}});
  EXPECT_EQ(extended["usage"]["prompt_tokens_details"]["cached_tokens"], ids.size());
  const json uncached =
      s.Post("/v1/completions",
             {{"prompt", longer}, {"max_tokens", 12}, {"temperature", 0}, {"cache_prompt", false}});
  EXPECT_EQ(uncached["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  const std::string metrics = s.Client().Get("/metrics")->body;
  EXPECT_NE(metrics.find("h2o_prompt_cache_hits_total 2\n"), std::string::npos) << metrics;
  EXPECT_NE(
      metrics.find("h2o_prompt_cache_tokens_reused_total " + std::to_string(2 * ids.size()) + "\n"),
      std::string::npos);
}

// A chat resent whole each turn, under a percentage budget: the budget is
// the context's share on every turn, so each turn resumes from where the
// one before stopped (its prompt and the answer's tokens): the first,
// under the budget, evicted nothing; the later ones resume evicted caches.
TEST(Serve, AChatConversationUnderH2oResumesEveryTurn) {
  ServerOptions o = Running::Defaults();
  o.prompt_cache_bytes = size_t{64} << 20;
  Running s(o);
  json messages = {{{"role", "system"}, {"content", "Tell a story."}}};
  int32_t previous_prompt = 0;
  for (int turn = 0; turn < 4; ++turn) {
    SCOPED_TRACE(turn);
    messages.push_back({{"role", "user"}, {"content", turn % 2 ? "And then?" : "A cat and a dog"}});
    const json r = s.Post("/v1/chat/completions", {{"messages", messages},
                                                   {"max_tokens", 24},
                                                   {"temperature", 0},
                                                   {"kv", "h2o:heavy=10%,recent=10%"}});
    const int32_t cached = r["usage"]["prompt_tokens_details"]["cached_tokens"];
    const int32_t prompt = r["usage"]["prompt_tokens"];
    if (turn == 0) {
      EXPECT_EQ(cached, 0);
    } else {
      // At least the last turn's prompt; at most what it fed (prompt +
      // answer), and never the whole of this prompt.
      EXPECT_GE(cached, previous_prompt);
      EXPECT_LT(cached, prompt);
    }
    previous_prompt = prompt;
    // 10% of the context of 512, whatever this turn's length.
    EXPECT_EQ(r["usage"]["kv_policy"], "h2o:heavy=51,recent=51");
    if (turn >= 2) {
      EXPECT_GT(r["usage"]["evictions"].get<int64_t>(), 0);
    }
    messages.push_back(r["choices"][0]["message"]);
  }
}

// n_keep -1 on a chat pins its system prompt (the tokens the prompt shares
// with the system message rendered alone) in every head on top of the
// budget; n_keep past the prompt is a 400 naming it.
TEST(Serve, NKeepPinsAChatsSystemPrompt) {
  ServerOptions o = Running::Defaults();
  o.kv_endpoint = true;
  Running s(o);
  const std::string system = "You are a storyteller who tells short tales about animals.";
  const json messages = {{{"role", "system"}, {"content", system}},
                         {{"role", "user"}, {"content", "A cat and a dog"}}};
  const json r = s.Post("/v1/chat/completions", {{"messages", messages},
                                                 {"max_tokens", 120},
                                                 {"ignore_eos", true},
                                                 {"temperature", 0},
                                                 {"n_keep", -1},
                                                 {"kv", "h2o:heavy=40,recent=40"}});
  const std::string policy = r["usage"]["kv_policy"];
  ASSERT_EQ(policy.rfind("h2o:heavy=40,recent=40,keep=", 0), 0u) << policy;
  const int keep = std::stoi(policy.substr(policy.find("keep=") + 5));
  EXPECT_GT(r["usage"]["evictions"].get<int64_t>(), 0);
  // The pinned tokens are the system segment: its text, not the user's.
  const std::vector<ChatMessage> chat = {{"system", system}, {"user", "A cat and a dog"}};
  const std::vector<int32_t> prompt =
      StoriesTokenizer().Encode(RenderChat(ChatTemplate::kChatml, chat).value(), true);
  const std::string pinned = StoriesTokenizer().Decode(
      std::vector<int32_t>(prompt.begin(), prompt.begin() + keep), false);
  EXPECT_NE(pinned.find(system), std::string::npos) << pinned;
  EXPECT_EQ(pinned.find("A cat"), std::string::npos) << pinned;
  const json state = json::parse(
      s.Client().Get(("/v1/kv/" + r["id"].get<std::string>()).c_str())->body);
  for (const json& layer : state["layers"]) {
    for (const json& head : layer["heads"]) {
      const auto pos = head["positions"].get<std::vector<int>>();
      ASSERT_EQ(std::ssize(pos), 80 + keep);
      for (int i = 0; i < keep; ++i) EXPECT_EQ(pos[i], i);
    }
  }
  auto bad = s.Client().Post("/v1/completions",
                             json({{"prompt", "Once upon a time"},
                                   {"n_keep", 50},
                                   {"kv", "h2o:heavy=8,recent=8"}})
                                 .dump(),
                             "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["param"], "n_keep");
}

// Two users' chats with one system prompt: the second conversation resumes
// from the state the first left after the system prompt (kept once).
TEST(Serve, ConversationsWithOneSystemPromptShareItsState) {
  ServerOptions o = Running::Defaults();
  o.prompt_cache_bytes = size_t{64} << 20;
  Running s(o);
  const std::string system = "You are a storyteller who tells short tales about animals.";
  int32_t first_prompt = 0;
  for (const char* user : {"A cat and a dog", "A fox in the snow"}) {
    const json messages = {{{"role", "system"}, {"content", system}},
                           {{"role", "user"}, {"content", user}}};
    const json r = s.Post("/v1/chat/completions", {{"messages", messages},
                                                   {"max_tokens", 8},
                                                   {"temperature", 0},
                                                   {"kv", "h2o:heavy=40,recent=40"}});
    const int32_t cached = r["usage"]["prompt_tokens_details"]["cached_tokens"];
    if (first_prompt == 0) {
      EXPECT_EQ(cached, 0);
      first_prompt = r["usage"]["prompt_tokens"];
    } else {
      // The system segment: at least the system text's own tokens, at
      // most what the two prompts share.
      const auto ids = [&](const char* who) {
        const std::vector<ChatMessage> chat = {{"system", system}, {"user", who}};
        return StoriesTokenizer().Encode(RenderChat(ChatTemplate::kChatml, chat).value(), true);
      };
      const std::vector<int32_t> a = ids("A cat and a dog"), b = ids(user);
      const auto shared = std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
      EXPECT_GE(cached, std::ssize(StoriesTokenizer().Encode(system, false)));
      EXPECT_LE(cached, shared);
      EXPECT_LT(cached, first_prompt);
    }
  }
  EXPECT_EQ(s.Metric("h2o_prompt_cache_shared_prefixes_total"), "1");
}

// The sampling fields reach the sampler: a ban keeps a token out of a
// greedy answer that would have started with it, and a frequency penalty
// changes a greedy answer that repeats itself; an out-of-vocabulary bias
// is a 400.
TEST(Serve, SamplingFieldsChangeTheAnswer) {
  Running s;
  const json base = {{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}};
  const json plain = s.Post("/v1/completions", base);
  const std::vector<int32_t> ids =
      GreedyAlone(StoriesTokenizer().Encode("Once upon a time", true), "full", 40).ids;
  ASSERT_FALSE(ids.empty());
  json banned = base;
  banned["logit_bias"] = {{std::to_string(ids[0]), false}};
  const json without = s.Post("/v1/completions", banned);
  EXPECT_NE(without["choices"][0]["text"], plain["choices"][0]["text"]);
  const std::vector<int32_t> got =
      StoriesTokenizer().Encode(without["choices"][0]["text"].get<std::string>(), false);
  ASSERT_FALSE(got.empty());
  EXPECT_NE(got[0], ids[0]);
  json penalized = base;
  penalized["frequency_penalty"] = 2.0;
  EXPECT_NE(s.Post("/v1/completions", penalized)["choices"][0]["text"],
            plain["choices"][0]["text"]);
  json out_of_range = base;
  out_of_range["logit_bias"] = {{"100000", 1}};
  auto r = s.Client().Post("/v1/completions", out_of_range.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["param"], "logit_bias");
}

}  // namespace
}  // namespace h2o::server
