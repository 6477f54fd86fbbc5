// Session::Save/Restore: after a Restore, a continuation must give exactly
// the logits (and evictions) it gives when the prefix is run afresh; the
// multiple-choice scorer relies on this to run each context once.
#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

std::unique_ptr<Session> MakeSession(const Model& model, const char* spec) {
  SessionOptions o;
  o.max_chunk = 1;
  o.kv = ResolveKvSpec(ParseKvSpec(spec).value(), std::nullopt).value();
  return std::move(Session::Create(model, o).value());
}

// Feeds ids one at a time and returns every step's logits, concatenated.
std::vector<float> Feed(Session& session, std::span<const int32_t> ids) {
  std::vector<float> all;
  for (int32_t id : ids) {
    const int32_t one[] = {id};
    EXPECT_TRUE(session.Eval(one).ok());
    const auto logits = session.last_logits();
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

TEST(SessionSnapshot, RestoredPrefixMatchesAFreshRunBitForBit) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const std::vector<int32_t> stream = testing::ReadStream("s001.txt");
  ASSERT_GE(stream.size(), 60u);
  const std::span<const int32_t> prefix(stream.data(), 40);
  const std::span<const int32_t> first(stream.data() + 40, 10);
  const std::span<const int32_t> second(stream.data() + 50, 10);
  // Budgets well below the prefix, so the continuations evict.
  for (const char* spec : {"full", "h2o:heavy=8,recent=8", "tova:k=12", "sink:sinks=4,recent=8",
                           "random:k=8,recent=4,seed=3"}) {
    SCOPED_TRACE(spec);
    auto session = MakeSession(**model, spec);
    Feed(*session, prefix);
    SessionSnapshot snapshot;
    session->Save(snapshot);
    const std::vector<float> first_logits = Feed(*session, first);
    session->Restore(snapshot);
    EXPECT_EQ(session->n_past(), 40);
    const std::vector<float> second_logits = Feed(*session, second);
    session->Restore(snapshot);
    EXPECT_EQ(Feed(*session, first), first_logits);

    auto fresh = MakeSession(**model, spec);
    Feed(*fresh, prefix);
    EXPECT_EQ(Feed(*fresh, second), second_logits);
    // The continuation changes what a run after it predicts: restoring
    // must not be a no-op for the test to mean anything.
    EXPECT_NE(std::vector<float>(first_logits.end() - 512, first_logits.end()),
              std::vector<float>(second_logits.end() - 512, second_logits.end()));
  }
}

}  // namespace
}  // namespace h2o
