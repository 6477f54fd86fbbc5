// AttendGroup against a double-precision reference written here from the
// definition: softmax over the visible slots (position in [0, query_pos],
// and within the sliding window when there is one), output = sum p * v,
// scores += sum over the group of p; invisible slots get nothing.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/flush_denormals.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace h2o::kernels {
namespace {

struct Case {
  int32_t n_group, head_dim, n_slots;
  TensorType type;
  int32_t n_home;  // slots whose rows are in the home arrays; the rest spill
};

// The positions a cache that reuses slots holds: p0 + stride * k for k in
// [0, n) in shuffled slots, every fifth slot empty (-1), and slot n - 1
// holding the query's own position, the largest unless `future` leaves
// some later (prefill) tokens in the cache. Returns the query position.
int32_t FillPositions(std::vector<int32_t>& pos, int32_t stride, bool future, std::mt19937& rng) {
  const auto n = static_cast<int32_t>(pos.size());
  for (int32_t s = 0; s < n; ++s) pos[s] = s * stride + 1;
  std::shuffle(pos.begin(), pos.end(), rng);
  for (int32_t s = 0; s < n; s += 5) pos[s] = -1;
  if (!future) {
    pos[n - 1] = (n - 1) * stride + 1;
    for (int32_t s = 0; s < n - 1; ++s) {
      if (pos[s] == pos[n - 1]) pos[s] = -1;
    }
  }
  if (pos[n - 1] < 0) pos[n - 1] = n * stride + 1;  // a hole: the query comes after all
  return pos[n - 1];
}

// Runs AttendGroup on random q, K and V for case c with the slots' positions
// `pos` and checks out, score_accum and step_attention against the
// definition in double: softmax over the visible slots (0 <= p <=
// query_pos, and query_pos - p < window when window > 0).
void CheckCase(const Case& c, const std::vector<int32_t>& pos, int32_t query_pos, int32_t window,
               std::mt19937& rng) {
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int32_t d = c.head_dim, n = c.n_slots, g = c.n_group;
  std::vector<float> kf(static_cast<size_t>(n) * d), vf(kf.size()), q(static_cast<size_t>(g) * d);
  for (float& x : kf) x = uni(rng);
  for (float& x : vf) x = uni(rng);
  for (float& x : q) x = 2.0f * uni(rng);
  std::vector<uint8_t> k(RowBytes(c.type, d) * n), v(k.size());
  for (int32_t s = 0; s < n; ++s) {
    QuantizeRow(c.type, &kf[static_cast<size_t>(s) * d], &k[s * RowBytes(c.type, d)], d);
    QuantizeRow(c.type, &vf[static_cast<size_t>(s) * d], &v[s * RowBytes(c.type, d)], d);
    // The reference sees exactly the stored values.
    DequantizeRow(c.type, &k[s * RowBytes(c.type, d)], &kf[static_cast<size_t>(s) * d], d);
    DequantizeRow(c.type, &v[s * RowBytes(c.type, d)], &vf[static_cast<size_t>(s) * d], d);
  }
  // Rows from n_home on move to separate spill arrays; NaN left in their
  // old place would poison the output if the kernel read it.
  const size_t row_bytes = RowBytes(c.type, d);
  const std::vector<uint8_t> k_spill(k.begin() + c.n_home * row_bytes, k.end());
  const std::vector<uint8_t> v_spill(v.begin() + c.n_home * row_bytes, v.end());
  const std::vector<float> nan_row(d, NAN);
  for (int32_t s = c.n_home; s < n; ++s) {
    QuantizeRow(c.type, nan_row.data(), &k[s * row_bytes], d);
    QuantizeRow(c.type, nan_row.data(), &v[s * row_bytes], d);
  }
  const KvSlots slots{.k = k.data(),
                      .v = v.data(),
                      .k_spill = k_spill.data(),
                      .v_spill = v_spill.data(),
                      .k_type = c.type,
                      .v_type = c.type,
                      .pos = pos.data(),
                      .n_slots = n,
                      .n_home = c.n_home,
                      .head_dim = d};
  std::vector<float> out(static_cast<size_t>(g) * d), probs(static_cast<size_t>(g) * n);
  std::vector<double> scores(n, 0.5);
  std::vector<float> step(n, 0.0f);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  AttendGroup(q.data(), g, slots, query_pos, window, scale,
              {out.data(), probs.data(), scores.data(), step.data()});

  auto visible = [&](int32_t s) {
    return pos[s] >= 0 && pos[s] <= query_pos && (window == 0 || query_pos - pos[s] < window);
  };
  const std::string where = "group " + std::to_string(g) + " d " + std::to_string(d) + " n " +
                            std::to_string(n) + " window " + std::to_string(window);
  std::vector<double> want_scores(n, 0.5);
  for (int32_t h = 0; h < g; ++h) {
    std::vector<double> logit(n, -INFINITY);
    double max_logit = -INFINITY;
    for (int32_t s = 0; s < n; ++s) {
      if (!visible(s)) continue;
      double dot = 0;
      for (int32_t i = 0; i < d; ++i)
        dot += double(q[h * d + i]) * kf[static_cast<size_t>(s) * d + i];
      logit[s] = dot * scale;
      max_logit = std::max(max_logit, logit[s]);
    }
    double sum = 0;
    for (int32_t s = 0; s < n; ++s)
      sum += std::isinf(logit[s]) ? 0.0 : std::exp(logit[s] - max_logit);
    for (int32_t i = 0; i < d; ++i) {
      double o = 0;
      for (int32_t s = 0; s < n; ++s) {
        if (std::isinf(logit[s])) continue;
        o += std::exp(logit[s] - max_logit) / sum * vf[static_cast<size_t>(s) * d + i];
      }
      // |v| <= 1 and the weights sum to 1: absolute tolerance.
      EXPECT_NEAR(out[h * d + i], o, 2e-5) << where;
    }
    for (int32_t s = 0; s < n; ++s) {
      if (!std::isinf(logit[s])) want_scores[s] += std::exp(logit[s] - max_logit) / sum;
      // Invisible slots get exactly zero weight.
      if (!visible(s)) {
        EXPECT_EQ(probs[static_cast<size_t>(h) * n + s], 0.0f) << where;
      }
    }
  }
  for (int32_t s = 0; s < n; ++s) {
    EXPECT_NEAR(scores[s], want_scores[s], 1e-5) << "slot " << s << " " << where;
    EXPECT_NEAR(step[s], want_scores[s] - 0.5, 1e-5) << "slot " << s << " " << where;
    if (!visible(s)) {
      EXPECT_EQ(scores[s], 0.5) << "slot " << s << " " << where;
      EXPECT_EQ(step[s], 0.0f) << "slot " << s << " " << where;
    }
  }
}

const Case kCases[] = {{1, 8, 1, TensorType::kF32, 1},      {2, 8, 37, TensorType::kF16, 30},
                       {8, 64, 300, TensorType::kF16, 300}, {4, 20, 129, TensorType::kF32, 64},
                       {3, 128, 65, TensorType::kF16, 0},   {8, 64, 513, TensorType::kF32, 449},
                       {1, 64, 200, TensorType::kF16, 137}};

TEST(AttendGroup, MatchesDoubleReference) {
  std::mt19937 rng(7);
  for (const Case& c : kCases) {
    // Shuffled positions with holes (free slots) and some future tokens.
    std::vector<int32_t> pos(c.n_slots);
    const int32_t query_pos = FillPositions(pos, 3, /*future=*/true, rng);
    CheckCase(c, pos, query_pos, /*window=*/0, rng);
  }
}

// Sliding windows of 1 (the query alone), 2, a few sizes inside the cache,
// and larger than every slot's distance (the same as no window), over
// consecutive positions in shuffled slots, with and without later tokens.
TEST(AttendGroup, SlidingWindowMatchesDoubleReference) {
  std::mt19937 rng(11);
  for (const Case& c : kCases) {
    for (int32_t window : {1, 2, 3, 17, c.n_slots + 5}) {
      for (bool future : {false, true}) {
        std::vector<int32_t> pos(c.n_slots);
        const int32_t query_pos = FillPositions(pos, 1, future, rng);
        CheckCase(c, pos, query_pos, window, rng);
      }
    }
  }
}

// A window cache as a sliding-window layer holds it: exactly the last
// `window` positions in a ring of `window` slots, the newest overwriting
// the oldest, each query seeing all of them; then a prefill chunk of four
// tokens appended to the ring, whose earlier queries must not see the
// chunk's later tokens nor the oldest ring entries past their window.
TEST(AttendGroup, SlidingWindowRingAndChunk) {
  std::mt19937 rng(13);
  const int32_t window = 6;
  const Case ring{2, 16, window, TensorType::kF16, window};
  for (int32_t query_pos = 0; query_pos < 3 * window; ++query_pos) {
    std::vector<int32_t> pos(window, -1);
    for (int32_t p = std::max(0, query_pos - window + 1); p <= query_pos; ++p) pos[p % window] = p;
    CheckCase(ring, pos, query_pos, window, rng);
  }
  const Case chunk{2, 16, window + 4, TensorType::kF32, window};
  std::vector<int32_t> pos(window + 4);
  const int32_t first = 20;  // the ring holds [first - window, first); the chunk [first, first + 4)
  for (int32_t p = first - window; p < first; ++p) pos[p % window] = p;
  for (int32_t t = 0; t < 4; ++t) pos[window + t] = first + t;
  for (int32_t t = 0; t < 4; ++t) CheckCase(chunk, pos, first + t, window, rng);
}

// Whether this thread's floating-point mode keeps denormal results (the
// caller's mode, which the kernels must restore).
bool DenormalsSurvive() {
  volatile float a = 1e-30f, b = 1e-10f;
  return a * b > 0.0f;
}

// A logit 95 below the row's maximum has probability e^-95, about 5e-42:
// a denormal float, flushed to exactly 0 (kernels/flush_denormals.h).
TEST(AttendGroup, ProbabilitiesBelowTheNormalRangeAreZero) {
  const std::vector<float> q = {1, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<float> k = {0, 0, 0, 0, 0, 0, 0, 0, -95, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<float> v = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2};
  const std::vector<int32_t> pos = {0, 1};
  const KvSlots slots{
      .k = k.data(), .v = v.data(), .pos = pos.data(), .n_slots = 2, .n_home = 2, .head_dim = 8};
  std::vector<float> out(8), probs(2);
  std::vector<double> scores(2, 0.0);
  ASSERT_TRUE(DenormalsSurvive());
  for (const KernelTable* kt : AvailableKernels()) {
    AttendGroup(*kt, q.data(), 1, slots, 1, 0, 1.0f, {out.data(), probs.data(), scores.data()});
    EXPECT_EQ(probs[0], 1.0f) << kt->name;
    if (kFlushesDenormals) {
      EXPECT_EQ(probs[1], 0.0f) << kt->name;
    }
    EXPECT_EQ(out, std::vector<float>(8, 1.0f)) << kt->name;
    EXPECT_TRUE(DenormalsSurvive()) << kt->name << ": the caller's floating-point mode is restored";
  }
}

TEST(AttendGroup, NoVisibleSlotIsAnInvariantFailure) {
  const std::vector<float> q(8, 1.0f), k(8, 1.0f), v(8, 1.0f);
  std::vector<float> out(8), probs(1);
  const std::vector<int32_t> pos = {3};
  const KvSlots slots{
      .k = k.data(), .v = v.data(), .pos = pos.data(), .n_slots = 1, .n_home = 1, .head_dim = 8};
  // Position 3 is 7 behind the query: outside a window of 7.
  EXPECT_DEATH(AttendGroup(q.data(), 1, slots, 10, 7, 1.0f, {out.data(), probs.data()}),
               "internal check failed");
}

}  // namespace
}  // namespace h2o::kernels
