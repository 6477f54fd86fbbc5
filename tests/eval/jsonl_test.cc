// JSONL reading and typed fields: every error names file:line.
#include "eval/jsonl.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include "eval/task_format.h"

namespace h2o {
namespace {

// A file of the running test's own: ctest runs this binary's tests at once.
std::string Write(const std::string& text) {
  const std::string path = ::testing::TempDir() + "h2o_jsonl_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid()) + ".jsonl";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Jsonl, SkipsBlankLinesAndCountsLinesFromOne) {
  const std::string path = Write("\n{\"b\": 1, \"a\": 2}\n  \n{\"x\": [1]}\n");
  auto lines = ReadJsonl(path);
  ASSERT_TRUE(lines.ok()) << lines.status().message();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].where, path + ":2");
  EXPECT_EQ((*lines)[1].where, path + ":4");
  EXPECT_EQ((*lines)[0].value.dump(), R"({"b":1,"a":2})");  // key order kept
}

TEST(Jsonl, ErrorsNameTheLine) {
  const std::string path = Write("{\"a\": 1}\n{\"a\": \n");
  auto lines = ReadJsonl(path);
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.status().message(), path + ":2: not valid JSON");
  EXPECT_FALSE(ReadJsonl(Write("\"text\"\n")).ok());
  EXPECT_FALSE(ReadJsonl(Write("")).ok());
  EXPECT_FALSE(ReadJsonl("/nonexistent/h2o.jsonl").ok());
}

TEST(Jsonl, TypedFields) {
  const JsonlLine line{"f:3", nlohmann::ordered_json::parse(
                                  R"({"s": "x", "i": 4, "d": 0.5, "l": ["a"], "n": null})")};
  EXPECT_EQ(StringField(line, "s").value(), "x");
  EXPECT_EQ(IntField(line, "i").value(), 4);
  EXPECT_EQ(NumberField(line, "d", 1.0).value(), 0.5);
  EXPECT_EQ(NumberField(line, "n", 1.0).value(), 1.0);  // null: the fallback
  EXPECT_EQ(IntField(line, "missing", 7).value(), 7);
  EXPECT_EQ(StringsField(line, "s").value(), std::vector<std::string>{"x"});
  EXPECT_EQ(StringsField(line, "l").value(), std::vector<std::string>{"a"});
  EXPECT_TRUE(StringsField(line, "n").value().empty());
  EXPECT_EQ(IntField(line, "d").status().message(), "f:3: field 'd' must be an integer");
  EXPECT_EQ(StringField(line, "missing").status().message(), "f:3: missing field 'missing'");
  EXPECT_FALSE(NumberField(line, "s", 0).ok());
}

TEST(TaskFormat, DetectsEachFormatAndRejectsMixtures) {
  auto lines_of = [](std::initializer_list<const char*> texts) {
    std::vector<JsonlLine> lines;
    int n = 0;
    for (const char* t : texts)
      lines.push_back({"f:" + std::to_string(++n), nlohmann::ordered_json::parse(t)});
    return lines;
  };
  EXPECT_EQ(DetectTaskFormat(lines_of({R"({"context": "", "choices": [], "gold": 0})"})).value(),
            TaskFormat::kMultipleChoice);
  EXPECT_EQ(DetectTaskFormat(lines_of({R"({"prompt": "", "echo": true})"})).value(),
            TaskFormat::kScoreRequests);
  EXPECT_EQ(DetectTaskFormat(lines_of({R"({"article": "", "summary_gt": ""})"})).value(),
            TaskFormat::kSummarization);
  auto mixed = DetectTaskFormat(lines_of({R"({"prompt": ""})", R"({"article": ""})"}));
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().message(), "f:2: a summarization line in a score-requests file");
  auto unknown = DetectTaskFormat(lines_of({R"({"question": ""})"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message().rfind("f:1: unknown task format", 0), 0u);
}

}  // namespace
}  // namespace h2o
