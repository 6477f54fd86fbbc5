// The RULER-style items (src/eval/ruler/) in the bundled model's tokenizer:
// each task's items fill their length to within one haystack unit, repeat
// for a seed, put the needle at the stated depth, and carry their answers
// in the text, checked against the text itself; RULER's scoring rule on
// hand-made answers; the two splits' keys never meet.
#include "eval/ruler/tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/model.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o::ruler {
namespace {

const Tokenizer& Stories() {
  static const Tokenizer tokenizer = [] {
    auto model = Model::Load(testing::ModelPath());
    return Tokenizer(LoadVocabFromGguf(model.value()->file()).value());
  }();
  return tokenizer;
}

Item Make(std::string_view task, int64_t length, uint64_t seed, double depth = -1) {
  ItemOptions o;
  o.length = length;
  o.seed = seed;
  o.depth = depth;
  auto item = MakeItem(*FindTask(task).value(), Stories(), o);
  EXPECT_TRUE(item.ok()) << task << ": " << item.status().message();
  return item.ok() ? *item : Item{};
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The most tokens one haystack unit adds in this tokenizer: the noise line
// is 52 of its tokens, a needle line with a UUID key and value about 100.
constexpr int64_t kUnitTokens = 110;

TEST(Ruler, EveryTaskFillsItsLengthAndRepeatsForASeed) {
  for (const TaskSpec& task : AllTasks()) {
    for (const int64_t length : {1024, 2048}) {
      SCOPED_TRACE(std::string(task.name) + " @" + std::to_string(length));
      if (task.name == "cwe" && length == 1024) {
        // RULER's short-context cwe (a 20-word example, 10 common words 6
        // times) is 1228 of this tokenizer's tokens before any other word.
        ItemOptions o;
        o.length = length;
        EXPECT_FALSE(MakeItem(task, Stories(), o).ok());
        continue;
      }
      const Item item = Make(task.name, length, 11);
      EXPECT_EQ(item.task, task.name);
      EXPECT_EQ(item.max_tokens, task.max_tokens);
      const int64_t used = item.n_tokens + item.max_tokens;
      EXPECT_LE(used, length);
      EXPECT_GT(used, length - kUnitTokens);
      EXPECT_EQ(item.n_tokens,
                static_cast<int64_t>(Stories().Encode(item.context + item.question, true).size()));
      ASSERT_FALSE(item.outputs.empty());
      const Item again = Make(task.name, length, 11);
      EXPECT_EQ(again.context, item.context);
      EXPECT_EQ(again.question, item.question);
      EXPECT_EQ(again.outputs, item.outputs);
      EXPECT_NE(Make(task.name, length, 12).outputs, item.outputs);
    }
  }
}

TEST(Ruler, NeedlesAreWhereTheDepthSays) {
  for (const double depth : {0.0, 25.0, 50.0, 75.0, 100.0}) {
    const Item item = Make("niah_single_1", 1024, 3, depth);
    EXPECT_EQ(item.depth, depth);
    // Lines: the instruction, then noise lines with the needle among them.
    std::vector<std::string> lines;
    std::istringstream in(item.context);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_GE(lines.size(), 3u);
    const std::vector<std::string> haystack(lines.begin() + 1, lines.end());
    const auto needle = std::find_if(haystack.begin(), haystack.end(), [](const std::string& l) {
      return l.rfind("One of the special magic numbers", 0) == 0;
    });
    ASSERT_NE(needle, haystack.end());
    const double at = 100.0 * static_cast<double>(needle - haystack.begin()) /
                      static_cast<double>(haystack.size() - 1);
    EXPECT_NEAR(at, depth, 100.0 / static_cast<double>(haystack.size() - 1)) << depth;
  }
  // The passkey: its line after `depth` percent of the junk sentences.
  const Item early = Make("passkey", 1024, 3, 10), late = Make("passkey", 1024, 3, 90);
  EXPECT_LT(early.context.find("The pass key is"), early.context.size() / 5);
  EXPECT_GT(late.context.find("The pass key is"), late.context.size() * 4 / 5);
}

TEST(Ruler, AnswersAreInTheTextAsTheQuestionAsks) {
  // niah: each queried key's needle states its value; a single needle reads
  // in the singular, several in the plural.
  const Item single = Make("niah_single_2", 1024, 5);
  ASSERT_EQ(single.outputs.size(), 1u);
  EXPECT_EQ(single.context.rfind("A special magic number is hidden", 0), 0u);
  EXPECT_NE(single.question.find("mentioned in the provided text is"), std::string::npos);
  const Item multi = Make("niah_multiquery", 2048, 5);
  ASSERT_EQ(multi.outputs.size(), 4u);
  EXPECT_EQ(multi.context.rfind("Some special magic numbers are hidden", 0), 0u);
  for (const std::string& v : multi.outputs) {
    const size_t at = multi.context.find(" is: " + v + ".");
    ASSERT_NE(at, std::string::npos) << v;
    // The key in that needle is one the question names.
    const size_t key_start = multi.context.rfind(" for ", at) + 5;
    EXPECT_NE(multi.question.find(multi.context.substr(key_start, at - key_start)),
              std::string::npos);
  }
  const Item uuids = Make("niah_multikey_3", 1024, 5);
  EXPECT_EQ(uuids.outputs[0].size(), 36u);  // 8-4-4-4-12
  EXPECT_EQ(Count(uuids.context, uuids.outputs[0]), 1u);
  // vt: the chain runs from the value through every answer variable.
  const Item vt = Make("vt", 1024, 5);
  ASSERT_EQ(vt.outputs.size(), 5u);
  const std::string value = vt.question.substr(vt.question.find("the value ") + 10, 5);
  EXPECT_NE(vt.context.find("VAR " + vt.outputs[0] + " = " + value), std::string::npos);
  for (size_t i = 1; i < vt.outputs.size(); ++i) {
    EXPECT_NE(vt.context.find("VAR " + vt.outputs[i] + " = VAR " + vt.outputs[i - 1]),
              std::string::npos);
  }
  // cwe: the ten answers are the list's most common words (after the
  // solved example, which ends at the second "Below is").
  const Item cwe = Make("cwe", 2048, 5);
  const std::string list = cwe.context.substr(cwe.context.rfind("Below is"));
  std::map<std::string, int> counts;
  std::istringstream words(list.substr(list.find('\n') + 1));
  for (std::string w; words >> w;) {
    if (w.back() != '.') ++counts[w];
  }
  ASSERT_EQ(cwe.outputs.size(), 10u);
  int least_answer = 1 << 30, most_other = 0;
  for (const auto& [w, n] : counts) {
    if (std::count(cwe.outputs.begin(), cwe.outputs.end(), w) > 0) {
      least_answer = std::min(least_answer, n);
    } else {
      most_other = std::max(most_other, n);
    }
  }
  EXPECT_GT(least_answer, most_other);
  // fwe: the three answers are the most frequent coded words but "...".
  const Item fwe = Make("fwe", 2048, 5);
  std::map<std::string, int> coded;
  std::istringstream text(fwe.context.substr(fwe.context.find("words. ") + 7));
  for (std::string w; text >> w;) ++coded[w];
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [w, n] : coded) {
    if (w != "...") ranked.emplace_back(n, w);
  }
  std::sort(ranked.rbegin(), ranked.rend());
  ASSERT_GE(ranked.size(), 4u);
  EXPECT_GT(ranked[2].first, ranked[3].first);
  const std::set<std::string> top = {ranked[0].second, ranked[1].second, ranked[2].second};
  EXPECT_EQ(top, std::set<std::string>(fwe.outputs.begin(), fwe.outputs.end()));
  // passkey: llama.cpp's sentence, twice the key.
  const Item passkey = Make("passkey", 512, 5);
  EXPECT_EQ(Count(passkey.context, passkey.outputs[0] + " is the pass key"), 1u);
  EXPECT_EQ(passkey.question, " What is the pass key? The pass key is");
}

TEST(Ruler, TrainingKeysNeverMeetEvaluationKeys) {
  const auto eval = KeyAdjectives(Split::kEval), train = KeyAdjectives(Split::kTrain);
  for (const std::string_view a : eval) {
    EXPECT_EQ(std::find(train.begin(), train.end(), a), train.end()) << a;
  }
  const auto& eval_words = CommonWords(Split::kEval);
  const std::set<std::string> train_words(CommonWords(Split::kTrain).begin(),
                                          CommonWords(Split::kTrain).end());
  EXPECT_GT(eval_words.size(), 1000u);
  for (const std::string& w : eval_words) EXPECT_EQ(train_words.count(w), 0u) << w;
  ItemOptions o;
  o.length = 512;
  o.split = Split::kTrain;
  const Item trained = MakeItem(*FindTask("niah_single_1").value(), Stories(), o).value();
  const std::string key = trained.question.substr(trained.question.find(" for ") + 5);
  const std::string adjective = key.substr(0, key.find('-'));
  EXPECT_NE(std::find(train.begin(), train.end(), adjective), train.end()) << key;
}

TEST(Ruler, ScoreIsTheShareOfOutputsTheAnswerContains) {
  const std::vector<std::string> two = {"1234567", "Tricky-Plan"};
  EXPECT_EQ(Score(" 1234567 and tricky-plan.", two), 1.0);
  EXPECT_EQ(Score(" 1234567.", two), 0.5);
  EXPECT_EQ(Score(" 123456", two), 0.0);  // a prefix of a value is not the value
  EXPECT_EQ(Score("TRICKY-PLAN", two), 0.5);  // case does not matter
  EXPECT_EQ(Score("anything", {}), 0.0);
}

TEST(Ruler, UnknownTasksAndLengthsTooShortAreErrors) {
  const auto unknown = FindTask("niah_single_9");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown task 'niah_single_9' (tasks: niah_single_1"),
            std::string::npos);
  ItemOptions o;
  o.length = 100;
  const auto short_item = MakeItem(*FindTask("niah_single_1").value(), Stories(), o);
  ASSERT_FALSE(short_item.ok());
  EXPECT_NE(short_item.status().message().find("a 100-token item of task niah_single_1 cannot"),
            std::string::npos);
}

}  // namespace
}  // namespace h2o::ruler
