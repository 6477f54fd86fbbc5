// PromptCache on its own: the longest kept prefix wins, a whole-prompt
// match needs the logits after it, least recently used states go first,
// and the byte limit holds.
#include "runtime/prompt_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace h2o {
namespace {

// A state whose only content is `floats` logits: Bytes() is 4 per float.
SequenceState StateOf(size_t floats) {
  SequenceState s;
  s.last_logits.assign(floats, 0.5f);
  return s;
}

bool Any(const SequenceState&) { return true; }

// The bytes an entry of `tokens` tokens and `floats` logits costs.
size_t Cost(size_t tokens, size_t floats) { return (tokens + floats) * 4; }

TEST(PromptCache, TheLongestKeptPrefixWins) {
  PromptCache cache;
  ASSERT_TRUE(cache.Insert({1, 2}, StateOf(1), 1 << 20, Any));
  ASSERT_TRUE(cache.Insert({1, 2, 3, 4}, StateOf(2), 1 << 20, Any));
  ASSERT_TRUE(cache.Insert({1, 9, 3}, StateOf(3), 1 << 20, Any));
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
  auto hit = cache.Find(prompt, Any);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->n_tokens, 4u);
  EXPECT_EQ(hit->state->last_logits.size(), 2u);
  // A state that cannot be loaded is passed over for a shorter one.
  hit = cache.Find(prompt, [](const SequenceState& s) { return s.last_logits.size() != 2; });
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->n_tokens, 2u);
  // Differs inside every kept state: a miss.
  const std::vector<int32_t> other = {7, 2, 3, 4, 5};
  EXPECT_FALSE(cache.Find(other, Any).has_value());
}

TEST(PromptCache, AWholePromptMatchNeedsTheLogitsAfterIt) {
  PromptCache cache;
  ASSERT_TRUE(cache.Insert({1, 2, 3}, StateOf(0), 1 << 20, Any));
  const std::vector<int32_t> prompt = {1, 2, 3};
  EXPECT_FALSE(cache.Find(prompt, Any).has_value());               // nothing to sample from
  ASSERT_TRUE(cache.Insert({1, 2, 3}, StateOf(4), 1 << 20, Any));  // replaces it
  EXPECT_EQ(cache.size(), 1u);
  auto hit = cache.Find(prompt, Any);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->n_tokens, 3u);
}

// A conversation's newer prompt supersedes its earlier states (strict
// prefixes of it, of the same kind); itself, longer states and other
// conversations stay.
TEST(PromptCache, ANewerTurnDropsTheStatesItBeginsWith) {
  PromptCache cache;
  ASSERT_TRUE(cache.Insert({1, 2}, StateOf(1), 1 << 20, Any));
  ASSERT_TRUE(cache.Insert({1, 2, 3}, StateOf(2), 1 << 20, Any));
  ASSERT_TRUE(cache.Insert({1, 2, 3, 4, 5}, StateOf(1), 1 << 20, Any));
  ASSERT_TRUE(cache.Insert({1, 7}, StateOf(1), 1 << 20, Any));
  const std::vector<int32_t> turn = {1, 2, 3, 4};
  EXPECT_EQ(
      cache.DropPrefixesOf(turn, [](const SequenceState& s) { return s.last_logits.size() == 1; }),
      1u);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.bytes(), Cost(3, 2) + Cost(5, 1) + Cost(2, 1));
  EXPECT_EQ(cache.DropPrefixesOf(turn, Any), 1u);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.bytes(), Cost(5, 1) + Cost(2, 1));
  EXPECT_EQ(cache.evictions(), 0);
}

TEST(PromptCache, LeastRecentlyUsedGoFirstUnderTheLimit) {
  PromptCache cache;
  const size_t each = Cost(2, 10);
  ASSERT_TRUE(cache.Insert({1, 2}, StateOf(10), 3 * each, Any));
  ASSERT_TRUE(cache.Insert({3, 4}, StateOf(10), 3 * each, Any));
  ASSERT_TRUE(cache.Insert({5, 6}, StateOf(10), 3 * each, Any));
  EXPECT_EQ(cache.bytes(), 3 * each);
  const std::vector<int32_t> first = {1, 2, 7};
  ASSERT_TRUE(cache.Find(first, Any).has_value());  // {1, 2} now the newest
  ASSERT_TRUE(cache.Insert({8, 9}, StateOf(10), 3 * each, Any));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.evictions(), 1);
  const std::vector<int32_t> second = {3, 4, 7};
  EXPECT_FALSE(cache.Find(second, Any).has_value());  // the oldest went
  EXPECT_TRUE(cache.Find(first, Any).has_value());
  // Larger than the limit: not kept, nothing dropped for it.
  EXPECT_FALSE(cache.Insert({10}, StateOf(100), 3 * each, Any));
  EXPECT_EQ(cache.size(), 3u);
  cache.ShrinkTo(each);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_LE(cache.bytes(), each);
}

}  // namespace
}  // namespace h2o
