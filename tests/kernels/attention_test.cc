// AttendGroup against a double-precision reference written here from the
// definition: softmax over the slots with position in [0, query_pos],
// output = sum p * v, scores += sum over the group of p.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace h2o::kernels {
namespace {

struct Case {
  int32_t n_group, head_dim, n_slots;
  TensorType type;
  int32_t n_home;  // slots whose rows are in the home arrays; the rest spill
};

TEST(AttendGroup, MatchesDoubleReference) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const Case cases[] = {{1, 8, 1, TensorType::kF32, 1},       {2, 8, 37, TensorType::kF16, 30},
                        {8, 64, 300, TensorType::kF16, 300},  {4, 20, 129, TensorType::kF32, 64},
                        {3, 128, 65, TensorType::kF16, 0},    {8, 64, 513, TensorType::kF32, 449},
                        {1, 64, 200, TensorType::kF16, 137}};
  for (const Case& c : cases) {
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
    // Shuffled positions with holes (free slots) and some future tokens.
    std::vector<int32_t> pos(n);
    for (int32_t s = 0; s < n; ++s) pos[s] = s * 3 + 1;
    std::shuffle(pos.begin(), pos.end(), rng);
    for (int32_t s = 0; s < n; s += 5) pos[s] = -1;
    const int32_t query_pos = pos[n - 1] >= 0 ? pos[n - 1] : 3 * n;  // slot n-1 always visible
    if (pos[n - 1] < 0) pos[n - 1] = 0;

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
    const KvSlots slots{.k = k.data(), .v = v.data(), .k_spill = k_spill.data(),
                        .v_spill = v_spill.data(), .k_type = c.type, .v_type = c.type,
                        .pos = pos.data(), .n_slots = n, .n_home = c.n_home, .head_dim = d};
    std::vector<float> out(static_cast<size_t>(g) * d), probs(static_cast<size_t>(g) * n);
    std::vector<double> scores(n, 0.5);
    std::vector<float> step(n, 0.0f);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    AttendGroup(q.data(), g, slots, query_pos, scale,
                {out.data(), probs.data(), scores.data(), step.data()});

    std::vector<double> want_scores(n, 0.5);
    for (int32_t h = 0; h < g; ++h) {
      std::vector<double> logit(n, -INFINITY);
      double max_logit = -INFINITY;
      for (int32_t s = 0; s < n; ++s) {
        if (pos[s] < 0 || pos[s] > query_pos) continue;
        double dot = 0;
        for (int32_t i = 0; i < d; ++i) dot += double(q[h * d + i]) * kf[static_cast<size_t>(s) * d + i];
        logit[s] = dot * scale;
        max_logit = std::max(max_logit, logit[s]);
      }
      double sum = 0;
      for (int32_t s = 0; s < n; ++s) sum += std::isinf(logit[s]) ? 0.0 : std::exp(logit[s] - max_logit);
      for (int32_t i = 0; i < d; ++i) {
        double o = 0;
        for (int32_t s = 0; s < n; ++s) {
          if (std::isinf(logit[s])) continue;
          o += std::exp(logit[s] - max_logit) / sum * vf[static_cast<size_t>(s) * d + i];
        }
        // |v| <= 1 and the weights sum to 1: absolute tolerance.
        EXPECT_NEAR(out[h * d + i], o, 2e-5) << "group " << g << " d " << d << " n " << n;
      }
      for (int32_t s = 0; s < n; ++s) {
        if (!std::isinf(logit[s])) want_scores[s] += std::exp(logit[s] - max_logit) / sum;
      }
    }
    for (int32_t s = 0; s < n; ++s) {
      EXPECT_NEAR(scores[s], want_scores[s], 1e-5) << "slot " << s << " n " << n;
      EXPECT_NEAR(step[s], want_scores[s] - 0.5, 1e-5) << "slot " << s;
      if (pos[s] < 0 || pos[s] > query_pos) {
        EXPECT_EQ(scores[s], 0.5);
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
