// The conversation mode of `h2o bench` on stories260K: every turn after
// the first resumes where the last one stopped (the history before this
// turn's message, less the answer's last token, which was never fed);
// without the prompt cache nothing resumes; an evicting policy's
// conversation is kept in a fraction of the memory, so where the RAM holds
// fewer full conversations than there are users, H2O still resumes all.
#include "perf/conversation.h"

#include <gtest/gtest.h>

#include "kv/kv_spec.h"
#include "test_data.h"

namespace h2o {
namespace {

const Model& Stories() {
  static const Model* model = Model::Load(testing::ModelPath()).value().release();
  return *model;
}

ConversationOptions Small() {
  ConversationOptions o;
  o.users = 3;
  o.turns = 4;
  o.turn_tokens = 16;
  o.generate = 8;
  o.chunk = 16;
  o.cache_ram_bytes = size_t{64} << 20;
  return o;
}

TEST(Conversations, EveryLaterTurnResumesWhereTheLastStopped) {
  const ConversationOptions o = Small();
  for (const char* kv : {"full", "h2o:heavy=10%,recent=10%"}) {
    SCOPED_TRACE(kv);
    auto r = RunConversations(Stories(), ParseKvSpec(kv).value(), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->turns.size(), 4u);
    EXPECT_EQ(r->turns[0].resumed, 0);
    for (size_t t = 1; t < r->turns.size(); ++t) {
      EXPECT_EQ(r->turns[t].prompt_tokens, 16 + 24 * static_cast<int32_t>(t));
      EXPECT_EQ(r->turns[t].resumed, 3);
      EXPECT_EQ(r->turns[t].cached_tokens_mean, r->turns[t].prompt_tokens - 16 - 1);
    }
    EXPECT_GT(r->kept_bytes_per_conversation, 0u);
    ConversationOptions off = o;
    off.prompt_cache = false;
    auto none = RunConversations(Stories(), ParseKvSpec(kv).value(), off);
    ASSERT_TRUE(none.ok());
    for (const ConversationTurn& t : none->turns) EXPECT_EQ(t.resumed, 0);
    EXPECT_EQ(none->pool_states, 0);
  }
}

TEST(Conversations, H2oKeepsMoreConversationsInTheSameRam) {
  ConversationOptions o = Small();
  auto full = RunConversations(Stories(), ParseKvSpec("full").value(), o);
  auto h2o = RunConversations(Stories(), ParseKvSpec("h2o:heavy=10%,recent=10%").value(), o);
  ASSERT_TRUE(full.ok() && h2o.ok());
  // 9 + 9 of a 96-token context against the 71 + 79 tokens a full
  // conversation's two last states hold.
  EXPECT_GE(h2o->conversations_fit, 3 * full->conversations_fit);
  // RAM for one full conversation's last turn: three users round robin,
  // least recently used out, so the two users served between a user's
  // turns (each conversation at least two thirds of that) push it out
  // before the user comes back; H2O's three fit.
  o.cache_ram_bytes = full->kept_bytes_per_conversation;
  full = RunConversations(Stories(), ParseKvSpec("full").value(), o);
  h2o = RunConversations(Stories(), ParseKvSpec("h2o:heavy=10%,recent=10%").value(), o);
  ASSERT_TRUE(full.ok() && h2o.ok());
  EXPECT_EQ(full->turns.back().resumed, 0);
  EXPECT_EQ(h2o->turns.back().resumed, 3);
  EXPECT_GT(full->pool_evictions, 0);
}

TEST(Conversations, BadOptionsAreErrors) {
  ConversationOptions o = Small();
  o.users = 0;
  auto r = RunConversations(Stories(), ParseKvSpec("full").value(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("at least 1 user"), std::string::npos);
  o = Small();
  auto bad = RunConversations(Stories(), ParseKvSpec("h2o:heavy=1%,recent=1%").value(), o);
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace h2o
