// AttendGroupChunk on every backend against AttendGroup called query by
// query on the same backend (bit-identical: the contract), and against a
// double-precision reference written here from the definition, over cache
// layouts as the KV cache leaves them: older tokens in shuffled slots with
// holes, the chunk appended in order to the spill rows or partly into the
// holes (slot reuse), with windows, GQA groups and head sizes with and
// without a remainder past the vector width.
#include "kernels/attention_chunk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"

namespace h2o::kernels {
namespace {

struct Shape {
  int32_t n_queries, n_group, head_dim;
  TensorType type;
  int32_t window;
  bool scatter;  // chunk tokens fill the holes first, then the spill rows
};

std::string Describe(const KernelTable& kt, const Shape& c) {
  return std::string("backend ") + kt.name + " n " + std::to_string(c.n_queries) + " group " +
         std::to_string(c.n_group) + " d " + std::to_string(c.head_dim) + " type " +
         std::string(TraitsOf(c.type).name) + " window " + std::to_string(c.window) +
         (c.scatter ? " scattered" : " appended");
}

// One KV head's cache holding older positions and a chunk at pos0.
class ChunkCache {
 public:
  ChunkCache(const Shape& c, std::mt19937& rng) : d_(c.head_dim), type_(c.type) {
    // About 40 older tokens (every third position evicted) in shuffled home
    // slots, every fifth slot left free; what does not fit was evicted too.
    const int32_t n_home = 48 + static_cast<int32_t>(rng() % 16);
    pos0_ = 60 + static_cast<int32_t>(rng() % 8);
    pos_.assign(n_home, -1);
    std::vector<int32_t> usable;
    for (int32_t s = 0; s < n_home; ++s) {
      if (s % 5 != 0) usable.push_back(s);
    }
    std::shuffle(usable.begin(), usable.end(), rng);
    size_t next = 0;
    for (int32_t p = 0; p < pos0_ && next < usable.size(); ++p) {
      if (p % 3 != 1) pos_[usable[next++]] = p;
    }
    // The chunk: into the holes (shuffled order) when scattering, the rest
    // to the spill rows in order, as KvCache::Append does.
    std::vector<int32_t> holes;
    for (int32_t s = 0; s < n_home; ++s) {
      if (pos_[s] < 0) holes.push_back(s);
    }
    std::shuffle(holes.begin(), holes.end(), rng);
    int32_t t = 0;
    for (; c.scatter && t < c.n_queries && t < static_cast<int32_t>(holes.size()); ++t) {
      pos_[holes[t]] = pos0_ + t;
    }
    for (; t < c.n_queries; ++t) pos_.push_back(pos0_ + t);
    n_home_ = n_home;

    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    const size_t row_bytes = RowBytes(type_, d_);
    std::vector<float> row(d_);
    for (auto* dst : {&k_, &v_}) {
      dst->resize(row_bytes * pos_.size());
      for (size_t s = 0; s < pos_.size(); ++s) {
        for (float& x : row) x = uni(rng);
        QuantizeRow(type_, row.data(), dst->data() + s * row_bytes, d_);
      }
    }
  }

  KvSlots Slots() const {
    const size_t home_bytes = RowBytes(type_, d_) * n_home_;
    return {.k = k_.data(),
            .v = v_.data(),
            .k_spill = k_.data() + home_bytes,
            .v_spill = v_.data() + home_bytes,
            .k_type = type_,
            .v_type = type_,
            .pos = pos_.data(),
            .n_slots = static_cast<int32_t>(pos_.size()),
            .n_home = n_home_,
            .head_dim = d_};
  }
  // Slot s's K or V row, widened.
  std::vector<float> Row(const std::vector<uint8_t>& rows, int32_t s) const {
    std::vector<float> out(d_);
    DequantizeRow(type_, rows.data() + RowBytes(type_, d_) * s, out.data(), d_);
    return out;
  }
  const std::vector<uint8_t>& k() const { return k_; }
  const std::vector<uint8_t>& v() const { return v_; }
  int32_t pos0() const { return pos0_; }
  int32_t n_slots() const { return static_cast<int32_t>(pos_.size()); }
  int32_t pos(int32_t s) const { return pos_[s]; }

 private:
  int32_t d_;
  TensorType type_;
  std::vector<uint8_t> k_, v_;  // all rows; the spill rows from n_home_ on
  std::vector<int32_t> pos_;
  int32_t n_home_ = 0, pos0_ = 0;
};

// Queries and outputs with strides wider than a group, as the forward lays
// them out ([token][all heads]), the gaps holding a sentinel.
constexpr float kSentinel = 42.0f;

struct Results {
  std::vector<float> out;
  std::vector<double> scores;
  std::vector<float> step;
};

int64_t Stride(const Shape& c) { return int64_t{c.n_group + 1} * c.head_dim; }

Results RunChunk(const KernelTable& kt, const Shape& c, const ChunkCache& cache,
                 const std::vector<float>& q, bool with_scores, bool with_step) {
  const KvSlots kv = cache.Slots();
  const size_t scratch_floats =
      AttendGroupChunkScratchFloats(c.n_queries, c.n_group, kv.n_slots, c.head_dim);
  std::vector<float> scratch(scratch_floats + 16, kSentinel);
  Results r{std::vector<float>(c.n_queries * Stride(c), kSentinel),
            std::vector<double>(kv.n_slots, 0.25), std::vector<float>(kv.n_slots, 0.5f)};
  ChunkAttentionOutputs o{.out = r.out.data(),
                          .out_stride = Stride(c),
                          .scratch = scratch.data(),
                          .score_accum = with_scores ? r.scores.data() : nullptr,
                          .step_attention = with_step ? r.step.data() : nullptr};
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  AttendGroupChunk(kt, q.data(), Stride(c), c.n_queries, c.n_group, kv, cache.pos0(), c.window,
                   scale, o);
  for (size_t i = scratch_floats; i < scratch.size(); ++i) {
    EXPECT_EQ(scratch[i], kSentinel) << "wrote past the scratch it asked for";
  }
  return r;
}

// AttendGroup for each query in turn, step_attention on the last only.
Results RunPerQuery(const KernelTable& kt, const Shape& c, const ChunkCache& cache,
                    const std::vector<float>& q) {
  const KvSlots kv = cache.Slots();
  Results r{std::vector<float>(c.n_queries * Stride(c), kSentinel),
            std::vector<double>(kv.n_slots, 0.25), std::vector<float>(kv.n_slots, 0.5f)};
  std::vector<float> probs(static_cast<size_t>(c.n_group) * kv.n_slots);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  for (int32_t t = 0; t < c.n_queries; ++t) {
    AttendGroup(kt, q.data() + t * Stride(c), c.n_group, kv, cache.pos0() + t, c.window, scale,
                {r.out.data() + t * Stride(c), probs.data(), r.scores.data(),
                 t == c.n_queries - 1 ? r.step.data() : nullptr});
  }
  return r;
}

std::vector<float> RandomQueries(const Shape& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> uni(-2.0f, 2.0f);
  std::vector<float> q(c.n_queries * Stride(c), NAN);  // the gaps must not be read
  for (int32_t t = 0; t < c.n_queries; ++t) {
    for (int64_t i = 0; i < int64_t{c.n_group} * c.head_dim; ++i) q[t * Stride(c) + i] = uni(rng);
  }
  return q;
}

// Bitwise, so that -0 and 0 or two NaNs are told apart as AttendGroup's
// contract promises nothing about them.
template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

void ExpectIdentical(const Results& chunk, const Results& want, const std::string& where) {
  for (size_t i = 0; i < want.out.size(); ++i) {
    ASSERT_TRUE(SameBits(chunk.out[i], want.out[i]))
        << where << " out[" << i << "] " << chunk.out[i] << " vs " << want.out[i];
  }
  for (size_t s = 0; s < want.scores.size(); ++s) {
    ASSERT_TRUE(SameBits(chunk.scores[s], want.scores[s])) << where << " score of slot " << s;
    ASSERT_TRUE(SameBits(chunk.step[s], want.step[s])) << where << " step attention of slot " << s;
  }
}

// The definition in double: query t's head h softmaxes its logits over the
// slots it sees; out = sum p v; scores += sum over heads and queries of p.
void ExpectNearDefinition(const Shape& c, const ChunkCache& cache, const std::vector<float>& q,
                          const Results& got, const std::string& where) {
  const int32_t d = c.head_dim, n = cache.n_slots();
  const double scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<double> scores(n, 0.25), step(n, 0.5);
  for (int32_t t = 0; t < c.n_queries; ++t) {
    const int32_t query_pos = cache.pos0() + t;
    for (int32_t h = 0; h < c.n_group; ++h) {
      const float* qh = q.data() + t * Stride(c) + h * d;
      std::vector<double> logit(n, -INFINITY);
      double max_logit = -INFINITY;
      for (int32_t s = 0; s < n; ++s) {
        const int32_t p = cache.pos(s);
        if (p < 0 || p > query_pos || (c.window > 0 && query_pos - p >= c.window)) continue;
        const std::vector<float> k = cache.Row(cache.k(), s);
        double dot = 0;
        for (int32_t i = 0; i < d; ++i) dot += double{qh[i]} * k[i];
        logit[s] = dot * scale;
        max_logit = std::max(max_logit, logit[s]);
      }
      double sum = 0;
      for (double l : logit) sum += std::exp(l - max_logit);
      std::vector<double> out(d, 0.0);
      for (int32_t s = 0; s < n; ++s) {
        const double p = std::exp(logit[s] - max_logit) / sum;
        if (p == 0) continue;
        const std::vector<float> v = cache.Row(cache.v(), s);
        for (int32_t i = 0; i < d; ++i) out[i] += p * v[i];
        scores[s] += p;
        if (t == c.n_queries - 1) step[s] += p;
      }
      // |v| <= 1 and the weights sum to 1: an absolute bound.
      for (int32_t i = 0; i < d; ++i) {
        ASSERT_NEAR(got.out[t * Stride(c) + h * d + i], out[i], 2e-5)
            << where << " query " << t << " head " << h << " column " << i;
      }
    }
  }
  // Each probability is within about 1e-6 of its exact value (float
  // logits and exp); a slot's score adds n_queries * n_group of them.
  const double score_tol = 2e-6 * c.n_queries * c.n_group + 1e-6;
  for (int32_t s = 0; s < n; ++s) {
    ASSERT_NEAR(got.scores[s], scores[s], score_tol) << where << " slot " << s;
    ASSERT_NEAR(got.step[s], step[s], 2e-6 * c.n_group + 1e-6) << where << " slot " << s;
  }
}

void ExpectSentinelsKept(const Shape& c, const Results& got, const std::string& where) {
  for (int32_t t = 0; t < c.n_queries; ++t) {
    for (int64_t i = int64_t{c.n_group} * c.head_dim; i < Stride(c); ++i) {
      ASSERT_EQ(got.out[t * Stride(c) + i], kSentinel) << where << " wrote between groups";
    }
  }
}

Shape ShapeFor(int32_t n_queries, uint32_t i) {
  constexpr int32_t kGroups[] = {1, 4, 8};
  constexpr int32_t kHeadDims[] = {64, 128, 80, 100};
  constexpr int32_t kWindows[] = {0, 1, 5, 1 << 20};
  const int32_t head_dim = kHeadDims[(i / 3) % 4];
  // Every KV row type in turn where head_dim is whole blocks of it.
  TensorType type = KvRowTypes()[i % KvRowTypes().size()];
  if (head_dim % TraitsOf(type).block_size != 0) type = i % 2 == 0 ? TensorType::kF16 : TensorType::kF32;
  return {n_queries, kGroups[i % 3], head_dim, type, kWindows[(i / 2) % 4], i % 5 < 2};
}

// Every chunk length from 1 to 64, with groups, head sizes, types, windows
// and layouts cycling, on every backend: bit-identical to AttendGroup.
TEST(AttendGroupChunk, EqualsAttendGroupQueryByQuery) {
  for (const KernelTable* kt : AvailableKernels()) {
    std::mt19937 rng(17);
    for (int32_t n = 1; n <= 64; ++n) {
      const Shape c = ShapeFor(n, static_cast<uint32_t>(n * 7));
      const ChunkCache cache(c, rng);
      const std::vector<float> q = RandomQueries(c, rng);
      const std::string where = Describe(*kt, c);
      const Results chunk = RunChunk(*kt, c, cache, q, true, true);
      ExpectIdentical(chunk, RunPerQuery(*kt, c, cache, q), where);
      ExpectSentinelsKept(c, chunk, where);
    }
  }
}

// Chunks longer than a block of queries and than the older cache: blocks
// whose slots are mostly the chunk's own, the causal mask across blocks.
TEST(AttendGroupChunk, LongChunksEqualAttendGroup) {
  for (const KernelTable* kt : AvailableKernels()) {
    std::mt19937 rng(19);
    for (const Shape& c : {Shape{100, 8, 128, TensorType::kF16, 0, false},
                           Shape{100, 1, 64, TensorType::kF32, 5, true},
                           Shape{300, 4, 64, TensorType::kF16, 0, true},
                           Shape{300, 1, 80, TensorType::kF16, 37, false},
                           Shape{100, 4, 128, TensorType::kQ8_0, 0, true},
                           Shape{100, 8, 64, TensorType::kQ4_0, 5, false}}) {
      const ChunkCache cache(c, rng);
      const std::vector<float> q = RandomQueries(c, rng);
      ExpectIdentical(RunChunk(*kt, c, cache, q, true, true), RunPerQuery(*kt, c, cache, q),
                      Describe(*kt, c));
    }
  }
}

TEST(AttendGroupChunk, MatchesDoubleReference) {
  std::mt19937 rng(23);
  for (const Shape& c :
       {Shape{1, 1, 64, TensorType::kF16, 0, false}, Shape{33, 8, 128, TensorType::kF16, 0, true},
        Shape{40, 4, 100, TensorType::kF32, 5, false}, Shape{64, 1, 80, TensorType::kF32, 1, true},
        Shape{100, 8, 64, TensorType::kF16, 1 << 20, false}}) {
    const ChunkCache cache(c, rng);
    const std::vector<float> q = RandomQueries(c, rng);
    for (const KernelTable* kt : AvailableKernels()) {
      ExpectNearDefinition(c, cache, q, RunChunk(*kt, c, cache, q, true, true), Describe(*kt, c));
    }
  }
}

// Null score outputs leave the attention output as it was and touch
// nothing else; either one alone gets what it would get with the other;
// the caller's floating-point mode comes back unchanged.
TEST(AttendGroupChunk, ScoreOutputsAreOptional) {
  std::mt19937 rng(29);
  const Shape c{45, 4, 64, TensorType::kF16, 0, true};
  const ChunkCache cache(c, rng);
  const std::vector<float> q = RandomQueries(c, rng);
  const KernelTable& kt = ActiveKernels();
  const Results both = RunChunk(kt, c, cache, q, true, true);
  volatile float tiny = 1e-30f, small = 1e-10f;
  EXPECT_GT(tiny * small, 0.0f)
      << "the caller's floating-point mode (flush_denormals.h) is restored";
  const Results none = RunChunk(kt, c, cache, q, false, false);
  const Results scores_only = RunChunk(kt, c, cache, q, true, false);
  const Results step_only = RunChunk(kt, c, cache, q, false, true);
  EXPECT_EQ(none.out, both.out);
  EXPECT_EQ(none.scores, std::vector<double>(cache.n_slots(), 0.25));
  EXPECT_EQ(none.step, std::vector<float>(cache.n_slots(), 0.5f));
  EXPECT_EQ(scores_only.scores, both.scores);
  EXPECT_EQ(scores_only.step, none.step);
  EXPECT_EQ(step_only.step, both.step);
  EXPECT_EQ(step_only.scores, none.scores);
}

// A forward sizes the scratch once, for its largest chunk and cache; each
// call writes within the size for its own arguments (the sentinels above),
// and that size never exceeds the size for larger ones.
TEST(AttendGroupChunk, ScratchForTheLargestCallFitsSmallerOnes) {
  const int32_t queries[] = {1, 7, 32, 100, 512};
  const int32_t slots[] = {1, 100, 512, 2048, 4096, 8192, 65536};
  for (int32_t g : {1, 4, 8, 32}) {
    for (int32_t max_q : queries) {
      for (int32_t max_s : slots) {
        const size_t most = AttendGroupChunkScratchFloats(max_q, g, max_s, 128);
        for (int32_t n_q : queries) {
          for (int32_t n_s : slots) {
            if (n_q > max_q || n_s > max_s) continue;
            EXPECT_LE(AttendGroupChunkScratchFloats(n_q, g, n_s, 128), most)
                << "group " << g << " " << n_q << " <= " << max_q << " queries, " << n_s
                << " <= " << max_s << " slots";
          }
        }
      }
    }
  }
}

TEST(AttendGroupChunk, QueryWithoutVisibleSlotIsAnInvariantFailure) {
  const std::vector<float> q(16, 1.0f), k(8, 1.0f), v(8, 1.0f);
  std::vector<float> out(16), scratch(AttendGroupChunkScratchFloats(2, 1, 1, 8));
  const std::vector<int32_t> pos = {11};
  const KvSlots slots{
      .k = k.data(), .v = v.data(), .pos = pos.data(), .n_slots = 1, .n_home = 1, .head_dim = 8};
  // Queries at 10 and 11: the first comes before the only cached token.
  EXPECT_DEATH(AttendGroupChunk(q.data(), 8, 2, 1, slots, 10, 0, 1.0f,
                                {.out = out.data(), .out_stride = 8, .scratch = scratch.data()}),
               "internal check failed");
}

}  // namespace
}  // namespace h2o::kernels
