// The next turn after a reply: hand-written for two formats, and for every
// format the identity that makes carrying the conversation by tokens exact
// (prompt before the reply + reply + next turn = the whole rendering) when
// the template keeps the reply as it is; a reply the template would trim is
// still followed by the same turn text, so nothing before it is fed again.
#include "chat/next_turn.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace h2o {
namespace {

constexpr ChatTemplate kAll[] = {
    ChatTemplate::kLlama2, ChatTemplate::kLlama3,  ChatTemplate::kChatml, ChatTemplate::kPhi3,
    ChatTemplate::kGemma,  ChatTemplate::kMistral, ChatTemplate::kZephyr};

std::vector<ChatMessage> Conversation(const std::string& reply) {
  return {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", reply}, {"user", "And you?"}};
}

TEST(TextAfterReplyTest, Llama3ClosesTheReplyAndOpensTheNextOne) {
  auto text = TextAfterReply(ChatTemplate::kLlama3, Conversation("Hello."));
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnd you?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(TextAfterReplyTest, Llama2ClosesTheInstructionBlock) {
  auto text = TextAfterReply(ChatTemplate::kLlama2, Conversation("Hello."));
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "</s>[INST] And you? [/INST]");
}

TEST(TextAfterReplyTest, PromptReplyAndNextTurnAreTheWholeConversation) {
  const std::vector<ChatMessage> all = Conversation("Hello.");
  const std::vector<ChatMessage> before_reply(all.begin(), all.begin() + 2);
  for (ChatTemplate t : kAll) {
    SCOPED_TRACE(ChatTemplateName(t));
    auto prompt = RenderChat(t, before_reply);
    auto next = TextAfterReply(t, all);
    auto whole = RenderChat(t, all);
    ASSERT_TRUE(prompt.ok() && next.ok() && whole.ok());
    EXPECT_EQ(*prompt + "Hello." + *next, *whole);
  }
}

TEST(TextAfterReplyTest, AReplyEndingInWhitespaceIsFollowedByTheSameTurn) {
  for (ChatTemplate t : kAll) {
    SCOPED_TRACE(ChatTemplateName(t));
    auto plain = TextAfterReply(t, Conversation("Hello."));
    auto spaced = TextAfterReply(t, Conversation("  Hello. \n"));
    ASSERT_TRUE(plain.ok() && spaced.ok());
    EXPECT_EQ(*plain, *spaced);
  }
}

TEST(TextAfterReplyTest, NeedsAReplyThenAUserMessage) {
  const std::vector<ChatMessage> no_reply = {{"user", "Hi"}, {"user", "Again"}};
  auto text = TextAfterReply(ChatTemplate::kChatml, no_reply);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            "the next turn follows an assistant reply with a user message");
  const std::vector<ChatMessage> reply_last = {{"user", "Hi"}, {"assistant", "Hello."}};
  EXPECT_FALSE(TextAfterReply(ChatTemplate::kChatml, reply_last).ok());
}

}  // namespace
}  // namespace h2o
