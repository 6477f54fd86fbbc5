// After warm-up, decoding a token must not touch the heap (the cache and
// every activation are preallocated). Global operator new is replaced in
// this test binary to count allocations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "test_data.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace h2o {
namespace {

// stories260K is too small for the thread pool to take part, so a random
// model with wider matrices (that MatVec and attention do split) runs too.
std::string WideModelPath() {
  const std::string path =
      ::testing::TempDir() + "h2o_zero_alloc_wide_" + std::to_string(::getpid()) + ".gguf";
  MkModelOptions o;
  o.n_embd = 256;
  o.n_layer = 2;
  o.n_head = 8;
  o.n_head_kv = 2;
  o.n_ff = 512;
  o.n_vocab = 300;
  o.n_ctx = 512;
  o.type = "f16";
  o.output_path = path;
  o.n_threads = 1;
  EXPECT_TRUE(MakeRandomModel(o).ok());
  return path;
}

TEST(ZeroAlloc, DecodeAllocatesNothingAfterWarmUp) {
  for (const std::string& path : {testing::ModelPath(), WideModelPath()}) {
    auto model = Model::Load(path);
    if (path != testing::ModelPath()) std::remove(path.c_str());  // mapped: pages stay
    ASSERT_TRUE(model.ok());
    for (const char* text :
         {"full", "h2o:heavy=16,recent=16", "tova:k=24", "sink:sinks=4,recent=20"}) {
      for (int threads : {1, 2}) {
        SessionOptions o;
        o.n_threads = threads;
        o.max_chunk = 8;
        o.kv = ResolveKvSpec(ParseKvSpec(text).value(), std::nullopt).value();
        o.kv_pos_shift = std::string(text).starts_with("sink");
        auto session = Session::Create(**model, o);
        ASSERT_TRUE(session.ok());
        Sampler sampler({.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 1});
        const int32_t prompt[] = {1, 103, 107, 261, 78, 232, 183, 286};  // valid in both vocabs
        ASSERT_TRUE((*session)->Eval(prompt).ok());
        int32_t token[] = {0};
        for (int i = 0; i < 40; ++i) {  // warm-up: past every budget, so eviction runs
          token[0] = sampler.Sample((*session)->last_logits());
          ASSERT_TRUE((*session)->Eval(token).ok());
        }
        const int64_t before = g_allocations.load();
        for (int i = 0; i < 50; ++i) {
          token[0] = sampler.Sample((*session)->last_logits());
          if (!(*session)->Eval(token).ok()) FAIL();
        }
        EXPECT_EQ(g_allocations.load() - before, 0)
            << path << " " << text << " threads " << threads;
      }
    }
  }
}

// A batch of sequences with different policies, each decoding a token per
// step in one Engine::Forward: after warm-up no step touches the heap.
TEST(ZeroAlloc, BatchedDecodeAllocatesNothingAfterWarmUp) {
  const std::string path = WideModelPath();
  auto model = Model::Load(path);
  std::remove(path.c_str());  // mapped: the pages stay until the model goes
  ASSERT_TRUE(model.ok());
  for (int threads : {1, 2}) {
    auto engine = Engine::Create(**model, {.n_threads = threads, .max_batch_tokens = 32});
    ASSERT_TRUE(engine.ok());
    std::vector<std::unique_ptr<Sequence>> seqs;
    for (const char* text : {"full", "h2o:heavy=16,recent=16", "tova:k=24", "local:recent=20",
                             "random:k=8,recent=8,seed=2", "sink:sinks=4,recent=20"}) {
      SequenceOptions o;
      o.max_chunk = 8;
      o.kv = ResolveKvSpec(ParseKvSpec(text).value(), std::nullopt).value();
      auto seq = (*engine)->NewSequence(o);
      ASSERT_TRUE(seq.ok());
      seqs.push_back(std::move(seq).value());
    }
    const int32_t prompt[] = {1, 103, 107, 261, 78, 232, 183, 286};
    for (auto& seq : seqs) ASSERT_TRUE((*engine)->Eval(*seq, prompt).ok());
    Sampler sampler({.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 1});
    std::vector<int32_t> next(seqs.size());
    std::vector<BatchItem> batch(seqs.size());
    auto step = [&] {
      for (size_t i = 0; i < seqs.size(); ++i) {
        next[i] = sampler.Sample(seqs[i]->last_logits());
        batch[i] = {seqs[i].get(), std::span<const int32_t>(&next[i], 1)};
      }
      return (*engine)->Forward(batch);
    };
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(step().ok());  // past every budget
    const int64_t before = g_allocations.load();
    for (int i = 0; i < 50; ++i) {
      if (!step().ok()) FAIL();
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << "threads " << threads;
  }
}

}  // namespace
}  // namespace h2o
