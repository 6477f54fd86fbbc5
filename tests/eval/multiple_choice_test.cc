// Multiple-choice pieces on hand-worked inputs, the scorer (which runs
// each context once and restores it per choice) against a plain
// token-by-token loop over BOS + context + " " + choice, and the scorer's
// lockstep over policies against each policy alone.
#include "eval/multiple_choice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eval/perplexity.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "q8_model.h"
#include "runtime/engine.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o {
namespace {

JsonlLine Line(const char* text) { return {"t.jsonl:7", nlohmann::ordered_json::parse(text)}; }

TEST(ChoiceItem, ParsesAndRejectsBadItemsWithTheirLine) {
  auto item = ParseChoiceItem(Line(R"({"context": "A.", "choices": ["b", "c"], "gold": 1})"));
  ASSERT_TRUE(item.ok()) << item.status().message();
  EXPECT_EQ(item->context, "A.");
  EXPECT_EQ(item->choices, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(item->gold, 1);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"context": "A.", "choices": ["b"], "gold": -1})", "t.jsonl:7: 'gold' is -1"},
      {R"({"context": "A.", "choices": ["b"]})", "t.jsonl:7: missing field 'gold'"},
      {R"({"context": 3, "choices": ["b"], "gold": 0})",
       "t.jsonl:7: field 'context' must be a string"},
      {R"({"context": "A.", "choices": "b", "gold": 0})",
       "t.jsonl:7: field 'choices' must be a list"},
      {R"({"context": "A.", "choices": ["b", 2], "gold": 0})", "must be a list of strings"},
      {R"({"context": "A.", "choices": [], "gold": 0})", "t.jsonl:7: 'choices' is empty"},
  };
  for (const auto& [text, needle] : bad) {
    const auto r = ParseChoiceItem(Line(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  }
}

TEST(FewShot, PrependsTheFollowingItemsWithTheirAnswers) {
  const std::vector<ChoiceItem> items = {
      {"A0.", {"a", "b"}, 0}, {"A1.", {"c", "d"}, 1}, {"A2.", {"e", "f"}, 0}};
  EXPECT_EQ(FewShotContext(items, 0, 0), "A0.");
  EXPECT_EQ(FewShotContext(items, 0, 2), "A1. d\n\nA2. e\n\nA0.");
  // Wraps around, never reaching the item itself.
  EXPECT_EQ(FewShotContext(items, 2, 2), "A0. a\n\nA1. d\n\nA2.");
}

TEST(ProportionStdErr, MatchesHandWorkedValues) {
  EXPECT_DOUBLE_EQ(ProportionStdErr(0.5, 5), 0.25);  // sqrt(0.25 / 4)
  EXPECT_DOUBLE_EQ(ProportionStdErr(0.75, 4), std::sqrt(0.1875 / 3));
  EXPECT_EQ(ProportionStdErr(1.0, 10), 0.0);
  EXPECT_EQ(ProportionStdErr(0.5, 1), 0.0);
}

TEST(ChoiceAccuracy, PicksLowestSumAndLowestPerTokenSeparately) {
  // Choice 0: 6 nats over 6 tokens (1.0 each); choice 1: 4 nats over 2
  // tokens (2.0 each). acc picks 1, acc_norm picks 0.
  ChoiceScores scores{{6.0, 4.0}, {6, 2}};
  EXPECT_EQ(scores.Best(), 1u);
  EXPECT_EQ(scores.BestPerToken(), 0u);
  ChoiceAccuracy tally;
  tally.Add(scores, 0);
  tally.Add(scores, 1);
  tally.Add(ChoiceScores{{1.0, 1.0}, {1, 1}}, 0);  // ties go to the first choice
  EXPECT_EQ(tally.n, 3);
  EXPECT_EQ(tally.correct, 2);
  EXPECT_EQ(tally.correct_norm, 2);
}

class ChoiceScoring : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = Model::Load(testing::ModelPath());
    ASSERT_TRUE(loaded.ok());
    model_ = std::move(loaded).value();
    tokenizer_ = std::make_unique<Tokenizer>(LoadVocabFromGguf(model_->file()).value());
  }
  std::unique_ptr<Session> MakeSession(const char* spec) {
    SessionOptions o;
    o.max_chunk = 1;
    o.kv = ResolveKvSpec(ParseKvSpec(spec).value(), std::nullopt).value();
    return std::move(Session::Create(*model_, o).value());
  }
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(ChoiceScoring, ChoiceTokensFollowTheContextAndASpace) {
  const std::string context = "Tom saw a big dog.";
  const std::vector<std::string> choices = {"He ran home.", "The dog was happy and wagged."};
  auto t = TokenizeChoices(*tokenizer_, context, choices, 512);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const std::vector<int32_t> prompt = tokenizer_->Encode(context, true);
  EXPECT_EQ(t->shared, prompt.size());
  EXPECT_EQ(t->dropped, 0);
  for (size_t c = 0; c < choices.size(); ++c) {
    EXPECT_EQ(t->sequences[c], tokenizer_->Encode(context + " " + choices[c], true));
    EXPECT_EQ(t->choice_begin[c], prompt.size());
    // The choice's tokens decode to the choice (the space is its first piece's).
    const std::vector<int32_t> tail(t->sequences[c].begin() + t->choice_begin[c],
                                    t->sequences[c].end());
    EXPECT_EQ(tokenizer_->Decode(tail, /*remove_special=*/false), choices[c]);
  }
}

TEST_F(ChoiceScoring, LongContextsLoseTheirOldestTokensAfterBos) {
  const std::string context = "One day, a little girl named Lily went to the park with her mom.";
  const std::vector<std::string> choices = {"She played.", "It rained all day long."};
  auto whole = TokenizeChoices(*tokenizer_, context, choices, 512);
  ASSERT_TRUE(whole.ok());
  const int64_t longest = whole->sequences[1].size();
  auto cut = TokenizeChoices(*tokenizer_, context, choices, longest - 5);
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_EQ(cut->dropped, 5);
  EXPECT_EQ(cut->shared, whole->shared - 5);
  for (size_t c = 0; c < 2; ++c) {
    std::vector<int32_t> expected = whole->sequences[c];
    expected.erase(expected.begin() + 1, expected.begin() + 6);
    EXPECT_EQ(cut->sequences[c], expected);
  }
  EXPECT_EQ(cut->sequences[1].size(), static_cast<size_t>(longest - 5));
  // No room left for any context: an error, not a silent cut into the choice.
  const int64_t choice_len = whole->sequences[1].size() - whole->choice_begin[1];
  EXPECT_FALSE(TokenizeChoices(*tokenizer_, context, choices, choice_len + 1).ok());
  EXPECT_TRUE(TokenizeChoices(*tokenizer_, context, choices, choice_len + 2).ok());
}

TEST_F(ChoiceScoring, ScorerEqualsAFreshRunPerChoice) {
  const std::string context = "Sue had a red hat. She liked to wear it in the sun.";
  const std::vector<std::string> choices = {"One day, the wind blew it away.", "The cat sat.",
                                            "She was happy."};
  auto tokens = TokenizeChoices(*tokenizer_, context, choices, 512);
  ASSERT_TRUE(tokens.ok());
  for (const char* spec : {"full", "h2o:heavy=4,recent=4", "local:recent=6"}) {
    SCOPED_TRACE(spec);
    auto session = MakeSession(spec);
    ChoiceScorer scorer(session->engine());
    Sequence* const sequences[] = {&session->sequence()};
    auto scored = scorer.Score(sequences, *tokens);
    ASSERT_TRUE(scored.ok());
    ASSERT_EQ(scored->size(), 1u);
    const ChoiceScores* scores = &scored->front();
    for (size_t c = 0; c < choices.size(); ++c) {
      // Independent: a new session, every token fed in turn.
      auto fresh = MakeSession(spec);
      const std::vector<int32_t>& ids = tokens->sequences[c];
      double nll = 0.0;
      for (size_t i = 0; i + 1 < ids.size(); ++i) {
        const int32_t one[] = {ids[i]};
        ASSERT_TRUE(fresh->Eval(one).ok());
        if (i + 1 >= tokens->choice_begin[c])
          nll += NegLogSoftmax(fresh->last_logits(), ids[i + 1]);
      }
      EXPECT_EQ(scores->nll_sum[c], nll) << "choice " << c;
      EXPECT_EQ(scores->n_tokens[c], static_cast<int64_t>(ids.size() - tokens->choice_begin[c]));
    }
  }
}

// Every policy of an item scored in lockstep on one engine gets exactly the
// scores it gets alone, bit for bit on q8_0 weights: prompt and choices
// fed one token or three per pass, fixed budgets on one sequence across
// items (its snapshot reused), a percent budget on a sequence per item.
TEST(ChoiceScoringLockstep, EqualsEachPolicyScoredAloneBitForBit) {
  const Model& model = testing::Q8Model();
  const Tokenizer tokenizer(LoadVocabFromGguf(model.file()).value());
  std::vector<ChoiceTokens> items;
  std::istringstream lines(testing::ReadFileOrEmpty(testing::DataPath("tinystories_cloze_56.jsonl")));
  std::string text;
  for (int n = 0; n < 4 && std::getline(lines, text); ++n) {
    const ChoiceItem item = ParseChoiceItem({"cloze", nlohmann::ordered_json::parse(text)}).value();
    items.push_back(TokenizeChoices(tokenizer, item.context, item.choices, 512).value());
  }
  const std::vector<std::string> specs = {"full", "h2o:heavy=4,recent=4", "local:recent=6",
                                          "sink:sinks=2,recent=6", "tova:k=8",
                                          "h2o:heavy=20%,recent=20%"};
  auto options = [&](const std::string& spec, int32_t chunk, int64_t prompt_len) {
    SessionOptions o;
    o.n_ctx = 512;
    o.max_chunk = chunk;
    o.n_threads = 2;
    o.kv = ResolveKvSpec(ParseKvSpec(spec).value(), prompt_len).value();
    return o;
  };
  for (const int32_t chunk : {1, 3}) {
    SCOPED_TRACE(chunk);
    auto engine = Engine::Create(
        model, {.n_threads = 2, .max_batch_tokens = chunk * static_cast<int32_t>(specs.size())});
    ASSERT_TRUE(engine.ok());
    ChoiceScorer scorer(**engine);
    std::vector<std::unique_ptr<Sequence>> owned(specs.size());
    for (size_t p = 0; p + 1 < specs.size(); ++p) {
      owned[p] = std::move((*engine)->NewSequence(options(specs[p], chunk, 0)).value());
    }
    for (const ChoiceTokens& tokens : items) {
      const int64_t shared = static_cast<int64_t>(tokens.shared);
      ASSERT_GT(shared, 20);  // every budget evicts
      owned.back() = std::move((*engine)->NewSequence(options(specs.back(), chunk, shared)).value());
      std::vector<Sequence*> sequences;
      for (auto& s : owned) sequences.push_back(s.get());
      auto together = scorer.Score(sequences, tokens);
      ASSERT_TRUE(together.ok()) << together.status().message();
      ASSERT_EQ(together->size(), specs.size());
      for (size_t p = 0; p < specs.size(); ++p) {
        SCOPED_TRACE(specs[p]);
        auto session = Session::Create(model, options(specs[p], chunk, shared));
        ASSERT_TRUE(session.ok());
        ChoiceScorer alone_scorer((*session)->engine());
        Sequence* const alone_sequence[] = {&(*session)->sequence()};
        auto alone = alone_scorer.Score(alone_sequence, tokens);
        ASSERT_TRUE(alone.ok());
        EXPECT_EQ((*together)[p].nll_sum, alone->front().nll_sum);
        EXPECT_EQ((*together)[p].n_tokens, alone->front().n_tokens);
      }
    }
  }
}

}  // namespace
}  // namespace h2o
