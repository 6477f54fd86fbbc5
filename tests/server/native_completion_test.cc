// llama-server's native POST /completion on a real h2o serve: its fields
// (n_predict, cache_prompt, stop), its response shape and stream (content
// pieces, a last event with the figures, no [DONE]), the same text as
// /v1/completions and as the generate loop alone, and its errors.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::GreedyAlone;
using testing::Running;
using testing::SseData;
using testing::StoriesTokenizer;

const json kBody = {{"prompt", "Once upon a time"},
                    {"n_predict", 12},
                    {"temperature", 0},
                    {"ignore_eos", true},
                    {"kv", "h2o:heavy=4,recent=4"}};

TEST(ServeNative, CompletionInLlamaServersShape) {
  Running s;
  const Generation alone =
      GreedyAlone(StoriesTokenizer().Encode("Once upon a time", true), "h2o:heavy=4,recent=4", 12);
  const json r = s.Post("/completion", kBody);
  EXPECT_EQ(r["content"], alone.text);
  EXPECT_EQ(r["stop"], true);
  EXPECT_EQ(r["prompt"], "Once upon a time");
  EXPECT_EQ(r["model"], "stories260K");
  EXPECT_EQ(r["tokens_predicted"], 12);
  EXPECT_EQ(r["tokens_evaluated"], 5);  // BOS + 4
  EXPECT_EQ(r["stop_type"], "limit");
  EXPECT_EQ(r["generation_settings"]["n_predict"], 12);
  EXPECT_EQ(r["generation_settings"]["temperature"], 0);
  EXPECT_EQ(r["kv"], "h2o:heavy=4,recent=4");
  EXPECT_GT(r["evictions"].get<int>(), 0);  // 17 tokens through a budget of 8
  EXPECT_EQ(r["timings"]["predicted_n"], 12);
  EXPECT_GE(r["timings"]["prompt_ms"].get<double>(), 0);
  // The same text from the OpenAI endpoint, and under the other path.
  json openai = kBody;
  openai.erase("n_predict");
  openai["max_tokens"] = 12;
  EXPECT_EQ(s.Post("/v1/completions", openai)["choices"][0]["text"], r["content"]);
  EXPECT_EQ(s.Post("/completions", kBody)["content"], r["content"]);
}

TEST(ServeNative, StreamOfPiecesThenTheFigures) {
  Running s;
  json body = kBody;
  body["stream"] = true;
  auto r = s.Client().Post("/completion", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> data = SseData(r->body);
  ASSERT_GE(data.size(), 2u);
  std::string text;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    const json piece = json::parse(data[i]);
    EXPECT_EQ(piece["stop"], false) << data[i];
    text += piece["content"].get<std::string>();
  }
  const json last = json::parse(data.back());  // no "[DONE]" after it
  EXPECT_EQ(last["stop"], true);
  EXPECT_EQ(last["tokens_predicted"], 12);
  text += last["content"].get<std::string>();
  EXPECT_EQ(text, s.Post("/completion", kBody)["content"]);
}

TEST(ServeNative, StopTypesAndErrors) {
  Running s;
  json word = kBody;
  word["stop"] = {"."};
  word["n_predict"] = 60;
  const json stopped = s.Post("/completion", word);
  EXPECT_EQ(stopped["stop_type"], "word");
  EXPECT_EQ(stopped["content"].get<std::string>().find('.'), std::string::npos);
  // The end-of-sequence token (</s>, id 2) made certain: it ends the reply.
  json eos = kBody;
  eos.erase("ignore_eos");
  eos["logit_bias"] = {{"2", 100}};
  const json ended = s.Post("/completion", eos);
  EXPECT_EQ(ended["stop_type"], "eos");
  EXPECT_EQ(ended["content"], "");
  // A GBNF grammar: the reply is its one sentence, and it stops there.
  const json constrained = s.Post("/completion", json{{"prompt", "Once"},
                                                      {"n_predict", 16},
                                                      {"temperature", 0},
                                                      {"grammar", "root ::= \" yes\" | \" no\""}});
  EXPECT_TRUE(constrained["content"] == " yes" || constrained["content"] == " no")
      << constrained.dump();
  EXPECT_EQ(constrained["stop_type"], "eos");
  for (const std::string bad : {R"({"prompt": "x", "n_predict": 0})", R"({"n_predict": 4})",
                                R"({"prompt": "x", "grammar": "root ::= x"})"}) {
    auto r = s.Client().Post("/completion", bad, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad << " " << r->body;
    EXPECT_TRUE(json::parse(r->body)["error"].contains("message")) << r->body;
  }
}

}  // namespace
}  // namespace h2o::server
