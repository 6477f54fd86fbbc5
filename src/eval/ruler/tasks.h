// RULER's synthetic tasks (Hsieh et al. 2024, "RULER: What's the Real
// Context Size of Your Long-Context Language Models?") and llama.cpp's
// passkey test, made into items to evaluate: RULER's templates, needle
// sentences and haystacks, the length counted in the model's own tokens,
// the needle at a stated depth, every choice drawn from a seeded generator.
//
// An item is two texts: `context` (the instruction and the haystack with
// its needles) and `question` (the question and RULER's answer prefix).
// Query-agnostic evaluation compresses the cache after the context and
// only then feeds the question; query-aware feeds both in one pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "eval/ruler/words.h"
#include "tokenizer/tokenizer.h"

namespace h2o::ruler {

enum class Family {
  kNiah,              // needles "One of the special magic numbers for KEY is: VALUE."
  kVariableTracking,  // vt: chains VAR B = VAR A
  kCommonWords,       // cwe: the 10 most common words of a numbered list
  kFrequentWords,     // fwe: the 3 most frequent coded words (Zipf-distributed)
  kPasskey,           // llama.cpp's passkey example
};

enum class Haystack { kNoise, kEssay, kNeedles };
enum class Kind { kWords, kNumbers, kUuids };

struct TaskSpec {
  std::string_view name;
  Family family = Family::kNiah;
  Haystack haystack = Haystack::kNoise;  // niah and vt
  Kind key = Kind::kWords;               // niah
  Kind value = Kind::kNumbers;           // niah
  int32_t num_keys = 1;                  // niah: needles with distinct keys
  int32_t num_values = 1;                // niah: values per key
  int32_t num_queries = 1;               // niah: keys asked for
  int32_t max_tokens = 0;                // tokens generated for the answer
};

// Every task: niah_single_1/2/3, niah_multikey_1/2/3, niah_multivalue,
// niah_multiquery, vt, cwe, fwe, passkey; RULER's configurations.
std::span<const TaskSpec> AllTasks();
// The task named `name`; the error lists the names.
Result<const TaskSpec*> FindTask(std::string_view name);

struct Item {
  std::string task;
  std::string context;
  std::string question;              // the question, then the answer prefix
  std::vector<std::string> outputs;  // what a correct answer contains, each
  int32_t max_tokens = 0;
  int64_t length = 0;    // the target: prompt tokens + max_tokens <= length
  int64_t n_tokens = 0;  // the prompt's tokens (BOS included)
  // Percent of the haystack before the first queried needle (the only one
  // of a single-needle task); -1 for cwe and fwe.
  double depth = -1;
};

struct ItemOptions {
  int64_t length = 4096;
  double depth = -1;  // percent (0..100); < 0: drawn from RULER's 40 depths
  uint64_t seed = 0;
  Split split = Split::kEval;
  // The essay haystack's text (niah_single_2/3, multikey_1, multivalue,
  // multiquery); empty: EssayText(). At least kMinEssayWords words.
  std::string_view essay;
};

// The fewest words an essay haystack may have (it repeats when an item
// needs more, as RULER's does).
inline constexpr size_t kMinEssayWords = 1000;

// The whitespace-separated words of an essay (RULER's haystack unit).
std::vector<std::string_view> EssayWordsOf(std::string_view text);

// One item of `task` filling `length` tokens of `tokenizer` (the most
// haystack that fits, found by bisection, as RULER does). Errors: a length
// too short for the task's question and answer.
Result<Item> MakeItem(const TaskSpec& task, const Tokenizer& tokenizer,
                      const ItemOptions& options);

// RULER's score of one answer: the share of `outputs` it contains
// (case-insensitive substrings; string_match_all), in [0, 1].
double Score(std::string_view answer, std::span<const std::string> outputs);

}  // namespace h2o::ruler
