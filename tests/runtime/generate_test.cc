// The generate loop: its stop conditions on hand-built logits (a one-hot
// row makes greedy sampling pick a chosen token), and generations run in
// lockstep on one engine against the same generations run alone.
#include "runtime/generate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kv/kept_positions.h"
#include "kv/kv_cache.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "q8_model.h"
#include "runtime/session.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o {
namespace {

const Tokenizer& BundledTokenizer() {
  static const Tokenizer tokenizer = [] {
    auto model = Model::Load(testing::ModelPath());
    return Tokenizer(LoadVocabFromGguf(model.value()->file()).value());
  }();
  return tokenizer;
}

// Greedy picks `id`: it alone has logit 5, the rest 0.
std::vector<float> OneHot(int32_t id) {
  std::vector<float> logits(BundledTokenizer().n_vocab(), 0.0f);
  logits[id] = 5.0f;
  return logits;
}

GenerateOptions Greedy(int32_t max_tokens, std::vector<std::string> stop = {}) {
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.stop = std::move(stop);
  o.sampling.temperature = 0.0f;
  return o;
}

// " Once upon a time" as four tokens (checked), their pieces known.
std::vector<int32_t> OnceUponATime() {
  const std::vector<int32_t> ids = BundledTokenizer().Encode("Once upon a time", false);
  std::string text;
  for (int32_t id : ids) text += BundledTokenizer().TokenToPiece(id);
  EXPECT_EQ(text, " Once upon a time");
  return ids;
}

TEST(GenerationState, StopsAtTheTokenLimitWithEveryTokenItsLogprobAndPiece) {
  const std::vector<int32_t> ids = OnceUponATime();
  GenerationState state(Greedy(3), &BundledTokenizer());
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_FALSE(state.done());
    EXPECT_EQ(state.Next(OneHot(ids[i])), ids[i]);
  }
  EXPECT_TRUE(state.done());
  EXPECT_EQ(state.Next(OneHot(ids[3])), std::nullopt);  // done: nothing more
  const Generation& g = state.generation();
  EXPECT_EQ(g.ids, std::vector<int32_t>(ids.begin(), ids.begin() + 3));
  EXPECT_EQ(g.finish_reason, GenerationEnd::kLength);
  EXPECT_STREQ(GenerationEndName(g.finish_reason), "length");
  // log p = 5 - log(e^5 + (n_vocab - 1) e^0).
  const double logprob = 5.0 - std::log(std::exp(5.0) + (BundledTokenizer().n_vocab() - 1));
  ASSERT_EQ(g.logprobs.size(), 3u);
  for (double lp : g.logprobs) EXPECT_NEAR(lp, logprob, 1e-12);
  // The first piece's space is text: the prompt ends before it.
  EXPECT_EQ(g.text, " Once upon a");
}

// The repeat penalty sees the prompt (Saw) and every generated token:
// worked by hand with penalty 2 (positive logits halved).
TEST(GenerationState, RepeatPenaltyCoversThePromptAndTheGeneratedTokens) {
  GenerateOptions options = Greedy(5);
  options.sampling.repeat_penalty = 2.0f;
  GenerationState state(options, nullptr);
  const int32_t prompt[] = {0};
  state.Saw(prompt);
  // 0 (prompt) falls to 1.0 below 1's 1.5.
  EXPECT_EQ(state.Next(std::vector<float>{2.0f, 1.5f, 1.4f}), 1);
  // 0 -> 0.5, 1 (generated) -> 0.75: 2 wins with 1.4.
  EXPECT_EQ(state.Next(std::vector<float>{1.0f, 1.5f, 1.4f}), 2);
}

TEST(GenerationState, EndOfGenerationTokenEndsWithoutBeingKept) {
  const Tokenizer& tok = BundledTokenizer();
  ASSERT_TRUE(tok.IsEndOfGeneration(tok.eos_id()));
  const std::vector<int32_t> ids = OnceUponATime();
  GenerationState state(Greedy(10), &tok);
  EXPECT_EQ(state.Next(OneHot(ids[0])), ids[0]);
  EXPECT_EQ(state.Next(OneHot(tok.eos_id())), std::nullopt);
  EXPECT_TRUE(state.done());
  EXPECT_EQ(state.generation().ids, std::vector<int32_t>{ids[0]});
  EXPECT_EQ(state.generation().finish_reason, GenerationEnd::kEndOfGeneration);
  EXPECT_STREQ(GenerationEndName(GenerationEnd::kEndOfGeneration), "stop");

  // --ignore-eos: the end token is generated like any other.
  GenerateOptions through = Greedy(2);
  through.stop_at_end = false;
  GenerationState ignoring(through, &tok);
  EXPECT_EQ(ignoring.Next(OneHot(tok.eos_id())), tok.eos_id());
  EXPECT_FALSE(ignoring.done());
  // Without a tokenizer nothing is an end token, and there is no text.
  GenerationState bare(Greedy(2), nullptr);
  EXPECT_EQ(bare.Next(OneHot(tok.eos_id())), tok.eos_id());
  EXPECT_EQ(bare.Next(OneHot(7)), 7);
  EXPECT_TRUE(bare.done());
  EXPECT_EQ(bare.generation().text, "");
  EXPECT_EQ(bare.generation().finish_reason, GenerationEnd::kLength);
}

TEST(GenerationState, StopStringAcrossPiecesCutsTheTextAndKeepsTheToken) {
  const std::vector<int32_t> ids = OnceUponATime();  // " Once", " upon", " a", " time"
  // "n a" begins in " upon" and ends in " a"; "a ti" would match later.
  GenerationState state(Greedy(10, {"", "a ti", "n a"}), &BundledTokenizer());
  EXPECT_EQ(state.Next(OneHot(ids[0])), ids[0]);
  EXPECT_EQ(state.Next(OneHot(ids[1])), ids[1]);
  EXPECT_FALSE(state.done());
  EXPECT_EQ(state.Next(OneHot(ids[2])), ids[2]);
  EXPECT_TRUE(state.done());
  const Generation& g = state.generation();
  EXPECT_EQ(g.text, " Once upo");
  EXPECT_EQ(g.ids, std::vector<int32_t>(ids.begin(), ids.begin() + 3));
  EXPECT_EQ(g.finish_reason, GenerationEnd::kStopString);
}

TEST(GenerationState, EarliestOfSeveralStopStringsAndStopOnTheLastToken) {
  const std::vector<int32_t> ids = OnceUponATime();
  // Both complete with " time"; "a time" begins first.
  GenerationState state(Greedy(4, {"time", "a time"}), &BundledTokenizer());
  for (int32_t id : ids) state.Next(OneHot(id));
  EXPECT_TRUE(state.done());
  EXPECT_EQ(state.generation().text, " Once upon ");
  // The stop string completed on the 4th and last token: a stop, not a length.
  EXPECT_EQ(state.generation().finish_reason, GenerationEnd::kStopString);
  // A stop string inside one piece, at the very start.
  GenerationState first(Greedy(4, {"Onc"}), &BundledTokenizer());
  first.Next(OneHot(ids[0]));
  EXPECT_TRUE(first.done());
  EXPECT_EQ(first.generation().text, " ");
}

TEST(GenerationState, NoTokensAllowedIsDoneBeforeSampling) {
  GenerationState state(Greedy(0), &BundledTokenizer());
  EXPECT_TRUE(state.done());
  EXPECT_EQ(state.Next(OneHot(5)), std::nullopt);
  EXPECT_TRUE(state.generation().ids.empty());
  EXPECT_EQ(state.generation().finish_reason, GenerationEnd::kLength);
}

// --- on a model: lockstep against alone ---

struct JobPlan {
  std::string kv;
  std::string stream;  // the prompt: the first prompt_len ids of this stream
  int32_t prompt_len;
  int32_t chunk;
  GenerateOptions options;
};

SequenceOptions Options(const JobPlan& p) {
  SequenceOptions o;
  o.n_ctx = 256;
  o.max_chunk = p.chunk;
  o.kv = ResolveKvSpec(ParseKvSpec(p.kv).value(), p.prompt_len).value();
  return o;
}

std::vector<int32_t> Prompt(const JobPlan& p) {
  std::vector<int32_t> ids = testing::ReadStream(p.stream);
  ids.resize(p.prompt_len);
  return ids;
}

GenerateOptions Sampled(int32_t max_tokens, float temperature, uint64_t seed) {
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampling = {.temperature = temperature, .top_k = 40, .top_p = 0.9f, .seed = seed};
  return o;
}

// Mixed policies, chunks, prompt lengths, samplers and limits: the jobs
// finish at different steps, and prompts are still being fed while others
// decode.
std::vector<JobPlan> Plans() {
  std::vector<JobPlan> plans = {
      {"full", "s001.txt", 20, 4, Sampled(30, 0.0f, 0)},
      {"h2o:heavy=8,recent=8", "s002.txt", 45, 7, Sampled(40, 0.8f, 1)},
      {"local:recent=12", "s003.txt", 9, 1, Sampled(12, 1.0f, 2)},
      {"sink:sinks=4,recent=12", "s004.txt", 60, 16, Sampled(35, 0.0f, 0)},
      {"h2o:heavy=10%,recent=10%", "s005.txt", 33, 5, Sampled(25, 0.7f, 3)},
      {"tova:k=16", "s006.txt", 17, 3, Sampled(0, 0.0f, 0)},
  };
  plans[1].options.stop = {"zzz"};
  return plans;
}

Generation Alone(const Model& model, const JobPlan& p);

// A stop string the job is sure to meet early: the piece of its fifth
// token, as it generates without one (the random-weight model's text is
// not English, so no fixed string would do).
std::string StopMetEarly(const Model& model, JobPlan p) {
  p.options.stop.clear();
  const Generation g = Alone(model, p);
  EXPECT_GE(g.ids.size(), 5u);
  return g.ids.size() < 5 ? "." : BundledTokenizer().TokenToPiece(g.ids[4]);
}

Generation Alone(const Model& model, const JobPlan& p) {
  SessionOptions o;
  static_cast<SequenceOptions&>(o) = Options(p);
  o.n_threads = 2;
  auto session = Session::Create(model, o);
  EXPECT_TRUE(session.ok()) << session.status().message();
  auto g = Generate((*session)->engine(), (*session)->sequence(), Prompt(p), p.options,
                    &BundledTokenizer());
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

void ExpectSame(const Generation& together, const Generation& alone) {
  EXPECT_EQ(together.ids, alone.ids);
  EXPECT_EQ(together.logprobs, alone.logprobs);
  EXPECT_EQ(together.text, alone.text);
  EXPECT_EQ(together.finish_reason, alone.finish_reason);
}

// max_batch_tokens: 64 holds every job's piece at once; 16 makes jobs wait
// for room (the sequences' chunks are capped at it, so 16 too).
void ExpectLockstepEqualsAlone(int32_t max_batch_tokens) {
  const Model& model = testing::Q8Model();
  std::vector<JobPlan> plans = Plans();
  plans[2].options.stop = {StopMetEarly(model, plans[2])};
  auto engine = Engine::Create(model, {.n_threads = 2, .max_batch_tokens = max_batch_tokens});
  ASSERT_TRUE(engine.ok());
  std::vector<std::unique_ptr<Sequence>> sequences;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<GenerateJob> jobs;
  for (const JobPlan& p : plans) {
    sequences.push_back(std::move((*engine)->NewSequence(Options(p)).value()));
    prompts.push_back(Prompt(p));
  }
  for (size_t j = 0; j < plans.size(); ++j) {
    jobs.push_back({sequences[j].get(), prompts[j], plans[j].options});
  }
  std::vector<std::vector<int32_t>> streamed(plans.size());
  std::vector<int> prompt_fed(plans.size(), 0);
  GenerateCallbacks callbacks;
  callbacks.on_prompt_fed = [&](size_t j) {
    EXPECT_TRUE(streamed[j].empty());
    ++prompt_fed[j];
  };
  callbacks.on_token = [&](size_t j, int32_t id) { streamed[j].push_back(id); };
  auto together = GenerateLockstep(**engine, jobs, &BundledTokenizer(), callbacks);
  ASSERT_TRUE(together.ok()) << together.status().message();
  ASSERT_EQ(together->size(), plans.size());
  std::vector<int32_t> lengths;
  for (size_t j = 0; j < plans.size(); ++j) {
    SCOPED_TRACE(plans[j].kv);
    const Generation alone = Alone(model, plans[j]);
    ExpectSame((*together)[j], alone);
    EXPECT_EQ(streamed[j], alone.ids);
    EXPECT_EQ(prompt_fed[j], 1);
    lengths.push_back(static_cast<int32_t>(alone.ids.size()));
  }
  // The plans do what they are there for: a stop string fired, sequences
  // ended at different steps, one generated nothing.
  EXPECT_EQ((*together)[2].finish_reason, GenerationEnd::kStopString);
  EXPECT_LE(lengths[2], 5);
  EXPECT_EQ(lengths[0], 30);
  EXPECT_EQ(lengths[5], 0);
}

TEST(GenerateLockstep, EqualsEachGenerationAloneBitForBit) { ExpectLockstepEqualsAlone(64); }

TEST(GenerateLockstep, JobsThatDoNotFitWaitAndStillEqualAlone) { ExpectLockstepEqualsAlone(16); }

TEST(GenerateLockstep, ResetsTheSequencesAndRejectsAnEmptyPrompt) {
  const Model& model = testing::Q8Model();
  auto engine = Engine::Create(model, {.n_threads = 1, .max_batch_tokens = 32});
  ASSERT_TRUE(engine.ok());
  auto sequence = (*engine)->NewSequence(Options({"full", "s001.txt", 10, 8, {}}));
  ASSERT_TRUE(sequence.ok());
  const std::vector<int32_t> prompt = Prompt({"full", "s001.txt", 10, 8, {}});
  auto first = Generate(**engine, **sequence, prompt, Greedy(5), nullptr);
  auto second = Generate(**engine, **sequence, prompt, Greedy(5), nullptr);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->ids, second->ids);
  EXPECT_EQ((*sequence)->n_past(), 10 + 5 - 1);  // the last token is never fed
  const auto empty = Generate(**engine, **sequence, {}, Greedy(5), nullptr);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "the prompt has no tokens");
  // The context is 256 positions: 10 + 300 tokens pass it.
  const auto past = Generate(**engine, **sequence, prompt, Greedy(300), nullptr);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("context is full"), std::string::npos);
}

// A cache compressed once, as kvpress evaluates: the evicting sequence
// takes the 48-token context alone and evicts to its budget of 16; the
// question (12 tokens) and the answer then join exactly what it kept, in
// a sequence that evicts nothing more. Checked in every (layer, head):
// the evicting cache never held a question token, it kept what the same
// context fed alone keeps, and the continuing cache holds that plus every
// question and fed answer position.
TEST(GenerateLockstep, CompressedOnceTheQuestionAndAnswerJoinWhatTheContextKept) {
  const Model& model = testing::Q8Model();
  auto engine = Engine::Create(model, {.n_threads = 2, .max_batch_tokens = 64});
  ASSERT_TRUE(engine.ok());
  const std::vector<int32_t> prompt = Prompt({"full", "s001.txt", 60, 8, {}});
  constexpr size_t kContext = 48;
  SequenceOptions evicting = Options({"h2o:heavy=8,recent=8", "s001.txt", kContext, 8, {}});
  SequenceOptions keeping = Options({"local:recent=40", "s001.txt", kContext, 8, {}});
  auto a = (*engine)->NewSequence(evicting);
  auto c = (*engine)->NewSequence(keeping);
  auto alone = (*engine)->NewSequence(evicting);
  ASSERT_TRUE(a.ok() && c.ok() && alone.ok());
  GenerateJob job{a->get(), prompt, Greedy(10)};
  job.chunk = 8;
  job.then = c->get();
  job.compress_after = kContext;
  auto out = GenerateLockstep(**engine, {&job, 1}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->front().ids.size(), 10u);
  // The context alone, in the same chunks.
  const auto context_only =
      Generate(**engine, **alone, std::span(prompt).first(kContext), Greedy(0), nullptr);
  ASSERT_TRUE(context_only.ok());
  EXPECT_EQ((*a)->n_past(), static_cast<int32_t>(kContext));
  EXPECT_EQ((*c)->n_past(), 60 + 10 - 1);  // the last generated token is never fed
  const KvCacheConfig& config = (*a)->cache().config();
  for (int32_t l = 0; l < config.n_layer; ++l) {
    for (int32_t h = 0; h < config.n_head_kv; ++h) {
      const std::vector<int32_t> compressed = testing::KeptPositions((*a)->cache(), l, h);
      ASSERT_EQ(compressed.size(), 16u) << l << " " << h;
      EXPECT_LT(compressed.back(), static_cast<int32_t>(kContext));
      EXPECT_EQ(compressed, testing::KeptPositions((*alone)->cache(), l, h));
      std::vector<int32_t> expected = compressed;
      for (int32_t p = kContext; p < 69; ++p) expected.push_back(p);
      EXPECT_EQ(testing::KeptPositions((*c)->cache(), l, h), expected) << l << " " << h;
    }
  }
}

}  // namespace
}  // namespace h2o
