#include "eval/ruler/words.h"

#include <array>
#include <cctype>
#include <string>
#include <unordered_set>

#include "eval/ruler/essay_text.h"

namespace h2o::ruler {
namespace {

// Short, common English adjectives and concrete nouns: every pair reads as
// a plausible name and tokenizes into a few pieces in any vocabulary.
constexpr std::string_view kAdjectives[] = {
    "able", "absent", "acidic", "agile", "alert", "amber", "ample", "ancient", "angry", "arctic",
    "ashen", "awake", "bald", "bare", "bitter", "blank", "bold", "brave", "brief", "bright",
    "brisk", "broad", "brown", "busy", "calm", "candid", "careful", "cheap", "chilly", "civil",
    "clever", "cloudy", "coarse", "cold", "cosmic", "crisp", "cruel", "curly", "damp", "dark",
    "deep", "dense", "dizzy", "dry", "dull", "dusty", "eager", "early", "easy", "elder", "empty",
    "equal", "even", "exact", "faint", "fair", "fancy", "fast", "fierce", "final", "firm", "flat",
    "fond", "formal", "frail", "free", "fresh", "frozen", "full", "fuzzy", "gentle", "giant",
    "glad", "gloomy", "golden", "grand", "great", "green", "grim", "hairy", "happy", "hard",
    "harsh", "hasty", "heavy", "hidden", "hollow", "honest", "huge", "humble", "icy", "idle",
    "jolly", "keen", "kind", "large", "lazy", "lean", "light", "little", "lively", "lone", "loud",
    "lucky", "mad", "mellow", "mild", "misty", "modest", "moist", "narrow", "neat", "nervous",
    "noble", "odd", "old", "pale", "plain", "polite", "proud", "quick", "quiet", "rapid", "rare",
    "raw", "ready", "rich", "rigid", "ripe", "rough", "round", "royal", "rusty", "sad", "safe",
    "salty", "sharp", "shiny", "short", "shy", "silent", "silky", "simple", "sleepy", "slim",
    "slow", "small", "smooth", "soft", "solid", "sour", "spare", "stale", "steep", "stiff",
    "stormy", "strong", "sunny", "sweet", "swift", "tall", "tame", "tender", "thick", "thin",
    "tidy", "tiny", "tough", "vast", "warm", "weak", "wet", "wide", "wild", "windy", "wise",
    "witty", "young", "zealous",
};
constexpr std::string_view kNouns[] = {
    "acorn", "anchor", "apple", "arrow", "attic", "badge", "bakery", "banner", "barrel", "basket",
    "beacon", "bell", "bench", "berry", "blanket", "boat", "bottle", "bridge", "bucket", "button",
    "cabin", "camel", "candle", "canoe", "canyon", "carpet", "castle", "cellar", "chair",
    "chimney", "circle", "cliff", "clock", "cloud", "coat", "comet", "compass", "copper",
    "cottage", "crown", "crystal", "cup", "curtain", "desk", "diamond", "dolphin", "door",
    "dragon", "drum", "eagle", "engine", "falcon", "feather", "fence", "field", "flag", "flute",
    "forest", "fountain", "garden", "gate", "glacier", "glove", "goat", "harbor", "harp", "helmet",
    "hill", "honey", "horse", "island", "jacket", "jewel", "kettle", "kite", "ladder", "lake",
    "lamp", "lantern", "leaf", "lemon", "letter", "lighthouse", "lily", "lion", "magnet", "maple",
    "marble", "meadow", "mirror", "monkey", "moon", "mountain", "needle", "nest", "ocean",
    "orange", "orchard", "owl", "palace", "paper", "parrot", "pebble", "pencil", "pepper", "piano",
    "pillow", "planet", "pocket", "pond", "puzzle", "quilt", "rabbit", "rainbow", "river", "robin",
    "rocket", "saddle", "sail", "shell", "ship", "shovel", "silver", "sparrow", "spoon", "spring",
    "stable", "star", "stone", "storm", "sugar", "summit", "swan", "table", "temple", "thistle",
    "thunder", "tiger", "tower", "trumpet", "tunnel", "turtle", "umbrella", "valley", "velvet",
    "violin", "wagon", "wallet", "whale", "whistle", "window", "wizard", "wolf", "yarn",
};
constexpr size_t kEvalAdjectives = std::size(kAdjectives) / 2;

}  // namespace

std::span<const std::string_view> KeyAdjectives(Split split) {
  const std::span<const std::string_view> all(kAdjectives);
  return split == Split::kEval ? all.first(kEvalAdjectives) : all.subspan(kEvalAdjectives);
}

std::span<const std::string_view> KeyNouns() { return kNouns; }

std::string_view EssayText() { return EmbeddedEssay(); }

const std::vector<std::string>& CommonWords(Split split) {
  static const std::array<std::vector<std::string>, 2> lists = [] {
    std::array<std::vector<std::string>, 2> out;
    std::unordered_set<std::string> seen;
    std::string word;
    const std::string_view text = EssayText();
    for (size_t i = 0; i <= text.size(); ++i) {
      const bool letter = i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]));
      if (letter) {
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
        continue;
      }
      if (word.size() >= 4 && seen.insert(word).second) out[seen.size() % 2].push_back(word);
      word.clear();
    }
    return out;
  }();
  return lists[split == Split::kEval ? 0 : 1];
}

}  // namespace h2o::ruler
