// h2o serve --cache-dir: a conversation kept across a restart, and
// llama-server's POST /slots/{id}?action=save|restore|erase, with what each
// answers to a bad id, name, file or key.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "server/running_server.h"

namespace h2o::server {
namespace {

using nlohmann::json;
using testing::GreedyAlone;
using testing::Running;
using testing::StoriesTokenizer;

using h2o::testing::ScratchDir;

ServerOptions WithCacheDir(const std::string& dir) {
  ServerOptions o = Running::Defaults();
  o.prompt_cache_bytes = size_t{64} << 20;
  o.cache_dir = dir;
  return o;
}

json Completion(const std::vector<int32_t>& prompt, bool cache = true) {
  return {{"prompt", prompt},
          {"max_tokens", 16},
          {"temperature", 0},
          {"ignore_eos", true},
          {"cache_prompt", cache}};
}

std::vector<int32_t> Ids(const std::string& text, bool special) {
  return StoriesTokenizer().Encode(text, special);
}

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::pair<int, json> PostAny(const Running& s, const std::string& path, const json& body) {
  auto r = s.Client().Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return {0, {}};
  return {r->status, json::parse(r->body, nullptr, false)};
}

// The history after a first turn of `first` answered by `answer` (its last
// token sampled, never fed), and a new turn.
std::vector<int32_t> NextTurn(const std::vector<int32_t>& first, const Generation& answer,
                              const std::string& next) {
  std::vector<int32_t> history = first;
  history.insert(history.end(), answer.ids.begin(), answer.ids.end() - 1);
  return Concat(history, Ids(next, false));
}

// Turn 1 on one server; a restart on the same directory; turn 2 resumes
// from the state kept at shutdown, all of turn 1, and says what the
// generate loop fed the whole history says.
TEST(ServeCacheDir, AConversationResumesAfterARestartWithTheSameOutput) {
  ScratchDir dir("serve_restart");
  const std::vector<int32_t> first = Ids("Once upon a time, there was a little girl", true);
  const Generation answer = GreedyAlone(first, "full", 16, /*stop_at_end=*/false);
  const std::vector<int32_t> second = NextTurn(first, answer, " The next day");
  {
    Running s(WithCacheDir(dir.path));
    EXPECT_EQ(s.Post("/v1/completions", Completion(first))["choices"][0]["text"], answer.text);
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path + "/prompt-cache"),
                          std::filesystem::directory_iterator()),
            2);
  Running s(WithCacheDir(dir.path));
  const json two = s.Post("/v1/completions", Completion(second));
  EXPECT_EQ(two["usage"]["prompt_tokens_details"]["cached_tokens"], first.size() + 15);
  EXPECT_EQ(two["choices"][0]["text"], GreedyAlone(second, "full", 16, false).text);
}

// Saved by its request's id, the kept files removed, the server restarted:
// restoring the save brings the conversation back, whole (turn 2 built
// from turn 1's generated ids resumes from all of them); erase drops it.
TEST(ServeCacheDir, SaveRestoreAndEraseANamedConversation) {
  ScratchDir dir("serve_named");
  const std::vector<int32_t> first = Ids("Once upon a time, there was a big dog", true);
  const Generation answer = GreedyAlone(first, "full", 16, /*stop_at_end=*/false);
  const std::vector<int32_t> second = NextTurn(first, answer, " Then");
  size_t saved = 0;
  {
    Running s(WithCacheDir(dir.path));
    const json one = s.Post("/v1/completions", Completion(first));
    EXPECT_EQ(one["choices"][0]["text"], answer.text);
    const std::string id = one["id"];
    const json r = s.Post("/slots/" + id + "?action=save", {{"filename", "alice"}});
    EXPECT_EQ(r["id_slot"], id);
    EXPECT_EQ(r["filename"], "alice");
    saved = r["n_saved"].get<size_t>();
    EXPECT_EQ(saved, first.size() + 15);
    EXPECT_GT(r["n_written"].get<size_t>(), 0u);
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.path + "/alice"));
  }
  std::filesystem::remove_all(dir.path + "/prompt-cache");
  Running s(WithCacheDir(dir.path));
  const json restored = s.Post("/slots/0?action=restore", {{"filename", "alice"}});
  EXPECT_EQ(restored["n_restored"], saved);
  EXPECT_EQ(restored["n_read"], std::filesystem::file_size(dir.path + "/alice"));
  const json two = s.Post("/v1/completions", Completion(second));
  EXPECT_EQ(two["usage"]["prompt_tokens_details"]["cached_tokens"], saved);
  EXPECT_EQ(two["choices"][0]["text"], GreedyAlone(second, "full", 16, false).text);

  // Erase the second turn's states (its prompt's end, where it stopped,
  // and the restored one it began with): a regenerate feeds everything.
  const std::string id = two["id"];
  const json erased = s.Post("/slots/" + id + "?action=erase", json::object());
  EXPECT_GE(erased["n_erased"].get<int>(), 2);
  const json again = s.Post("/v1/completions", Completion(second));
  EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
}

TEST(ServeCacheDir, BadSlotActionsAre4xxAndTheServerGoesOn) {
  ScratchDir dir("serve_bad");
  ServerOptions o = WithCacheDir(dir.path);
  o.api_keys = {"alice-key", "bob-key"};
  Running s(o);
  httplib::Client alice = s.Client();
  alice.set_bearer_token_auth("alice-key");
  httplib::Client bob = s.Client();
  bob.set_bearer_token_auth("bob-key");
  const auto post = [](httplib::Client& c, const std::string& path, const std::string& body) {
    auto r = c.Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r);
    return r ? std::make_pair(r->status, json::parse(r->body, nullptr, false))
             : std::make_pair(0, json());
  };
  const auto [status, one] =
      post(alice, "/v1/completions", Completion(Ids("Once upon a time", true)).dump());
  ASSERT_EQ(status, 200);
  const std::string id = one["id"];
  struct Case {
    httplib::Client* client;
    std::string path, body;
    int status;
    const char* says;
  };
  // A file that is no state, under a good name.
  std::ofstream(dir.path + "/junk") << "not a state";
  const Case cases[] = {
      {&alice, "/slots/cmpl-nope?action=save", R"({"filename": "x"})", 404, "no finished request"},
      {&bob, "/slots/" + id + "?action=save", R"({"filename": "x"})", 404, "another API key"},
      {&alice, "/slots/" + id + "?action=save", R"({"filename": "../x"})", 400, "not a save name"},
      {&alice, "/slots/" + id + "?action=save", R"({"filename": "a/b"})", 400, "not a save name"},
      {&alice, "/slots/" + id + "?action=save", R"({})", 400, "'filename' is required"},
      {&alice, "/slots/" + id + "?action=save", "nope", 400, "not valid JSON"},
      {&alice, "/slots/" + id + "?action=fly", R"({"filename": "x"})", 400, "'action' must be"},
      {&alice, "/slots/" + id, R"({"filename": "x"})", 400, "'action' must be"},
      {&alice, "/slots/0?action=restore", R"({"filename": "never-saved"})", 404, "no saved"},
      {&alice, "/slots/0?action=restore", R"({"filename": "junk"})", 400, "not a usable h2o state"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path + " " + c.body);
    const auto [got, body] = post(*c.client, c.path, c.body);
    EXPECT_EQ(got, c.status);
    ASSERT_TRUE(body.contains("error")) << body.dump();
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << body.dump();
  }
  EXPECT_EQ(s.Client().Post(("/slots/" + id + "?action=erase").c_str(), "{}", "application/json")
                ->status,
            401);
  // The save still works, and only for its own key.
  EXPECT_EQ(post(alice, "/slots/" + id + "?action=save", R"({"filename": "ok"})").first, 200);
}

TEST(ServeCacheDir, WithoutACacheDirASaveSaysWhatItNeeds) {
  ServerOptions o = Running::Defaults();
  o.prompt_cache_bytes = size_t{64} << 20;
  Running s(o);
  const json one = s.Post("/v1/completions", Completion(Ids("Once upon a time", true)));
  const auto [status, body] =
      PostAny(s, "/slots/" + one["id"].get<std::string>() + "?action=save", {{"filename", "x"}});
  EXPECT_EQ(status, 400);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("--cache-dir"), std::string::npos);
}

}  // namespace
}  // namespace h2o::server
