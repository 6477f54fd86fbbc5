// The scheduler: admission by KV reservation in arrival order, the queue
// bound, cancellation freeing KV before the next admission, the finish
// reasons, and requests run together giving the ids each gives alone.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "q8_model.h"
#include "scratch_dir.h"
#include "runtime/session.h"
#include "runtime/state_dir.h"
#include "runtime/state_file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"
#include "test_data.h"

namespace h2o {
namespace {

// A q8_0 model: batches are bit-exact (see batch_parity_test.cc).
const Model& Q8Model() { return testing::Q8Model(); }

SequenceOptions Options(const std::string& kv, int32_t n_ctx = 128) {
  SequenceOptions o;
  o.n_ctx = n_ctx;
  o.max_chunk = 16;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), std::nullopt).value();
  return o;
}

std::vector<int32_t> Prompt(int seed, int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(3 + (seed * 131 + i * 37) % 500);
  return ids;
}

// What each request streamed, by id.
struct Log {
  std::map<uint64_t, std::vector<int32_t>> tokens;
  std::map<uint64_t, FinishReason> finished;
  std::vector<uint64_t> first_token_order;
};

Request Make(Log& log, std::vector<int32_t> prompt, SequenceOptions options, int32_t max_tokens) {
  Request r;
  r.prompt = std::move(prompt);
  r.sequence = options;
  r.generation.sampling.temperature = 0.0f;
  r.generation.max_tokens = max_tokens;
  r.on_event = [&log](const TokenEvent& e) {
    if (e.finished) {
      log.finished[e.request_id] = e.reason;
      return true;
    }
    if (log.tokens[e.request_id].empty()) log.first_token_order.push_back(e.request_id);
    log.tokens[e.request_id].push_back(e.token);
    return true;
  };
  return r;
}

std::unique_ptr<Engine> NewEngine() {
  auto e = Engine::Create(Q8Model(), {.n_threads = 2, .max_batch_tokens = 64});
  EXPECT_TRUE(e.ok());
  return std::move(e).value();
}

std::vector<int32_t> Alone(const std::vector<int32_t>& prompt, const SequenceOptions& options,
                           int n) {
  SessionOptions o;
  static_cast<SequenceOptions&>(o) = options;
  auto s = Session::Create(Q8Model(), o);
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE((*s)->Eval(prompt).ok());
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(ArgMax((*s)->last_logits()));
    const int32_t next[] = {ids.back()};
    if (i + 1 < n) {
      EXPECT_TRUE((*s)->Eval(next).ok());
    }
  }
  return ids;
}

TEST(Scheduler, RequestsTogetherGiveTheirIdsAlone) {
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {.kv_memory_bytes = size_t{1} << 30});
  Log log;
  const std::vector<std::string> specs = {"full", "h2o:heavy=8,recent=8", "local:recent=16",
                                          "tova:k=12", "sink:sinks=4,recent=8"};
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < specs.size(); ++i) {
    auto id = scheduler.Submit(Make(log, Prompt(i, 20 + 9 * i), Options(specs[i]), 25 + 3 * i));
    ASSERT_TRUE(id.ok()) << id.status().message();
    ids.push_back(*id);
  }
  while (scheduler.Step()) {
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i]);
    EXPECT_EQ(log.tokens[ids[i]], Alone(Prompt(i, 20 + 9 * i), Options(specs[i]), 25 + 3 * i));
    EXPECT_EQ(log.finished[ids[i]], FinishReason::kLength);
  }
  const SchedulerStats stats = scheduler.Stats();
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.kv_reserved_bytes, 0u);
  EXPECT_EQ(stats.requests_finished, 5);
  EXPECT_GT(stats.evictions, 0);  // the evicting policies evicted
}

TEST(Scheduler, PromptChunksStayWholeUnderATightStepBudget) {
  // 20 tokens a step against chunks of 16 and up to five decode tokens: a
  // chunk cut to what a step has left would evict at other points than the
  // sequence alone does, and an evicting cache would keep other tokens.
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {.kv_memory_bytes = size_t{1} << 30, .step_tokens = 20});
  Log log;
  const std::vector<std::string> specs = {"h2o:heavy=8,recent=8", "local:recent=12", "full",
                                          "tova:k=12", "sink:sinks=4,recent=8"};
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < specs.size(); ++i) {
    auto id = scheduler.Submit(Make(log, Prompt(i, 25 + 7 * i), Options(specs[i]), 12 + 4 * i));
    ASSERT_TRUE(id.ok()) << id.status().message();
    ids.push_back(*id);
  }
  int steps = 0;
  while (scheduler.Step()) {
    ASSERT_LE(scheduler.last_step().decode + scheduler.last_step().prefill, 20);
    ++steps;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i]);
    EXPECT_EQ(log.tokens[ids[i]], Alone(Prompt(i, 25 + 7 * i), Options(specs[i]), 12 + 4 * i));
  }
  EXPECT_LT(steps, 200);
}

TEST(Scheduler, DecodeTokensAStepCannotTakeGoFirstInTheNext) {
  // Six decoding sequences, four tokens a step: once every prompt is in,
  // each gets a token at least every other step; all give their ids alone.
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {.kv_memory_bytes = size_t{1} << 30, .step_tokens = 4});
  int step = 0, last_prompt_step = 0;
  std::map<uint64_t, std::vector<int>> token_steps;
  Log log;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 6; ++i) {
    Request r = Make(log, Prompt(i, 4), Options("full"), 12);
    auto stream = r.on_event;
    r.on_event = [&, stream](const TokenEvent& e) {
      if (!e.finished) token_steps[e.request_id].push_back(step);
      return stream(e);
    };
    ids.push_back(scheduler.Submit(std::move(r)).value());
  }
  while (scheduler.Step()) {
    if (scheduler.last_step().prefill > 0) last_prompt_step = step;
    ++step;
  }
  for (int i = 0; i < 6; ++i) {
    const std::vector<int>& at = token_steps[ids[i]];
    ASSERT_EQ(at.size(), 12u) << "request " << i;
    for (size_t k = 1; k < at.size(); ++k) {
      if (at[k - 1] > last_prompt_step) {
        EXPECT_LE(at[k] - at[k - 1], 2) << "request " << i;
      }
    }
    EXPECT_EQ(log.tokens[ids[i]], Alone(Prompt(i, 4), Options("full"), 12));
  }
}

TEST(Scheduler, SampledRequestsTogetherGiveWhatEachGivesAlone) {
  // Each request's sampler is its own (seeded per request), wherever the
  // engine's threads run it: five requests together on three threads give
  // each one's tokens of a run with it alone.
  auto sampled = [](Log& log, int i) {
    const char* specs[] = {"h2o:heavy=8,recent=8", "full", "local:recent=12"};
    Request r = Make(log, Prompt(i, 12 + 5 * i), Options(specs[i % 3]), 20);
    r.generation.sampling = {.temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 100u + i};
    return r;
  };
  auto engine = Engine::Create(Q8Model(), {.n_threads = 3, .max_batch_tokens = 64});
  ASSERT_TRUE(engine.ok());
  Scheduler together(**engine, {.kv_memory_bytes = size_t{1} << 30});
  Log log;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(together.Submit(sampled(log, i)).value());
  while (together.Step()) {
  }
  for (int i = 0; i < 5; ++i) {
    Scheduler alone(**engine, {.kv_memory_bytes = size_t{1} << 30});
    Log alone_log;
    const uint64_t id = alone.Submit(sampled(alone_log, i)).value();
    while (alone.Step()) {
    }
    ASSERT_EQ(alone_log.tokens[id].size(), 20u);
    EXPECT_EQ(log.tokens[ids[i]], alone_log.tokens[id]) << "request " << i;
  }
}

TEST(Scheduler, AdmitsByReservationInArrivalOrder) {
  auto engine = NewEngine();
  const size_t full = engine->SequenceKvBytes(Options("full")).value();
  const size_t small = engine->SequenceKvBytes(Options("local:recent=8")).value();
  ASSERT_GT(full, 4 * small);
  // Room for two full caches and a bit.
  Scheduler scheduler(*engine, {.kv_memory_bytes = 2 * full + small});
  Log log;
  std::vector<uint64_t> ids;
  for (const char* kv : {"full", "full", "full", "local:recent=8"}) {
    ids.push_back(scheduler.Submit(Make(log, Prompt(1, 10), Options(kv), 4)).value());
  }
  ASSERT_TRUE(scheduler.Step());
  SchedulerStats stats = scheduler.Stats();
  EXPECT_EQ(stats.running, 2);
  EXPECT_EQ(stats.queued, 2);
  EXPECT_EQ(stats.kv_reserved_bytes, 2 * full);
  // The small request fits but waits behind the third full one: arrival
  // order, so the big one is not starved.
  while (scheduler.Step()) {
  }
  ASSERT_EQ(log.first_token_order.size(), 4u);
  EXPECT_EQ(log.first_token_order[2], ids[2]);
  EXPECT_EQ(log.first_token_order[3], ids[3]);
}

// At most max_running sequences at once however much KV memory is free;
// the final event reports each request's KV bytes and its evictions.
TEST(Scheduler, MaxRunningCapsAdmissionAndTheFinalEventReportsKv) {
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {.kv_memory_bytes = size_t{1} << 30, .max_running = 2});
  std::map<uint64_t, TokenEvent> last;
  auto make = [&](const char* kv) {
    Request r;
    r.prompt = Prompt(5, 10);
    r.sequence = Options(kv);
    r.generation.sampling.temperature = 0.0f;
    r.generation.max_tokens = 12;
    r.on_event = [&last](const TokenEvent& e) {
      if (e.finished) last[e.request_id] = e;
      return true;
    };
    return r;
  };
  const uint64_t full = scheduler.Submit(make("full")).value();
  const uint64_t local = scheduler.Submit(make("local:recent=8")).value();
  scheduler.Submit(make("full")).value();
  ASSERT_TRUE(scheduler.Step());
  EXPECT_EQ(scheduler.Stats().running, 2);
  EXPECT_EQ(scheduler.Stats().queued, 1);
  while (scheduler.Step()) {
    EXPECT_LE(scheduler.Stats().running, 2);
  }
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[full].kv_bytes, engine->SequenceKvBytes(Options("full")).value());
  EXPECT_EQ(last[full].evictions, 0);
  EXPECT_EQ(last[local].kv_bytes, engine->SequenceKvBytes(Options("local:recent=8")).value());
  // 10 prompt + 11 fed generated tokens (the last is never fed) = 21 per
  // (layer, KV head), 8 kept: 13 evicted from each of 2 layers x 2 heads.
  EXPECT_EQ(last[local].evictions, 13 * 2 * 2);
}

TEST(Scheduler, CancelFreesKvBeforeTheNextAdmission) {
  auto engine = NewEngine();
  const size_t full = engine->SequenceKvBytes(Options("full")).value();
  Scheduler scheduler(*engine, {.kv_memory_bytes = full});
  Log log;
  const uint64_t a = scheduler.Submit(Make(log, Prompt(1, 10), Options("full"), 50)).value();
  const uint64_t b = scheduler.Submit(Make(log, Prompt(2, 10), Options("full"), 5)).value();
  const uint64_t c = scheduler.Submit(Make(log, Prompt(3, 10), Options("full"), 5)).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(scheduler.Step());
  EXPECT_EQ(scheduler.Stats().running, 1);
  EXPECT_TRUE(log.tokens[b].empty());
  scheduler.Cancel(a);  // running: b takes its place at the next step
  scheduler.Cancel(c);  // queued: dropped
  ASSERT_TRUE(scheduler.Step());
  EXPECT_EQ(log.finished[a], FinishReason::kCancelled);
  EXPECT_EQ(log.finished[c], FinishReason::kCancelled);
  EXPECT_EQ(scheduler.Stats().running, 1);
  EXPECT_EQ(scheduler.Stats().queued, 0);
  EXPECT_EQ(scheduler.Stats().kv_reserved_bytes, full);
  while (scheduler.Step()) {
  }
  EXPECT_EQ(log.tokens[b].size(), 5u);
  EXPECT_TRUE(log.tokens[c].empty());
  EXPECT_EQ(scheduler.Stats().kv_reserved_bytes, 0u);
}

// The bundled vocabulary with `end` as its end-of-generation id, so a
// random-weight model's greedy token can end a generation.
Tokenizer VocabEndingAt(int32_t end) {
  Vocab vocab = LoadVocabFromGguf(Q8Model().file()).value();
  vocab.eos_id = end;
  return Tokenizer(std::move(vocab));
}

// What a scheduler request streamed: its events' tokens and text joined.
struct Streamed {
  std::vector<int32_t> ids;
  std::string text;
  FinishReason reason = FinishReason::kError;
};

Streamed RunOne(Engine& engine, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                const GenerateOptions& generation) {
  Scheduler scheduler(engine, {});
  Streamed out;
  Request r;
  r.prompt = prompt;
  r.sequence = Options("full");
  r.generation = generation;
  r.tokenizer = &tokenizer;
  r.on_event = [&out](const TokenEvent& e) {
    out.text += e.text;
    if (e.finished) {
      out.reason = e.reason;
    } else {
      out.ids.push_back(e.token);
    }
    return true;
  };
  EXPECT_TRUE(scheduler.Submit(std::move(r)).ok());
  while (scheduler.Step()) {
  }
  return out;
}

// The scheduler ends a request where `h2o generate`'s loop (Generate) ends
// the same generation, with the same tokens and text: at an
// end-of-generation token, at a stop string, at max_tokens, and through
// end tokens when told to.
TEST(Scheduler, EndsWhereGenerateEnds) {
  auto engine = NewEngine();
  const std::vector<int32_t> prompt = Prompt(4, 12);
  const std::vector<int32_t> greedy = Alone(prompt, Options("full"), 8);
  ASSERT_EQ(greedy.size(), 8u);
  // The fourth greedy token made the end of generation; stop at the text
  // of the third and fourth pieces, cut inside the fourth (so the stop
  // spans tokens where the pieces allow).
  const Tokenizer ends_at_fourth = VocabEndingAt(greedy[3]);
  int32_t unused = 3;  // an id greedy never picks here: nothing ends early
  while (std::find(greedy.begin(), greedy.end(), unused) != greedy.end()) ++unused;
  const Tokenizer plain = VocabEndingAt(unused);
  std::string stop = plain.TokenToPiece(greedy[2]) + plain.TokenToPiece(greedy[3]);
  ASSERT_GE(stop.size(), 2u);
  stop.pop_back();

  struct Case {
    const char* name;
    const Tokenizer* tokenizer;
    GenerateOptions options;
    FinishReason reason;
  };
  GenerateOptions greedy8;
  greedy8.max_tokens = 8;
  greedy8.sampling.temperature = 0.0f;
  GenerateOptions with_stop = greedy8;
  with_stop.stop = {"never appears", stop};
  GenerateOptions through_end = greedy8;
  through_end.stop_at_end = false;
  const Case cases[] = {
      {"end of generation", &ends_at_fourth, greedy8, FinishReason::kEndOfGeneration},
      {"stop string", &plain, with_stop, FinishReason::kStopped},
      {"max_tokens", &plain, greedy8, FinishReason::kLength},
      {"ignore eos", &ends_at_fourth, through_end, FinishReason::kLength},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto sequence = engine->NewSequence(Options("full"));
    ASSERT_TRUE(sequence.ok());
    auto expected = Generate(*engine, **sequence, prompt, c.options, c.tokenizer);
    ASSERT_TRUE(expected.ok());
    const Streamed got = RunOne(*engine, *c.tokenizer, prompt, c.options);
    EXPECT_EQ(got.reason, c.reason);
    EXPECT_EQ(got.ids, expected->ids);
    EXPECT_EQ(got.text, expected->text);
    EXPECT_STREQ(FinishReasonName(got.reason), GenerationEndName(expected->finish_reason));
  }
  // Where each case ends, worked out from the greedy tokens and pieces.
  const auto first_end = std::find(greedy.begin(), greedy.end(), greedy[3]);
  EXPECT_EQ(RunOne(*engine, ends_at_fourth, prompt, greedy8).ids,
            std::vector<int32_t>(greedy.begin(), first_end));
  std::string text;
  size_t completes = 0;  // tokens up to the one whose piece completes the stop
  while (text.find(stop) == std::string::npos) text += plain.TokenToPiece(greedy[completes++]);
  const Streamed stopped = RunOne(*engine, plain, prompt, with_stop);
  EXPECT_EQ(stopped.ids, std::vector<int32_t>(greedy.begin(), greedy.begin() + completes));
  EXPECT_EQ(stopped.text, text.substr(0, text.find(stop)));
  EXPECT_EQ(RunOne(*engine, ends_at_fourth, prompt, through_end).ids, greedy);
}

// A callback that returns false stops its request (a client gone); stop
// strings without a vocabulary are refused at Submit.
TEST(Scheduler, TheCallbackStopsARequest) {
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {});
  Log log;
  Request stops = Make(log, Prompt(4, 12), Options("full"), 10);
  int seen = 0;
  stops.on_event = [&](const TokenEvent& ev) {
    if (ev.finished) {
      log.finished[ev.request_id] = ev.reason;
      return true;
    }
    return ++seen < 3;  // stop after the third token
  };
  const uint64_t s = scheduler.Submit(std::move(stops)).value();
  while (scheduler.Step()) {
  }
  EXPECT_EQ(log.finished[s], FinishReason::kStopped);
  EXPECT_EQ(seen, 3);

  Request no_vocab = Make(log, Prompt(4, 12), Options("full"), 10);
  no_vocab.generation.stop = {"x"};
  auto refused = scheduler.Submit(std::move(no_vocab));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "stop strings need the model's vocabulary");
}

TEST(Scheduler, RefusesWhatCouldNeverRun) {
  auto engine = NewEngine();
  const size_t full = engine->SequenceKvBytes(Options("full")).value();
  Scheduler scheduler(*engine, {.kv_memory_bytes = full - 1, .max_queue = 2});
  Log log;
  auto too_big = scheduler.Submit(Make(log, Prompt(1, 10), Options("full"), 5));
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("larger than the whole KV memory limit"),
            std::string::npos);
  auto too_long = scheduler.Submit(Make(log, Prompt(1, 100), Options("local:recent=8"), 29));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("exceed the context of 128"), std::string::npos);
  EXPECT_FALSE(scheduler.Submit(Make(log, {}, Options("local:recent=8"), 5)).ok());
  ASSERT_TRUE(scheduler.Submit(Make(log, Prompt(1, 10), Options("local:recent=8"), 5)).ok());
  ASSERT_TRUE(scheduler.Submit(Make(log, Prompt(2, 10), Options("local:recent=8"), 5)).ok());
  auto full_queue = scheduler.Submit(Make(log, Prompt(3, 10), Options("local:recent=8"), 5));
  ASSERT_FALSE(full_queue.ok());
  EXPECT_NE(full_queue.status().message().find("queue is full"), std::string::npos);
  EXPECT_EQ(full_queue.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace h2o

namespace h2o {
namespace {

// Slots() as of each step boundary: a prefilling request, then a decoding
// one with its counts, and none once it finished.
TEST(Scheduler, SlotsReportTheRunningRequests) {
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {});
  Log log;
  const SequenceOptions o = Options("h2o:heavy=8,recent=8");
  const uint64_t id = scheduler.Submit(Make(log, Prompt(1, 40), o, 5)).value();
  EXPECT_TRUE(scheduler.Slots().empty());
  ASSERT_TRUE(scheduler.Step());  // the first 16-token chunk
  std::vector<SlotInfo> slots = scheduler.Slots();
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].request_id, id);
  EXPECT_EQ(slots[0].n_prompt, 40);
  EXPECT_EQ(slots[0].n_prompt_fed, 16);
  EXPECT_EQ(slots[0].n_generated, 0);
  EXPECT_EQ(slots[0].max_tokens, 5);
  EXPECT_EQ(slots[0].n_past, 16);
  EXPECT_EQ(slots[0].kv, "h2o:heavy=8,recent=8");
  EXPECT_EQ(slots[0].kv_reserved_bytes, engine->SequenceKvBytes(o).value());
  ASSERT_TRUE(scheduler.Step());
  ASSERT_TRUE(scheduler.Step());  // the prompt's last 8 tokens, and a first token
  slots = scheduler.Slots();
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].n_prompt_fed, 40);
  EXPECT_EQ(slots[0].n_generated, 1);
  // 16 tokens in each of the model's (layer, KV head) caches.
  const HParams& hp = Q8Model().hparams();
  const size_t row = KvTypes{}.TokenBytes(hp.head_dim);
  EXPECT_EQ(slots[0].kv_held_bytes, size_t{16} * hp.n_layer * hp.n_head_kv * row);
  while (scheduler.Step()) {
  }
  EXPECT_TRUE(scheduler.Slots().empty());
  EXPECT_EQ(log.tokens[id].size(), 5u);
}

// One request through a scheduler with a prompt cache: its greedy tokens
// and how many prompt tokens it resumed.
struct Turn {
  std::vector<int32_t> ids;
  int32_t cached = -1;
};

Turn RunTurn(Scheduler& scheduler, const std::vector<int32_t>& prompt, const SequenceOptions& o,
             int32_t max_tokens, int32_t shared_prefix = 0) {
  Turn turn;
  Request r;
  r.prompt = prompt;
  r.shared_prefix = shared_prefix;
  r.sequence = o;
  r.generation.sampling.temperature = 0.0f;
  r.generation.max_tokens = max_tokens;
  r.on_event = [&turn](const TokenEvent& e) {
    if (e.finished) {
      turn.cached = e.cached_tokens;
    } else {
      turn.ids.push_back(e.token);
    }
    return true;
  };
  EXPECT_TRUE(scheduler.Submit(std::move(r)).ok());
  while (scheduler.Step()) {
  }
  return turn;
}

// The history of a conversation whose first turn generated `answer` (its
// last token sampled, never fed) and whose next turn adds `question`.
std::vector<int32_t> NextPrompt(const std::vector<int32_t>& history,
                                const std::vector<int32_t>& answer,
                                const std::vector<int32_t>& question) {
  std::vector<int32_t> next = history;
  next.insert(next.end(), answer.begin(), answer.end());
  next.insert(next.end(), question.begin(), question.end());
  return next;
}

// What one session gives fed `prompt` as a scheduler feeds a conversation
// of `turns` (each: where its prompt ended, how many of its generated
// tokens were fed): each turn's new prompt in chunks, each generated token
// alone; then n greedy tokens.
std::vector<int32_t> ContinuousGreedy(const SequenceOptions& o, const std::vector<int32_t>& prompt,
                                      const std::vector<std::pair<size_t, size_t>>& turns, int n) {
  SessionOptions so;
  static_cast<SequenceOptions&>(so) = o;
  auto session = Session::Create(Q8Model(), so);
  EXPECT_TRUE(session.ok());
  if (!session.ok()) return {};
  size_t at = 0;
  for (const auto& [prompt_end, generated_fed] : turns) {
    EXPECT_TRUE(
        (*session)->Eval(std::span<const int32_t>(prompt).subspan(at, prompt_end - at)).ok());
    for (size_t i = 0; i < generated_fed; ++i) {
      EXPECT_TRUE((*session)->Eval({&prompt[prompt_end + i], 1}).ok());
    }
    at = prompt_end + generated_fed;
  }
  EXPECT_TRUE((*session)->Eval(std::span<const int32_t>(prompt).subspan(at)).ok());
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(ArgMax((*session)->last_logits()));
    if (i + 1 < n) {
      EXPECT_TRUE((*session)->Eval({&ids.back(), 1}).ok());
    }
  }
  return ids;
}

// A conversation's second turn resumes from where the first stopped and
// gives what one session fed the same tokens in the same pieces gives
// (the prompt in chunks, each generated token alone, then the new turn
// in chunks): for every policy, scores and policy state carried along. A
// regenerate of a prompt starts at once and repeats its tokens.
TEST(SchedulerPromptCache, ASecondTurnGivesWhatOneContinuousSessionGives) {
  auto engine = NewEngine();
  for (const char* kv : {"full", "h2o:heavy=8,recent=8", "tova:k=12", "sink:sinks=4,recent=8",
                         "snapkv:budget=14,window=4", "random:k=12,seed=3", "local:recent=10"}) {
    SCOPED_TRACE(kv);
    const SequenceOptions o = Options(kv);
    Scheduler scheduler(*engine, {.prompt_cache_bytes = size_t{1} << 30});
    const std::vector<int32_t> first = Prompt(7, 21);
    const Turn one = RunTurn(scheduler, first, o, 6);
    ASSERT_EQ(one.ids.size(), 6u);
    EXPECT_EQ(one.cached, 0);
    // The next prompt: the whole history (the sixth token was sampled,
    // never fed) and a new turn.
    const Turn again = RunTurn(scheduler, first, o, 6);
    EXPECT_EQ(again.cached, static_cast<int32_t>(first.size()));
    EXPECT_EQ(again.ids, one.ids);

    const std::vector<int32_t> second = NextPrompt(first, one.ids, Prompt(8, 19));
    const Turn two = RunTurn(scheduler, second, o, 6);
    EXPECT_EQ(two.cached, static_cast<int32_t>(first.size() + 5));
    EXPECT_EQ(two.ids, ContinuousGreedy(o, second, {{first.size(), 5}}, 6));
    EXPECT_EQ(scheduler.Stats().prompt_cache_hits, 2);
    // The second turn superseded the first's states: the conversation
    // keeps its prompt's end and where it stopped.
    EXPECT_EQ(scheduler.Stats().prompt_cache_entries, 2);
  }
}

// Conversations that begin with one system prompt: the first keeps the
// state after it, once; every other resumes from it, and a conversation's
// later turns do not supersede it. Each gives what one session fed the
// prefix as a piece of its own (in chunks), then the rest, gives.
TEST(SchedulerPromptCache, ASharedPrefixIsKeptOnceAndResumesEveryConversation) {
  auto engine = NewEngine();
  for (const char* kv : {"h2o:heavy=8,recent=8", "full", "snapkv:budget=14,window=4",
                         "random:k=12,seed=3"}) {
    SCOPED_TRACE(kv);
    const SequenceOptions o = Options(kv);
    Scheduler scheduler(*engine, {.prompt_cache_bytes = size_t{1} << 30});
    const std::vector<int32_t> system = Prompt(11, 21);  // chunks of 16: a piece ends at 21
    const auto with = [&](int seed, int n) {
      std::vector<int32_t> p = system;
      for (const int32_t id : Prompt(seed, n)) p.push_back(id);
      return p;
    };
    const std::vector<int32_t> a = with(12, 9), b = with(13, 7), c = with(15, 4);
    const Turn one = RunTurn(scheduler, a, o, 5, 21);
    EXPECT_EQ(one.cached, 0);
    EXPECT_EQ(one.ids, ContinuousGreedy(o, a, {{21, 0}}, 5));
    const Turn two = RunTurn(scheduler, b, o, 5, 21);
    EXPECT_EQ(two.cached, 21);
    EXPECT_EQ(two.ids, ContinuousGreedy(o, b, {{21, 0}}, 5));
    EXPECT_EQ(scheduler.Stats().prompt_cache_shared_kept, 1);

    const std::vector<int32_t> next = NextPrompt(a, one.ids, Prompt(14, 6));
    const Turn again = RunTurn(scheduler, next, o, 3, 21);
    EXPECT_EQ(again.cached, static_cast<int32_t>(a.size() + 4));
    EXPECT_EQ(RunTurn(scheduler, c, o, 3, 21).cached, 21);
    EXPECT_EQ(scheduler.Stats().prompt_cache_shared_kept, 1);
  }
}

// A server resolves a budget against its context, and a request's cache
// holds at most its prompt + max_tokens: a short first turn evicts
// nothing under a smaller cap, and the next, longer turn resumes from it
// with the whole budget, as one session with that budget would have gone.
// Once a turn has evicted, only the same plan resumes it: another split of
// the same budget, or another budget, feeds the whole prompt.
TEST(SchedulerPromptCache, ATurnThatEvictedNothingResumesUnderTheWholeBudget) {
  auto engine = NewEngine();
  Scheduler scheduler(*engine, {.prompt_cache_bytes = size_t{1} << 30});
  const std::vector<int32_t> first = Prompt(5, 6);
  const Turn one = RunTurn(scheduler, first, Options("h2o:heavy=8,recent=8", 12), 6);
  ASSERT_EQ(one.ids.size(), 6u);
  const SequenceOptions o = Options("h2o:heavy=8,recent=8");
  const std::vector<int32_t> second = NextPrompt(first, one.ids, Prompt(9, 23));
  const Turn two = RunTurn(scheduler, second, o, 6);
  EXPECT_EQ(two.cached, static_cast<int32_t>(first.size() + 5));
  EXPECT_EQ(two.ids, ContinuousGreedy(o, second, {{first.size(), 5}}, 6));

  // The second turn held 34 tokens in a budget of 16: it evicted.
  const std::vector<int32_t> third = NextPrompt(second, two.ids, Prompt(10, 4));
  EXPECT_EQ(RunTurn(scheduler, third, Options("h2o:heavy=4,recent=12"), 3).cached, 0);
  EXPECT_EQ(RunTurn(scheduler, third, Options("h2o:heavy=10,recent=10"), 3).cached, 0);
  const Turn three = RunTurn(scheduler, third, o, 6);
  EXPECT_EQ(three.cached, static_cast<int32_t>(second.size() + 5));
  EXPECT_EQ(three.ids, ContinuousGreedy(o, third, {{first.size(), 5}, {second.size(), 5}}, 6));
}

// Kept states live in KV memory nobody reserved: a request that needs it
// drops them (oldest first) and runs; a request that opts out neither
// resumes nor leaves a state.
TEST(SchedulerPromptCache, KeptStatesGiveWayToRequests) {
  auto engine = NewEngine();
  const SequenceOptions o = Options("full");
  const size_t full = engine->SequenceKvBytes(o).value();
  Scheduler scheduler(*engine,
                      {.kv_memory_bytes = 2 * full, .prompt_cache_bytes = size_t{1} << 30});
  const std::vector<int32_t> prompt = Prompt(3, 60);
  ASSERT_EQ(RunTurn(scheduler, prompt, o, 20).ids.size(), 20u);
  SchedulerStats stats = scheduler.Stats();
  EXPECT_EQ(stats.prompt_cache_entries, 2);  // after the prompt, and where it stopped
  EXPECT_GT(stats.prompt_cache_bytes, 0u);
  EXPECT_LE(stats.prompt_cache_bytes, 2 * full);
  // The next full reservation leaves one cache's worth for kept states:
  // the two (60 and 79 of its 128 tokens) no longer fit.
  const Turn other = RunTurn(scheduler, Prompt(4, 60), o, 20);
  EXPECT_EQ(other.cached, 0);
  stats = scheduler.Stats();
  EXPECT_GT(stats.prompt_cache_evictions, 0);
  EXPECT_LE(stats.prompt_cache_bytes, 2 * full);

  Scheduler off(*engine, {.prompt_cache_bytes = size_t{1} << 30});
  Request r;
  r.prompt = prompt;
  r.sequence = o;
  r.generation.max_tokens = 3;
  r.cache_prompt = false;
  ASSERT_TRUE(off.Submit(std::move(r)).ok());
  while (off.Step()) {
  }
  EXPECT_EQ(off.Stats().prompt_cache_entries, 0);
}

using testing::ScratchDir;

// A conversation's first turn under one scheduler, kept on disk at its
// shutdown; its second turn under a new scheduler and a new index of the
// directory (a restarted server) resumes from the file and gives what one
// continuous session gives: the rows, scores and policy state (random's
// generator) came back whole.
TEST(SchedulerStateDir, ASecondTurnAfterARestartResumesFromDisk) {
  auto engine = NewEngine();
  const uint64_t fingerprint = ModelFingerprint(Q8Model());
  for (const char* kv : {"full", "h2o:heavy=8,recent=8", "snapkv:budget=14,window=4",
                         "random:k=12,seed=3", "tova:k=12"}) {
    SCOPED_TRACE(kv);
    ScratchDir dir("restart");
    const SequenceOptions o = Options(kv);
    const std::vector<int32_t> first = Prompt(7, 21);
    Turn one;
    {
      auto disk = StateDir::Open(dir.path, fingerprint, nullptr).value();
      Scheduler scheduler(*engine, {.prompt_cache_bytes = size_t{1} << 30, .state_dir = disk.get()});
      one = RunTurn(scheduler, first, o, 6);
      EXPECT_EQ(scheduler.PersistPromptCache(), 2u);
    }
    auto disk = StateDir::Open(dir.path, fingerprint, nullptr).value();
    EXPECT_EQ(disk->size(), 2u);
    Scheduler scheduler(*engine, {.prompt_cache_bytes = size_t{1} << 30, .state_dir = disk.get()});
    const std::vector<int32_t> second = NextPrompt(first, one.ids, Prompt(8, 19));
    const Turn two = RunTurn(scheduler, second, o, 6);
    EXPECT_EQ(two.cached, static_cast<int32_t>(first.size() + 5));
    EXPECT_EQ(two.ids, ContinuousGreedy(o, second, {{first.size(), 5}}, 6));
    // The second turn superseded the first's files.
    EXPECT_EQ(disk->size(), 0u);
  }
}

// States the RAM tier cannot hold go to disk, and a next turn finds them
// there; under another model's fingerprint the files are skipped, each
// with a log line, and nothing resumes.
TEST(SchedulerStateDir, WhatRamDropsIsFoundOnDiskAndOnlyByItsModel) {
  auto engine = NewEngine();
  ScratchDir dir("spill");
  const uint64_t fingerprint = ModelFingerprint(Q8Model());
  const SequenceOptions o = Options("h2o:heavy=8,recent=8");
  const std::vector<int32_t> first = Prompt(2, 30);
  auto disk = StateDir::Open(dir.path, fingerprint, nullptr).value();
  // 64 bytes of RAM: no state fits, each goes straight to disk.
  Scheduler scheduler(*engine, {.prompt_cache_bytes = 64, .state_dir = disk.get()});
  const Turn one = RunTurn(scheduler, first, o, 6);
  EXPECT_EQ(scheduler.Stats().prompt_cache_entries, 0);
  EXPECT_EQ(disk->size(), 2u);
  const std::vector<int32_t> second = NextPrompt(first, one.ids, Prompt(3, 9));
  const Turn two = RunTurn(scheduler, second, o, 4);
  EXPECT_EQ(two.cached, static_cast<int32_t>(first.size() + 5));
  EXPECT_EQ(two.ids, ContinuousGreedy(o, second, {{first.size(), 5}}, 4));

  std::vector<std::string> lines;
  auto foreign = StateDir::Open(dir.path, fingerprint + 1, [&](const std::string& line) {
                   lines.push_back(line);
                 }).value();
  EXPECT_EQ(foreign->size(), 0u);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("made with another model"), std::string::npos) << lines[0];
  Scheduler other(*engine, {.prompt_cache_bytes = 64, .state_dir = foreign.get()});
  const std::vector<int32_t> third = NextPrompt(second, two.ids, Prompt(4, 3));
  EXPECT_EQ(RunTurn(other, third, o, 2).cached, 0);
}

}  // namespace
}  // namespace h2o
