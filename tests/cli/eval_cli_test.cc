// `h2o eval` through the real binary: the cloze accuracies of
// reference_cloze.json (computed by an independent implementation) for
// every policy, scoring requests in the H2O repository's format checked
// against `h2o perplexity`, and the one-line errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/run_binary.h"
#include "eval/bleu.h"
#include "eval/rouge.h"
#include "model/model.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kCloze = testing::DataPath("tinystories_cloze_56.jsonl");

// reference_cloze.json keys are policy:heavy:recent (sinks for sink).
std::string SpecOfReferenceKey(const std::string& key) {
  const size_t a = key.find(':'), b = key.find(':', a + 1);
  const std::string policy = key.substr(0, a), first = key.substr(a + 1, b - a - 1),
                    second = key.substr(b + 1);
  if (policy == "full") return "full";
  if (policy == "h2o") return fmt::format("h2o:heavy={},recent={}", first, second);
  if (policy == "local") return fmt::format("local:recent={}", second);
  if (policy == "sink") return fmt::format("sink:sinks={},recent={}", first, second);
  if (policy == "h2only") return fmt::format("h2only:heavy={}", first);
  ADD_FAILURE() << "unknown policy in reference key " << key;
  return "";
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs reference keys in one invocation (`--kv` as given, optionally with
// --budget) and compares acc and acc_norm exactly: both are counts over 56
// items. `keys` are the reference keys the rows stand for, in row order.
void ExpectClozeReference(const std::string& kv_args, const std::vector<std::string>& keys) {
  const nlohmann::json reference = testing::ReadJson("stories260K/reference_cloze.json")["results"];
  // The reference keeps K/V in double precision; f16 rounding flips a few
  // near-tied items under the tightest budgets, so K/V stay f32 here.
  const auto r = RunH2o(fmt::format("eval -m {} --task {} -t 1 --chunk 1 --kv-type f32 --json {}",
                                    kModel, kCloze, kv_args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["items"], 56);
  ASSERT_EQ(out["results"].size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE(keys[i]);
    ASSERT_TRUE(reference.contains(keys[i]));
    const auto& row = out["results"][i];
    EXPECT_EQ(row["kv"], SpecOfReferenceKey(keys[i]));
    EXPECT_EQ(row["acc"].get<double>(), reference[keys[i]]["acc"].get<double>());
    EXPECT_EQ(row["acc_norm"].get<double>(), reference[keys[i]]["acc_norm"].get<double>());
  }
}

std::string KvList(const std::vector<std::string>& keys) {
  std::string list;
  for (const std::string& key : keys) {
    if (!list.empty()) list += ',';
    list += SpecOfReferenceKey(key);
  }
  return "--kv " + list;
}

// The groups below must cover every key of the reference file.
const std::vector<std::vector<std::string>> kClozeGroups = {
    {"full:0:0"},
    {"h2o:8:8", "local:0:16", "sink:4:12"},
    {"h2o:16:16", "local:0:32", "sink:4:28"},
    {"h2only:32:0", "h2o:32:32", "local:0:64"}};

TEST(EvalCloze, GroupsCoverEveryReferenceKey) {
  std::set<std::string> covered, listed;
  for (const auto& group : kClozeGroups) covered.insert(group.begin(), group.end());
  const nlohmann::json reference = testing::ReadJson("stories260K/reference_cloze.json");
  for (const auto& [key, value] : reference["results"].items()) listed.insert(key);
  EXPECT_EQ(listed.size(), 10u);
  EXPECT_EQ(covered, listed);
}

// A --kv-type sweep runs every spec at each type in one batch: the f32
// rows still match the reference exactly, and each type's rows are
// labelled with it.
TEST(EvalCloze, KvTypeSweepKeepsTheF32RowsExact) {
  const nlohmann::json reference = testing::ReadJson("stories260K/reference_cloze.json")["results"];
  const auto r = RunH2o(fmt::format(
      "eval -m {} --task {} -t 1 --chunk 1 --kv-type f32,f16 --json --kv full,h2o:heavy=8,recent=8",
      kModel, kCloze));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 4u);
  const char* keys[] = {"full:0:0", "h2o:8:8"};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(keys[i]);
    EXPECT_EQ(rows[i]["kv"], SpecOfReferenceKey(keys[i]) + " (f32)");
    EXPECT_EQ(rows[i + 2]["kv"], SpecOfReferenceKey(keys[i]) + " (f16)");
    EXPECT_EQ(rows[i + 2]["policy"], std::string(i == 0 ? "full" : "h2o") + " f16");
    EXPECT_EQ(rows[i]["acc"].get<double>(), reference[keys[i]]["acc"].get<double>());
    EXPECT_EQ(rows[i]["acc_norm"].get<double>(), reference[keys[i]]["acc_norm"].get<double>());
    // f16 rounding flips at most a few of the 56 items.
    EXPECT_NEAR(rows[i + 2]["acc"].get<double>(), rows[i]["acc"].get<double>(), 4.0 / 56);
  }
}

// One test per budget so ctest runs them in parallel. Budgets 16 and 32 go
// through the --budget sweep (h2o splits it in half, sink keeps 4 sinks),
// the others through explicit --kv lists.
TEST(EvalCloze, FullCacheMatchesReference) {
  ExpectClozeReference(KvList(kClozeGroups[0]), kClozeGroups[0]);
}
TEST(EvalCloze, Budget16SweepMatchesReference) {
  ExpectClozeReference("--kv h2o,local,sink --budget 16", kClozeGroups[1]);
}
TEST(EvalCloze, Budget32SweepMatchesReference) {
  ExpectClozeReference("--kv h2o,local,sink --budget 32", kClozeGroups[2]);
}
TEST(EvalCloze, Budget64MatchesReference) {
  ExpectClozeReference(KvList(kClozeGroups[3]), kClozeGroups[3]);
}

TEST(EvalCloze, SweepWritesTheReportFiles) {
  const std::string prefix = ::testing::TempDir() + "h2o_eval_sweep";
  const auto r =
      RunH2o(fmt::format("eval -m {} --task {} -t 1 --limit 6 --kv full,local,h2o "
                         "--budget 25%,50% --report {}",
                         kModel, kCloze, prefix));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The Figure-4 table: one row per policy, one column per budget.
  EXPECT_NE(r.out.find("| policy | 25% | 50% |"), std::string::npos) << r.out;
  const auto report = nlohmann::json::parse(testing::ReadFileOrEmpty(prefix + ".json"));
  ASSERT_EQ(report["rows"].size(), 5u);  // full once, then 2 policies x 2 budgets
  EXPECT_EQ(report["rows"][0]["policy"], "full");
  EXPECT_EQ(report["rows"][1]["kv"], "local:recent=25%");
  EXPECT_EQ(report["rows"][4]["kv"], "h2o:heavy=25%,recent=25%");
  EXPECT_EQ(report["rows"][4]["budget"], "50%");
  EXPECT_NE(testing::ReadFileOrEmpty(prefix + ".csv").find("policy,budget,kv,acc,acc_norm"),
            std::string::npos);
  EXPECT_NE(testing::ReadFileOrEmpty(prefix + ".svg").find("<svg"), std::string::npos);
  EXPECT_NE(testing::ReadFileOrEmpty(prefix + ".md").find("### acc_norm"), std::string::npos);
}

TEST(EvalCloze, TextTableHasOneRowPerPolicyWithStdErr) {
  const auto r = RunH2o(
      fmt::format("eval -m {} --task {} -t 1 --limit 8 --kv full,local:recent=8", kModel, kCloze));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 items, 0-shot"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nfull "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nlocal:recent=8 "), std::string::npos) << r.out;
}

TEST(EvalCloze, ShotsPrependTheFollowingSolvedItems) {
  // --limit 6 --shots 2 must score what a 0-shot run scores on contexts
  // built by hand: the next two of the six items (wrapping), each context
  // + " " + its gold choice, separated by blank lines.
  std::vector<nlohmann::json> items;
  std::istringstream in(testing::ReadFileOrEmpty(kCloze));
  std::string line;
  while (items.size() < 6 && std::getline(in, line)) items.push_back(nlohmann::json::parse(line));
  std::string built;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string context;
    for (size_t s = 1; s <= 2; ++s) {
      const auto& shot = items[(i + s) % items.size()];
      context += shot["context"].get<std::string>() + " " +
                 shot["choices"][shot["gold"].get<int>()].get<std::string>() + "\n\n";
    }
    nlohmann::json item = items[i];
    item["context"] = context + items[i]["context"].get<std::string>();
    built += item.dump() + "\n";
  }
  const std::string args = " -t 1 --json --kv full,local:recent=24";
  const auto shots =
      RunH2o(fmt::format("eval -m {} --task {} --limit 6 --shots 2", kModel, kCloze) + args);
  const auto by_hand = RunH2o(fmt::format("eval -m {} --task {}", kModel,
                                          WriteTemp("h2o_eval_shots.jsonl", built)) + args);
  ASSERT_EQ(shots.exit_code, 0) << shots.err;
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  const auto a = nlohmann::json::parse(shots.out), b = nlohmann::json::parse(by_hand.out);
  EXPECT_EQ(a["items"], 6);
  EXPECT_EQ(a["shots"], 2);
  EXPECT_EQ(a["results"], b["results"]);
}

TEST(EvalCloze, ContextsLongerThanTheContextSizeAreCutFromTheLeft) {
  const auto r =
      RunH2o(fmt::format("eval -m {} --task {} -t 1 --limit 4 -c 96 --json", kModel, kCloze));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["truncated_items"], 4);
  EXPECT_EQ(out["n_ctx"], 96);
}

// --- the H2O repository's scoring requests ---

// Requests as its generate_task_data.py writes them (keys in its order).
std::string RequestLine(const std::string& prompt, int logprobs = 1) {
  nlohmann::ordered_json request = {{"best_of", 1},
                                    {"echo", true},
                                    {"logprobs", logprobs},
                                    {"max_tokens", 0},
                                    {"model", "x"},
                                    {"n", 1},
                                    {"prompt", prompt},
                                    {"request_type", "language-model-inference"},
                                    {"stop", nullptr},
                                    {"temperature", 0},
                                    {"top_p", 1}};
  return request.dump() + "\n";
}

const std::vector<std::string> kPrompts = {
    "Once upon a time, there was a little girl named Lily. She loved to play outside.",
    "Tom had a big red ball. He threw it to his dog, and the dog ran fast.", "The sun was hot.",
    "Mia said, \"Let's go to the park!\"\nHer mom smiled."};

// Per-token log-probabilities by an independent path: `h2o perplexity
// --per-token` on the prompt's ids (its own scoring loop over the same
// engine), negated.
std::vector<double> LogprobsViaPerplexity(const std::vector<int32_t>& ids, const std::string& kv) {
  const std::string path = WriteTemp("h2o_eval_ids.txt", testing::JoinIds(ids) + "\n");
  const auto r =
      RunH2o(fmt::format("perplexity -m {} -t 1 --kv {} --json --per-token "
                         "--token-file {}",
                         kModel, kv, path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  std::vector<double> logprobs;
  for (const auto& nll : out["policies"][0]["per_stream"][0]["nll"])
    logprobs.push_back(-nll.get<double>());
  return logprobs;
}

// The bundled model's vocabulary, to map the result's token strings back
// to ids as the repository's evaluator does (convert_tokens_to_ids).
struct BundledVocab {
  BundledVocab() {
    auto model = Model::Load(kModel);
    EXPECT_TRUE(model.ok());
    tokenizer = std::make_unique<Tokenizer>(LoadVocabFromGguf((*model)->file()).value());
    for (int32_t id = 0; id < tokenizer->n_vocab(); ++id) ids[tokenizer->vocab().tokens[id]] = id;
  }
  std::unique_ptr<Tokenizer> tokenizer;
  std::map<std::string, int32_t> ids;
};

std::vector<int32_t> IdsOfPieces(const BundledVocab& vocab, const nlohmann::ordered_json& pieces) {
  std::vector<int32_t> ids;
  for (const auto& piece : pieces) {
    const auto it = vocab.ids.find(piece.get<std::string>());
    EXPECT_NE(it, vocab.ids.end()) << piece;
    ids.push_back(it == vocab.ids.end() ? 0 : it->second);
  }
  return ids;
}

TEST(EvalRequests, AnswersMatchPerplexityPerTokenAndDecodeToThePrompt) {
  const BundledVocab vocab;
  std::string requests;
  for (const std::string& p : kPrompts) requests += RequestLine(p);
  const std::string task = WriteTemp("h2o_eval_requests.jsonl", requests);
  const std::string out_path = ::testing::TempDir() + "h2o_eval_results.jsonl";
  for (const std::string kv : {"full", "h2o:heavy=4,recent=4"}) {
    SCOPED_TRACE(kv);
    std::filesystem::remove(out_path);
    const auto r = RunH2o(
        fmt::format("eval -m {} -t 1 --kv {} --task {} --out {}", kModel, kv, task, out_path));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("answered 4 requests"), std::string::npos) << r.out;
    std::ifstream in(out_path);
    std::string line;
    size_t n = 0;
    for (; std::getline(in, line); ++n) {
      ASSERT_LT(n, kPrompts.size());
      SCOPED_TRACE(kPrompts[n]);
      const auto result = nlohmann::ordered_json::parse(line);
      // The evaluator finds a result by the request's serialized text.
      EXPECT_EQ(result["request"].dump() + "\n", RequestLine(kPrompts[n]));
      const auto& choice = result["result"]["choices"][0];
      EXPECT_EQ(choice["text"], kPrompts[n]);
      const auto& lp = choice["logprobs"];
      const size_t n_tokens = lp["tokens"].size();
      ASSERT_GE(n_tokens, 4u);
      ASSERT_EQ(lp["token_logprobs"].size(), n_tokens);
      ASSERT_EQ(lp["top_logprobs"].size(), n_tokens);
      ASSERT_EQ(lp["text_offset"].size(), n_tokens);
      EXPECT_TRUE(lp["token_logprobs"][0].is_null());
      EXPECT_TRUE(lp["top_logprobs"][0].is_null());

      // Tokens: the prompt without BOS, decoding back to it.
      const std::vector<int32_t> ids = IdsOfPieces(vocab, lp["tokens"]);
      EXPECT_EQ(ids, vocab.tokenizer->Encode(kPrompts[n], /*add_special=*/false));
      EXPECT_EQ(vocab.tokenizer->Decode(ids, /*remove_special=*/false), kPrompts[n]);
      for (size_t i = 0; i < n_tokens; ++i) {
        std::string piece = vocab.tokenizer->TokenToPiece(ids[i]);
        if (i == 0) piece.erase(0, 1);  // the dummy-prefix space
        EXPECT_EQ(kPrompts[n].substr(lp["text_offset"][i].get<size_t>(), piece.size()), piece);
      }

      const std::vector<double> expected = LogprobsViaPerplexity(ids, kv);
      ASSERT_EQ(expected.size(), n_tokens - 1);
      for (size_t i = 1; i < n_tokens; ++i) {
        const double logprob = lp["token_logprobs"][i].get<double>();
        EXPECT_NEAR(logprob, expected[i - 1], 1e-6) << "token " << i;
        // The top entry is at least as likely as the actual token, and is
        // the token itself exactly when the evaluator counts it correct.
        const auto& top = lp["top_logprobs"][i];
        ASSERT_EQ(top.size(), 1u);
        const double top_logprob = top.begin().value().get<double>();
        EXPECT_GE(top_logprob, logprob - 1e-12);
        if (top.begin().key() == lp["tokens"][i]) {
          EXPECT_EQ(top_logprob, logprob);
        }
      }
    }
    EXPECT_EQ(n, kPrompts.size());
  }
}

TEST(EvalRequests, TopEntryIsTheGreedyNextToken) {
  const BundledVocab vocab;
  const std::string prompt = kPrompts[0];
  const auto r = RunH2o(fmt::format("eval -m {} -t 1 --task {}", kModel,
                                    WriteTemp("h2o_eval_greedy.jsonl", RequestLine(prompt, 3))));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto result = nlohmann::ordered_json::parse(r.out);
  const auto& lp = result["result"]["choices"][0]["logprobs"];
  const std::vector<int32_t> ids = IdsOfPieces(vocab, lp["tokens"]);
  for (size_t i : {1u, 5u, 9u}) {
    // `h2o generate` greedy from the first i tokens, one token at a time.
    const auto g =
        RunH2o(fmt::format("generate -m {} -t 1 --chunk 1 --temp 0 -n 1 --print-ids "
                           "--tokens '{}'",
                           kModel, testing::JoinIds({ids.begin(), ids.begin() + i})));
    ASSERT_EQ(g.exit_code, 0) << g.err;
    const std::string greedy = g.out.substr(g.out.find_last_of(' ') + 1);
    const auto& top = lp["top_logprobs"][i];
    ASSERT_EQ(top.size(), 3u);  // "logprobs": 3
    EXPECT_EQ(vocab.ids.at(top.begin().key()), std::stoi(greedy)) << "position " << i;
    double previous = 0.0;
    for (const auto& [piece, logprob] : top.items()) {
      EXPECT_LE(logprob.get<double>(), previous) << piece;
      previous = logprob.get<double>();
    }
  }
}

TEST(EvalRequests, PercentBudgetsReferToEachPromptsLength) {
  std::string requests;
  for (const std::string& p : kPrompts) requests += RequestLine(p);
  const std::string task = WriteTemp("h2o_eval_percent.jsonl", requests);
  const auto percent =
      RunH2o(fmt::format("eval -m {} -t 1 --kv h2o:heavy=25%,recent=25% --task {}", kModel, task));
  ASSERT_EQ(percent.exit_code, 0) << percent.err;
  std::istringstream lines(percent.out);
  std::string line;
  for (size_t n = 0; std::getline(lines, line); ++n) {
    ASSERT_LT(n, kPrompts.size());
    const auto result = nlohmann::json::parse(line);
    const auto& lp = result["result"]["choices"][0]["logprobs"];
    const size_t quarter = lp["tokens"].size() / 4;  // floor(25% of the prompt)
    const auto absolute = RunH2o(
        fmt::format("eval -m {} -t 1 --kv h2o:heavy={},recent={} --task {}", kModel, quarter,
                    quarter, WriteTemp("h2o_eval_absolute.jsonl", RequestLine(kPrompts[n]))));
    ASSERT_EQ(absolute.exit_code, 0) << absolute.err;
    EXPECT_EQ(
        nlohmann::json::parse(absolute.out)["result"]["choices"][0]["logprobs"]["token_logprobs"],
        lp["token_logprobs"])
        << kPrompts[n];
  }
}

// --- errors: one line, exit 1 ---

TEST(EvalErrors, BadTaskFilesNameTheFileAndLine) {
  const std::string base = fmt::format("eval -m {} --task ", kModel);
  ExpectOneErrorLine(RunH2o(base + "/nonexistent/task.jsonl"),
                     "/nonexistent/task.jsonl: cannot open");
  const std::string good =
      R"({"context": "A cat sat.", "choices": ["It ran.", "It slept."], "gold": 1})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good + "\n{\"context\": \"x\", \"choices\": [\"a\"], \"gold\":\n", ":2: not valid JSON"},
      {good + "\n\n" + R"({"context": "x", "choices": ["a", "b"], "gold": 2})", ":3: 'gold' is 2"},
      {R"({"context": "x", "choices": [], "gold": 0})", ":1: 'choices' is empty"},
      {R"({"context": "x", "choices": ["a", ""], "gold": 0})", ":1: choice 1 is an empty string"},
      {R"({"context": "x", "choices": ["a"], "gold": "0"})", ":1: field 'gold' must be an integer"},
      {R"({"question": "x", "answer": "y"})", ":1: unknown task format"},
      {good + "\n" + RequestLine("x"), ":2: a score-requests line in a multiple-choice file"},
      {"[1, 2]", ":1: expected a JSON object per line"},
      {R"({"prompt": "x", "echo": true, "max_tokens": 16})", ":1: only scoring requests"},
      {R"({"prompt": "x", "max_tokens": 0})", ":1: only scoring requests"},
  };
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    const std::string path = WriteTemp("h2o_eval_bad.jsonl", text);
    ExpectOneErrorLine(RunH2o(base + path), path + needle);
  }
  ExpectOneErrorLine(RunH2o(base + WriteTemp("h2o_eval_empty.jsonl", "\n \n")), "no JSON lines");
}

TEST(EvalErrors, BadOptionsAreOneLine) {
  const std::string base = fmt::format("eval -m {} --task {}", kModel, kCloze);
  ExpectOneErrorLine(RunH2o(base + " --shots 56"), "--shots 56 needs more items than shots");
  ExpectOneErrorLine(RunH2o(base + " --kv bogus:k=1"), "--kv");
  ExpectOneErrorLine(RunH2o(base + " --generate"), "--generate needs summarization items");
  const std::string requests = WriteTemp("h2o_eval_one_request.jsonl", RequestLine("Hi."));
  ExpectOneErrorLine(
      RunH2o(fmt::format("eval -m {} --task {} --kv full,local:recent=4", kModel, requests)),
      "one --kv policy per run");
  ExpectOneErrorLine(RunH2o(fmt::format("eval -m {} --task {} --shots 1", kModel, requests)),
                     "--shots applies to multiple-choice tasks");
  ExpectOneErrorLine(RunH2o(fmt::format("eval -m {} --task {} --report /tmp/x", kModel, requests)),
                     "--report applies to multiple choice and summarization");
  ExpectOneErrorLine(RunH2o(base + " --kv h2o:heavy=0,recent=0"), "--kv 'h2o:heavy=0,recent=0'");
  ExpectOneErrorLine(RunH2o(base + " --kv h2o:heavy=4 --budget 10%"), "sets 'heavy'");
  ExpectOneErrorLine(RunH2o(base + " --kv full,h2o:heavy=4,recent=4 --kv-pos-shift"),
                     "--kv-pos-shift applies to the sink and h2o policies, not 'full'");
  ExpectOneErrorLine(RunH2o(base + " --out /tmp/x.jsonl"), "--out applies to scoring requests");
}

// --- summarization (the mechanics: the 260K model cannot summarize news) ---

const std::string kXsum = testing::DataPath("xsum_0shot_10.jsonl");

std::vector<nlohmann::ordered_json> ReadLines(const std::string& path) {
  std::vector<nlohmann::ordered_json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::ordered_json::parse(line));
  return lines;
}

std::vector<int32_t> IdsOf(const nlohmann::ordered_json& ids) {
  return ids.get<std::vector<int32_t>>();
}

// The ids `h2o generate --print-ids` prints after the prompt.
std::vector<int32_t> GenerateIds(const std::vector<int32_t>& prompt, const std::string& args) {
  const auto r =
      RunH2o(fmt::format("generate -m {} -t 1 --chunk 1 --temp 0 --print-ids {} "
                         "--tokens '{}'",
                         kModel, args, testing::JoinIds(prompt)));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::vector<int32_t> ids;
  int32_t id;
  while (in >> id) ids.push_back(id);
  EXPECT_GE(ids.size(), prompt.size());
  return std::vector<int32_t>(ids.begin() + std::min(prompt.size(), ids.size()), ids.end());
}

TEST(EvalSummarize, GreedyOutputEqualsGenerateOnTheCutPrompt) {
  const BundledVocab vocab;
  const std::string out_path = ::testing::TempDir() + "h2o_eval_xsum.jsonl";
  const auto r =
      RunH2o(fmt::format("eval -m {} --task {} --generate --limit 2 -t 1 -c 200 "
                         "--temp 0 --kv full,h2o:heavy=16,recent=16 --out {}",
                         kModel, kXsum, out_path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 articles cut from the left to fit 200 tokens"), std::string::npos)
      << r.out;
  const auto results = ReadLines(out_path);
  ASSERT_EQ(results.size(), 4u);  // 2 items x 2 policies
  for (const auto& line : results) {
    const auto& result = line["result"];
    const std::string kv = result["kv"];
    SCOPED_TRACE(kv);
    const std::string article = line["request"]["article"];
    // Articles are long: BOS + their last tokens, leaving max_tokens free.
    const std::vector<int32_t> all = vocab.tokenizer->Encode(article, /*add_special=*/true);
    const int64_t max_tokens = line["request"]["max_tokens"];
    ASSERT_EQ(max_tokens, 64);
    const int64_t room = 200 - max_tokens;
    ASSERT_GT(static_cast<int64_t>(all.size()), room);
    ASSERT_EQ(result["prompt_tokens"], room);
    EXPECT_EQ(result["dropped_article_tokens"], static_cast<int64_t>(all.size()) - room);
    std::vector<int32_t> prompt = {all[0]};
    prompt.insert(prompt.end(), all.end() - (room - 1), all.end());
    const auto& choice = result["choices"][0];
    const std::vector<int32_t> generated = IdsOf(choice["logprobs"]["token_ids"]);
    EXPECT_EQ(generated, GenerateIds(prompt, fmt::format("-c 200 -n 64 --kv {}", kv)));
    // The text is the generated tokens' pieces.
    std::string text;
    for (int32_t id : generated) text += vocab.tokenizer->TokenToPiece(id);
    EXPECT_EQ(choice["text"], text);
    EXPECT_EQ(choice["logprobs"]["tokens"].size(), generated.size());
    EXPECT_EQ(choice["finish_reason"], generated.size() == 64 ? "length" : "stop");
  }
}

TEST(EvalSummarize, StopStringsCutTheText) {
  // A short article whose greedy continuation is known, then the same with
  // a word from the middle of it as the stop string.
  auto item = [](const std::string& stop) {
    nlohmann::ordered_json j = {{"article", "Once upon a time, there was a little dog."},
                                {"summary_gt", "A dog."},
                                {"max_tokens", 40},
                                {"temperature", 0},
                                {"stop", nlohmann::json::array({stop})}};
    return j.dump() + "\n";
  };
  const std::string base = fmt::format("eval -m {} --generate -t 1 --json --out ", kModel);
  const std::string out_path = ::testing::TempDir() + "h2o_eval_stop.jsonl";
  ASSERT_EQ(
      RunH2o(base + out_path + " --task " + WriteTemp("h2o_stop0.jsonl", item("###"))).exit_code,
      0);
  const auto free_run = ReadLines(out_path)[0]["result"]["choices"][0];
  const std::string text = free_run["text"];
  ASSERT_GT(text.size(), 40u) << text;
  // The third word from the end of the first 30 characters.
  const size_t space = text.rfind(' ', 30);
  ASSERT_NE(space, std::string::npos);
  const std::string stop = text.substr(space, 4);
  ASSERT_EQ(
      RunH2o(base + out_path + " --task " + WriteTemp("h2o_stop1.jsonl", item(stop))).exit_code, 0);
  const auto stopped = ReadLines(out_path)[0]["result"]["choices"][0];
  EXPECT_EQ(stopped["text"], text.substr(0, text.find(stop)));
  EXPECT_EQ(stopped["finish_reason"], "stop");
  EXPECT_LT(stopped["logprobs"]["token_ids"].size(), free_run["logprobs"]["token_ids"].size());
}

TEST(EvalSummarize, ReportsRougeOfTheTextsAndSelfBleu) {
  const std::string out_path = ::testing::TempDir() + "h2o_eval_rouge.jsonl";
  const auto r =
      RunH2o(fmt::format("eval -m {} --task {} --generate --limit 3 -t 1 -c 256 "
                         "--kv full,local:recent=32 --json --out {}",
                         kModel, kXsum, out_path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["results"].size(), 2u);
  const auto results = ReadLines(out_path);
  ASSERT_EQ(results.size(), 6u);
  for (size_t p = 0; p < 2; ++p) {
    const auto& row = out["results"][p];
    SCOPED_TRACE(row["kv"].get<std::string>());
    std::vector<std::string> texts;
    RougeF1 sum;
    for (size_t i = 0; i < 3; ++i) {
      const auto& line = results[p * 3 + i];
      EXPECT_EQ(line["result"]["kv"].get<std::string>(), row["kv"].get<std::string>());
      texts.push_back(line["result"]["choices"][0]["text"]);
      const RougeF1 f = Rouge(texts.back(), line["request"]["summary_gt"].get<std::string>());
      sum.rouge1 += f.rouge1;
      sum.rouge2 += f.rouge2;
      sum.rougeL += f.rougeL;
      if (p == 1) {
        const std::string full_text = results[i]["result"]["choices"][0]["text"];
        EXPECT_EQ(line["result"]["rouge_vs_full"]["rougeL"].get<double>(),
                  Rouge(texts.back(), full_text).rougeL);
      }
    }
    EXPECT_DOUBLE_EQ(row["rouge1"].get<double>(), sum.rouge1 / 3);
    EXPECT_DOUBLE_EQ(row["rouge2"].get<double>(), sum.rouge2 / 3);
    EXPECT_DOUBLE_EQ(row["rougeL"].get<double>(), sum.rougeL / 3);
    EXPECT_DOUBLE_EQ(row["self_bleu"].get<double>(), SelfBleu(texts));
  }
  // The full cache against itself.
  EXPECT_EQ(out["results"][0]["rouge1_vs_full"], 1.0);
  EXPECT_EQ(out["results"][0]["rougeL_vs_full"], 1.0);
  // Sampled at each item's temperature (0.3) from --seed: reproducible.
  EXPECT_EQ(out["seed"], 0);
}

TEST(EvalErrors, BadSummarizationItems) {
  const std::string base = fmt::format("eval -m {} --generate --task ", kModel);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"article": "x", "summary_gt": "y", "max_tokens": 0})",
       ":1: 'max_tokens' must be at least 1"},
      {R"({"article": "x", "summary_gt": "y", "top_p": 0})", ":1: 'top_p' must be in (0, 1]"},
      {R"({"article": "x", "summary_gt": "y", "temperature": -1})",
       ":1: 'temperature' must not be negative"},
      {R"({"article": "x", "summary_gt": "y", "stop": [1]})",
       ":1: field 'stop' must be a list of strings"},
      {R"({"article": "x"})", ":1: missing field 'summary_gt'"},
      {R"({"article": "x", "summary_gt": "y", "max_tokens": 5000})",
       ":1: max_tokens 5000 leaves no room"},
  };
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    const std::string path = WriteTemp("h2o_eval_bad_xsum.jsonl", text);
    ExpectOneErrorLine(RunH2o(base + path), path + needle);
  }
}

}  // namespace
}  // namespace h2o
