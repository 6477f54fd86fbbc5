// Log-probabilities from logits, in double precision: what a generation
// reports per token and what every scorer sums.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace h2o {

// log sum exp(logits): log softmax(logits)[i] = logits[i] - LogSumExp(logits).
double LogSumExp(std::span<const float> logits);
// -log softmax(logits)[target].
double NegLogSoftmax(std::span<const float> logits, int32_t target);
// log softmax(logits) into `out` (resized).
void LogSoftmax(std::span<const float> logits, std::vector<double>& out);

}  // namespace h2o
