// Greedy continuation through a Session, for tests that compare id streams.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/session.h"

namespace h2o::testing {

// Feeds `ids` to the session, then appends n greedy tokens (lowest id on
// ties) and returns prompt + continuation.
inline std::vector<int32_t> GreedyContinue(Session& session, std::vector<int32_t> ids, int n) {
  EXPECT_TRUE(session.Eval(ids).ok());
  for (int i = 0; i < n; ++i) {
    ids.push_back(ArgMax(session.last_logits()));
    const int32_t one[] = {ids.back()};
    if (i + 1 < n) {
      EXPECT_TRUE(session.Eval(one).ok());
    }
  }
  return ids;
}

}  // namespace h2o::testing
