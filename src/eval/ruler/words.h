// The words the RULER-style tasks are made of: needle keys in RULER's
// adjective-noun shape ("tricky-plan"), the common words of cwe, and the
// essay haystack, all in the binary (no downloads). Each list is split in
// two disjoint halves: evaluation items draw from one, training items
// (tools/train/) from the other, so a trained model is never evaluated on
// a key it was trained on.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace h2o::ruler {

enum class Split { kEval, kTrain };

// Adjectives and nouns for keys "adjective-noun": the evaluation split takes
// the first half of the adjectives, training the second; nouns are shared.
std::span<const std::string_view> KeyAdjectives(Split split);
std::span<const std::string_view> KeyNouns();

// The essay haystack: about 256 KiB of the public-domain English War and
// Peace (Tolstoy, Maude translation), from its first chapter on.
std::string_view EssayText();

// Distinct lowercase words of four letters or more from the essay, in
// order of first appearance; alternate ones go to each split.
const std::vector<std::string>& CommonWords(Split split);

}  // namespace h2o::ruler
