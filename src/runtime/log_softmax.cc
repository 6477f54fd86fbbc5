#include "runtime/log_softmax.h"

#include <algorithm>
#include <cmath>

namespace h2o {

double LogSumExp(std::span<const float> logits) {
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
  return max_logit + std::log(sum);
}

double NegLogSoftmax(std::span<const float> logits, int32_t target) {
  return LogSumExp(logits) - static_cast<double>(logits[target]);
}

void LogSoftmax(std::span<const float> logits, std::vector<double>& out) {
  const double lse = LogSumExp(logits);
  out.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
}

}  // namespace h2o
