#include "eval/ruler/tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <random>
#include <utility>

namespace h2o::ruler {
namespace {

using Rng = std::mt19937_64;

// RULER's configurations (its synthetic.yaml) and llama.cpp's passkey.
constexpr TaskSpec kTasks[] = {
    {"niah_single_1", Family::kNiah, Haystack::kNoise, Kind::kWords, Kind::kNumbers, 1, 1, 1, 128},
    {"niah_single_2", Family::kNiah, Haystack::kEssay, Kind::kWords, Kind::kNumbers, 1, 1, 1, 128},
    {"niah_single_3", Family::kNiah, Haystack::kEssay, Kind::kWords, Kind::kUuids, 1, 1, 1, 128},
    {"niah_multikey_1", Family::kNiah, Haystack::kEssay, Kind::kWords, Kind::kNumbers, 4, 1, 1,
     128},
    {"niah_multikey_2", Family::kNiah, Haystack::kNeedles, Kind::kWords, Kind::kNumbers, 1, 1, 1,
     128},
    {"niah_multikey_3", Family::kNiah, Haystack::kNeedles, Kind::kUuids, Kind::kUuids, 1, 1, 1,
     128},
    {"niah_multivalue", Family::kNiah, Haystack::kEssay, Kind::kWords, Kind::kNumbers, 1, 4, 1,
     128},
    {"niah_multiquery", Family::kNiah, Haystack::kEssay, Kind::kWords, Kind::kNumbers, 4, 1, 4,
     128},
    {"vt", Family::kVariableTracking, Haystack::kNoise, Kind::kWords, Kind::kNumbers, 1, 1, 1, 30},
    {"cwe", Family::kCommonWords, Haystack::kNoise, Kind::kWords, Kind::kWords, 1, 1, 1, 120},
    {"fwe", Family::kFrequentWords, Haystack::kNoise, Kind::kWords, Kind::kWords, 1, 1, 1, 50},
    {"passkey", Family::kPasskey, Haystack::kNoise, Kind::kWords, Kind::kNumbers, 1, 1, 1, 16},
};

constexpr std::string_view kNoise =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

uint64_t Below(Rng& rng, uint64_t n) { return rng() % n; }

std::string Number(Rng& rng, int digits) {
  uint64_t low = 1;
  for (int i = 1; i < digits; ++i) low *= 10;
  return std::to_string(low + Below(rng, 9 * low));
}

std::string Uuid(Rng& rng) {  // a version-4 UUID's layout
  const uint64_t hi = rng(), lo = rng();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xfff, 8 + ((lo >> 62) & 3), (lo >> 48) & 0xfff, lo & 0xffffffffffff);
}

std::string Random(Kind kind, Rng& rng, Split split) {
  switch (kind) {
    case Kind::kNumbers:
      return Number(rng, 7);
    case Kind::kUuids:
      return Uuid(rng);
    case Kind::kWords:
      break;
  }
  const auto adjectives = KeyAdjectives(split);
  const auto nouns = KeyNouns();
  return fmt::format("{}-{}", adjectives[Below(rng, adjectives.size())],
                     nouns[Below(rng, nouns.size())]);
}

std::string_view KindName(Kind kind) {
  return kind == Kind::kNumbers ? "numbers" : kind == Kind::kUuids ? "uuids" : "words";
}

// The depth RULER draws: one of 40 evenly spaced percents from 0 to 100.
double DrawDepth(Rng& rng) { return std::round(static_cast<double>(Below(rng, 40)) * 100.0 / 39); }

// Where a needle at `depth` percent goes among n units.
size_t AtDepth(double depth, size_t n) {
  return std::min(n, static_cast<size_t>(std::llround(depth / 100.0 * static_cast<double>(n))));
}

// The embedded essay's words, split once.
const std::vector<std::string_view>& EmbeddedEssayWords() {
  static const std::vector<std::string_view> words = EssayWordsOf(EssayText());
  return words;
}

// The first n words of the essay (repeated when it is shorter), cut into
// sentences after '.', '!' or '?'.
std::vector<std::string> EssaySentences(const std::vector<std::string_view>& words, size_t n) {
  std::vector<std::string> sentences(1);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view w = words[i % words.size()];
    std::string& s = sentences.back();
    if (!s.empty()) s += ' ';
    s += w;
    const char last = w.back();
    if (last == '.' || last == '!' || last == '?') sentences.emplace_back();
  }
  if (sentences.back().empty()) sentences.pop_back();
  return sentences;
}

// Inserts `needles` into `units`: the first at `depth` percent of them, the
// others at random places; relative order among the units kept.
void Insert(std::vector<std::string>& units, const std::vector<std::string>& needles, double depth,
            Rng& rng) {
  const size_t n = units.size();
  std::vector<std::pair<size_t, size_t>> at;  // (position among the units, needle)
  for (size_t i = 0; i < needles.size(); ++i) {
    at.emplace_back(i == 0 ? AtDepth(depth, n) : Below(rng, n + 1), i);
  }
  std::stable_sort(at.begin(), at.end());
  for (size_t k = at.size(); k-- > 0;) {
    units.insert(units.begin() + static_cast<std::ptrdiff_t>(at[k].first), needles[at[k].second]);
  }
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// "a", "a, and b", "a, b, and c": RULER's list of queried keys.
std::string JoinQueries(const std::vector<std::string>& q) {
  if (q.size() == 1) return q[0];
  std::vector<std::string> head(q.begin(), q.end() - 1);
  return Join(head, ", ") + ", and " + q.back();
}

struct Built {
  std::string context, question;
  std::vector<std::string> outputs;
  double depth = -1;
};

Built Niah(const TaskSpec& t, size_t n, const ItemOptions& o) {
  Rng rng(o.seed);
  const double depth = o.depth >= 0 ? o.depth : DrawDepth(rng);
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values(t.num_keys);
  for (int32_t k = 0; k < t.num_keys; ++k) {
    std::string key;
    do {
      key = Random(t.key, rng, o.split);
    } while (std::find(keys.begin(), keys.end(), key) != keys.end());
    keys.push_back(key);
    for (int32_t v = 0; v < t.num_values; ++v) values[k].push_back(Random(t.value, rng, o.split));
  }
  const std::string_view type = KindName(t.value);
  auto needle = [&](const std::string& key, const std::string& value) {
    return fmt::format("One of the special magic {} for {} is: {}.", type, key, value);
  };
  // The keys asked for, the first of them the one placed at `depth`.
  std::vector<size_t> order(t.num_keys);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::string> needles;
  for (const size_t k : order) {
    for (const std::string& v : values[k]) needles.push_back(needle(keys[k], v));
  }
  Built b;
  std::vector<std::string> queries;
  for (int32_t q = 0; q < t.num_queries; ++q) {
    queries.push_back(keys[order[q]]);
    for (const std::string& v : values[order[q]]) b.outputs.push_back(v);
  }
  std::string haystack;
  if (t.haystack == Haystack::kEssay) {
    std::vector<std::string> sentences =
        EssaySentences(o.essay.empty() ? EmbeddedEssayWords() : EssayWordsOf(o.essay), n);
    Insert(sentences, needles, depth, rng);
    haystack = Join(sentences, " ");
  } else {
    // Distractor needles never use a real key: that would make two answers.
    auto distractor = [&] {
      std::string key;
      do {
        key = Random(t.key, rng, o.split);
      } while (std::find(keys.begin(), keys.end(), key) != keys.end());
      return needle(key, Random(t.value, rng, o.split));
    };
    std::vector<std::string> lines;
    for (size_t i = 0; i < n; ++i) {
      lines.push_back(t.haystack == Haystack::kNoise ? std::string(kNoise) : distractor());
    }
    Insert(lines, needles, depth, rng);
    haystack = Join(lines, "\n");
  }
  b.depth = depth;
  // RULER's template, in the singular when one value is asked for.
  const bool one = t.num_queries * t.num_values == 1;
  const std::string noun(one ? type.substr(0, type.size() - 1) : type);
  const std::string query = JoinQueries(queries);
  b.context = fmt::format(
      "{} special magic {} {} hidden within the following text. Make sure to memorize it. I will "
      "quiz you about the {} afterwards.\n{}\n",
      one ? "A" : "Some", noun, one ? "is" : "are", noun, haystack);
  b.question = fmt::format(
      "What {} special magic {} for {} mentioned in the provided text? The special magic {} for "
      "{} mentioned in the provided text {}",
      one ? "is the" : "are all the", noun, query, noun, query, one ? "is" : "are");
  return b;
}

std::string Variable(Rng& rng, int letters) {
  std::string v;
  for (int i = 0; i < letters; ++i) v += static_cast<char>('A' + Below(rng, 26));
  return v;
}

// One vt prompt (instruction, noise with the chain, question, answer prefix)
// and its variables.
std::pair<std::string, std::vector<std::string>> VtPrompt(size_t n, int letters,
                                                          const std::string& value, double depth,
                                                          Rng& rng, std::string* question) {
  constexpr int kHops = 4;
  std::vector<std::string> vars;
  while (vars.size() < kHops + 1) {
    std::string v = Variable(rng, letters);
    if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(std::move(v));
  }
  std::vector<std::string> chain = {fmt::format("VAR {} = {}", vars[0], value)};
  for (int j = 0; j < kHops; ++j) chain.push_back(fmt::format("VAR {} = VAR {}", vars[j + 1], vars[j]));
  // The chain keeps its order: its first line at `depth`, the rest after it.
  std::vector<size_t> at = {AtDepth(depth, n)};
  for (size_t j = 1; j < chain.size(); ++j) at.push_back(at[0] + Below(rng, n - at[0] + 1));
  std::sort(at.begin(), at.end());
  std::vector<std::string> lines(n, std::string(kNoise));
  for (size_t j = chain.size(); j-- > 0;) {
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at[j]), chain[j]);
  }
  std::string context =
      "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n" +
      Join(lines, "\n") + "\n";
  *question = fmt::format(
      "Question: Find all variables that are assigned the value {} in the text above. Answer: "
      "According to the chain(s) of variable assignment in the text above, {} variables are "
      "assigned the value {}, they are: ",
      value, kHops + 1, value);
  return {std::move(context), std::move(vars)};
}

Built VariableTracking(size_t n, const ItemOptions& o) {
  Rng rng(o.seed);
  const double depth = o.depth >= 0 ? o.depth : DrawDepth(rng);
  // A solved example first, as RULER gives one: three-letter variables.
  std::string example_question;
  auto [example, example_vars] =
      VtPrompt(5, 3, Number(rng, 5), DrawDepth(rng), rng, &example_question);
  Built b;
  b.depth = depth;
  auto [context, vars] = VtPrompt(n, 5, Number(rng, 5), depth, rng, &b.question);
  b.context = example + example_question + Join(example_vars, " ") + "\n" + context;
  b.outputs = vars;
  return b;
}

// cwe: `common` words repeated `common_repeats` times among `uncommon`
// ones repeated `uncommon_repeats`, numbered.
std::string NumberedList(const std::vector<std::string>& common,
                         const std::vector<std::string>& uncommon, int common_repeats,
                         int uncommon_repeats, Rng& rng) {
  std::vector<std::string> list;
  for (int r = 0; r < common_repeats; ++r) list.insert(list.end(), common.begin(), common.end());
  for (int r = 0; r < uncommon_repeats; ++r) {
    list.insert(list.end(), uncommon.begin(), uncommon.end());
  }
  std::shuffle(list.begin(), list.end(), rng);
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) out += fmt::format("{}{}. {}", i ? " " : "", i + 1, list[i]);
  return out;
}

Built CommonWords(size_t n, int64_t length, const ItemOptions& o) {
  constexpr size_t kCommon = 10;
  constexpr std::string_view kIntro =
      "Below is a numbered list of words. In these words, some appear more often than others. "
      "Memorize the ones that appear most often.\n";
  constexpr std::string_view kQuestion =
      "Question: What are the 10 most common words in the above list? Answer: The top 10 words "
      "that appear most often in the list are:";
  Rng rng(o.seed);
  std::vector<std::string> words = ruler::CommonWords(o.split);
  std::shuffle(words.begin(), words.end(), rng);
  // Beyond the list: coded words, as RULER falls back to a larger list.
  while (words.size() < n + 40) {
    std::string w;
    for (int i = 0; i < 7; ++i) w += static_cast<char>('a' + Below(rng, 26));
    words.push_back(std::move(w));
  }
  // RULER's counts: fewer repeats below 4096 tokens.
  const bool short_context = length < 4096;
  const size_t example_words = short_context ? 20 : 40;
  const std::vector<std::string> example(words.end() - static_cast<std::ptrdiff_t>(example_words),
                                         words.end());
  words.resize(n);
  auto sample = [&](const std::vector<std::string>& w, int common_repeats, int uncommon_repeats,
                    std::vector<std::string>* answer) {
    const std::vector<std::string> common(w.begin(), w.begin() + kCommon);
    const std::vector<std::string> uncommon(w.begin() + kCommon, w.end());
    *answer = common;
    return NumberedList(common, uncommon, common_repeats, uncommon_repeats, rng);
  };
  std::vector<std::string> example_answer;
  const std::string example_list =
      sample(example, short_context ? 3 : 10, short_context ? 1 : 3, &example_answer);
  std::string numbered_answer;
  for (size_t i = 0; i < example_answer.size(); ++i) {
    numbered_answer += fmt::format(" {}. {}", i + 1, example_answer[i]);
  }
  Built b;
  const std::string list = sample(words, short_context ? 6 : 30, short_context ? 1 : 3, &b.outputs);
  b.context = fmt::format("{}{}\n{}{}\n{}{}\n", kIntro, example_list, kQuestion, numbered_answer,
                          kIntro, list);
  b.question = std::string(kQuestion);
  return b;
}

Built FrequentWords(size_t n, int64_t length, int32_t max_tokens, const ItemOptions& o) {
  Rng rng(o.seed);
  const size_t vocab_size = static_cast<size_t>(std::max<int64_t>(10, (length - max_tokens) / 50));
  std::vector<std::string> vocab;
  while (vocab.size() < vocab_size) {
    std::string w;
    for (int i = 0; i < 6; ++i) w += static_cast<char>('a' + Below(rng, 26));
    if (std::find(vocab.begin(), vocab.end(), w) == vocab.end()) vocab.push_back(std::move(w));
  }
  vocab[0] = "...";  // the most frequent "word" is noise
  // Zipf: the k-th word n * k^-2 / zeta(2) times.
  const double zeta2 = std::numbers::pi * std::numbers::pi / 6.0;
  std::vector<std::string> text;
  for (size_t k = 0; k < vocab.size(); ++k) {
    const auto count = static_cast<size_t>(static_cast<double>(n) /
                                           (static_cast<double>((k + 1) * (k + 1)) * zeta2));
    for (size_t c = 0; c < count; ++c) text.push_back(vocab[k]);
  }
  std::shuffle(text.begin(), text.end(), rng);
  Built b;
  b.outputs = {vocab[1], vocab[2], vocab[3]};
  b.context =
      "Read the following coded text and track the frequency of each coded word. Find the three "
      "most frequently appeared coded words. " +
      Join(text, " ") + "\n";
  b.question =
      "Question: Do not provide any explanation. Please ignore the dots '....'. What are the three "
      "most frequently appeared words in the above coded text? Answer: According to the coded "
      "text above, the three most frequently appeared words are:";
  return b;
}

Built Passkey(size_t n, const ItemOptions& o) {
  Rng rng(o.seed);
  const std::string key = std::to_string(1 + Below(rng, 50000));
  const size_t at = o.depth >= 0 ? AtDepth(o.depth, n) : Below(rng, n);
  Built b;
  b.context =
      "There is an important info hidden inside a lot of irrelevant text. Find it and memorize "
      "them. I will quiz you about the important information there.";
  for (size_t i = 0; i <= n; ++i) {
    if (i == at) b.context += fmt::format(" The pass key is {0}. Remember it. {0} is the pass key.", key);
    if (i < n) b.context += fmt::format(" {}", kNoise);
  }
  b.question = " What is the pass key? The pass key is";
  b.outputs = {key};
  b.depth = n ? 100.0 * static_cast<double>(at) / static_cast<double>(n) : 0.0;
  return b;
}

Built Build(const TaskSpec& t, size_t n, const ItemOptions& o) {
  switch (t.family) {
    case Family::kNiah:
      return Niah(t, n, o);
    case Family::kVariableTracking:
      return VariableTracking(n, o);
    case Family::kCommonWords:
      return CommonWords(n, o.length, o);
    case Family::kFrequentWords:
      return FrequentWords(n, o.length, t.max_tokens, o);
    case Family::kPasskey:
      return Passkey(n, o);
  }
  return {};
}

// The fewest haystack units an item has: cwe needs its 10 common words.
size_t MinUnits(const TaskSpec& t) { return t.family == Family::kCommonWords ? 11 : 1; }

}  // namespace

std::vector<std::string_view> EssayWordsOf(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::span<const TaskSpec> AllTasks() { return kTasks; }

Result<const TaskSpec*> FindTask(std::string_view name) {
  std::string names;
  for (const TaskSpec& t : kTasks) {
    if (t.name == name) return &t;
    names += names.empty() ? std::string(t.name) : ", " + std::string(t.name);
  }
  return Status::Error(fmt::format("unknown task '{}' (tasks: {})", name, names));
}

Result<Item> MakeItem(const TaskSpec& task, const Tokenizer& tokenizer,
                      const ItemOptions& options) {
  if (!options.essay.empty() && EssayWordsOf(options.essay).size() < kMinEssayWords) {
    return Status::Error(fmt::format("the essay haystack has {} words; it needs at least {}",
                                     EssayWordsOf(options.essay).size(), kMinEssayWords));
  }
  auto tokens = [&](const Built& b) {
    return static_cast<int64_t>(tokenizer.Encode(b.context + b.question, true).size());
  };
  const int64_t room = options.length - task.max_tokens;  // for the prompt
  const size_t lo_units = MinUnits(task);
  Built smallest = Build(task, lo_units, options);
  if (tokens(smallest) > room) {
    return Status::Error(fmt::format(
        "a {}-token item of task {} cannot be made: its prompt alone takes {} tokens and its "
        "answer {}",
        options.length, task.name, tokens(smallest), task.max_tokens));
  }
  // The most haystack that fits: grow an upper bound, then bisect.
  size_t lo = lo_units, hi = lo_units * 2;
  while (tokens(Build(task, hi, options)) <= room) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (tokens(Build(task, mid, options)) <= room ? lo : hi) = mid;
  }
  Built b = Build(task, lo, options);
  Item item;
  item.task = std::string(task.name);
  item.n_tokens = tokens(b);
  item.context = std::move(b.context);
  item.question = std::move(b.question);
  item.outputs = std::move(b.outputs);
  item.max_tokens = task.max_tokens;
  item.length = options.length;
  item.depth = b.depth;
  return item;
}

double Score(std::string_view answer, std::span<const std::string> outputs) {
  if (outputs.empty()) return 0.0;
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string a = lower(answer);
  size_t found = 0;
  for (const std::string& o : outputs) found += a.find(lower(o)) != std::string::npos ? 1 : 0;
  return static_cast<double>(found) / static_cast<double>(outputs.size());
}

}  // namespace h2o::ruler
