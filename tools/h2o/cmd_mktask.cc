// h2o mktask ruler: RULER-style long-context items (src/eval/ruler/) as the
// JSONL `h2o eval --task` runs, their lengths counted in a model's tokens.
#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "cli_log.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "core/strings.h"
#include "eval/ruler/tasks.h"
#include "gguf/file.h"
#include "report/progress.h"

namespace h2o::cli {
namespace {

struct MkTaskFlags {
  std::string kind;
  std::string model_path;
  std::string tasks = "all";
  std::string lengths = "4k";
  std::string depths;  // empty: each item's own, drawn as RULER does
  int32_t per_cell = 10;
  uint64_t seed = 1;
  std::string split = "eval";
  std::string haystack_path;
  std::string output_path;
};

// A flag's parser as a CLI11 check: its error is a usage error (exit 2).
template <typename Parse>
CLI::Validator Checked(Parse parse, const std::string& what) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto r = parse(text);
        return r.ok() ? std::string() : r.status().message();
      },
      what);
}

// "4k" -> 4096, "1500" -> 1500.
Result<std::vector<int64_t>> ParseLengths(const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string_view item : SplitCommas(text)) {
    std::string_view digits = item;
    int64_t scale = 1;
    if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
      scale = 1024;
      digits.remove_suffix(1);
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v <= 0 ||
        v > (int64_t{1} << 24) / scale) {
      return Status::Error(
          fmt::format("'{}' is not a length in tokens (e.g. 1k,2k,4k or 1500)", item));
    }
    out.push_back(v * scale);
  }
  return out;
}

// "0,25,50%" -> {0, 25, 50}; empty -> {-1} (drawn per item).
Result<std::vector<double>> ParseDepths(const std::string& text) {
  if (text.empty()) return std::vector<double>{-1};
  std::vector<double> out;
  for (std::string_view item : SplitCommas(text)) {
    if (!item.empty() && item.back() == '%') item.remove_suffix(1);
    double v = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !(v >= 0) ||
        v > 100) {
      return Status::Error(fmt::format("'{}' is not a depth in percent from 0 to 100", item));
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<const ruler::TaskSpec*>> ParseTasks(const std::string& text) {
  std::vector<const ruler::TaskSpec*> out;
  if (text == "all") {
    for (const ruler::TaskSpec& t : ruler::AllTasks()) out.push_back(&t);
    return out;
  }
  for (const std::string_view name : SplitCommas(text)) {
    auto task = ruler::FindTask(name);
    if (!task.ok()) return task.status();
    out.push_back(*task);
  }
  return out;
}

// One item's seed from the run's and its place, so that adding a task or a
// length leaves the other items as they were.
uint64_t ItemSeed(uint64_t seed, std::string_view task, int64_t length, double depth, int32_t i) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
  };
  for (const char c : task) mix(static_cast<unsigned char>(c));
  mix(static_cast<uint64_t>(length));
  mix(static_cast<uint64_t>(std::llround((depth + 1) * 1000)));
  mix(static_cast<uint64_t>(i));
  return h;
}

int RunMkTask(const MkTaskFlags& f) {
  auto tasks = ParseTasks(f.tasks);
  if (!tasks.ok()) return Fail(tasks.status());
  auto lengths = ParseLengths(f.lengths);
  if (!lengths.ok()) return Fail(lengths.status());
  auto depths = ParseDepths(f.depths);
  if (!depths.ok()) return Fail(depths.status());
  if (Status s = CheckWritable(f.output_path, "-o"); !s.ok()) return Fail(s);
  auto file = gguf::File::Open(f.model_path);
  if (!file.ok()) return Fail(file.status());
  auto tokenizer = LoadTokenizer(**file);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  const ruler::Split split = f.split == "train" ? ruler::Split::kTrain : ruler::Split::kEval;
  std::string essay;
  if (!f.haystack_path.empty()) {
    auto text = ReadTextFile(f.haystack_path);
    if (!text.ok()) return Fail(text.status());
    essay = std::move(text).value();
    if (const size_t words = ruler::EssayWordsOf(essay).size(); words < ruler::kMinEssayWords) {
      return Fail(fmt::format("--haystack {}: {} words; an essay haystack needs at least {}",
                              f.haystack_path, words, ruler::kMinEssayWords));
    }
  }

  const int64_t total = static_cast<int64_t>(tasks->size() * lengths->size() * depths->size()) *
                        f.per_cell;
  ProgressBar progress("mktask", total, ProgressBar::Enabled(Quiet()));
  std::string out;
  for (const ruler::TaskSpec* task : *tasks) {
    for (const int64_t length : *lengths) {
      for (const double depth : *depths) {
        for (int32_t i = 0; i < f.per_cell; ++i) {
          ruler::ItemOptions o;
          o.length = length;
          o.depth = depth;
          o.seed = ItemSeed(f.seed, task->name, length, depth, i);
          o.split = split;
          o.essay = essay;
          auto item = ruler::MakeItem(*task, *tokenizer, o);
          if (!item.ok()) return Fail(item.status().WithContext("--ctx"));
          nlohmann::ordered_json line = {{"task", item->task},
                                         {"length", item->length},
                                         {"n_tokens", item->n_tokens},
                                         {"depth", item->depth},
                                         {"max_tokens", item->max_tokens},
                                         {"outputs", item->outputs},
                                         {"context", item->context},
                                         {"question", item->question}};
          if (split == ruler::Split::kTrain) line["split"] = "train";
          out += line.dump();
          out += '\n';
          progress.Advance();
        }
      }
    }
  }
  progress.Finish();
  if (Status s = WriteFileAtomically(f.output_path, out); !s.ok()) return Fail(s);
  Note("wrote {} items ({} tasks x {} lengths x {} depths x {}) to {}", total, tasks->size(),
       lengths->size(), depths->size(), f.per_cell, f.output_path);
  return 0;
}

}  // namespace

Command RegisterMkTask(CLI::App& app) {
  auto f = std::make_shared<MkTaskFlags>();
  std::string names;
  for (const ruler::TaskSpec& t : ruler::AllTasks()) {
    names += names.empty() ? std::string(t.name) : ", " + std::string(t.name);
  }
  CLI::App* cmd = app.add_subcommand(
      "mktask", "write a long-context task file (RULER-style) for h2o eval --task");
  cmd->add_option("kind", f->kind, "task suite (ruler)")->required()->check(CLI::IsMember({"ruler"}));
  cmd->add_option("-m,--model", f->model_path,
                  "GGUF whose tokenizer counts the lengths (a vocab-only GGUF will do)")
      ->required();
  cmd->add_option("--tasks", f->tasks, "comma-separated, or all: " + names)
      ->check(Checked(ParseTasks, "TASK[,TASK...]"))
      ->capture_default_str();
  cmd->add_option("--ctx", f->lengths,
                  "lengths in the model's tokens, prompt and answer together, e.g. 1k,2k,4k")
      ->check(Checked(ParseLengths, "N[,N...]"))
      ->capture_default_str();
  cmd->add_option("--depths", f->depths,
                  "needle depths in percent of the haystack, e.g. 0,25,50,75,100 (default: each "
                  "item's own, one of RULER's 40)")
      ->check(Checked(ParseDepths, "PERCENT[,PERCENT...]"));
  cmd->add_option("--haystack", f->haystack_path,
                  "text file for the essay haystack (default: War and Peace, built in)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-n", f->per_cell, "items per task, length and depth")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("-s,--seed", f->seed, "seed of every choice")->capture_default_str();
  cmd->add_option("--split", f->split,
                  "eval, or train: keys and words disjoint from eval's (for training a model)")
      ->check(CLI::IsMember({"eval", "train"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", f->output_path, "output JSONL file")->required();
  return {cmd, [f] { return RunMkTask(*f); }};
}

}  // namespace h2o::cli
