// A grammar applied to sampling (the `grammar` and `response_format`
// request fields, --grammar-file, --json-schema): before each token, every
// token whose text the grammar does not allow next has its logit set to
// -inf, so the sampler chooses among the allowed ones in their relative
// probabilities; end-of-generation tokens are allowed once the text is a
// whole sentence of the grammar, and once nothing can extend it the
// generation ends.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/grammar_matcher.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

class GrammarConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const Grammar> grammar, const Tokenizer& tokenizer);

  // `logits` with every token the grammar forbids now at -inf, in `out`.
  // False when no token is allowed.
  bool Mask(std::span<const float> logits, std::vector<float>& out) const;
  // The sampled token `id`, which Mask allowed.
  void Accept(int32_t id);
  // Nothing can extend the text: the generation is complete.
  bool MustEnd() const { return matcher_.MustEnd(); }

 private:
  GrammarMatcher matcher_;
  // Per token, looked up for every token at every step: its bytes ("" for
  // control tokens) and whether it ends a generation.
  std::vector<std::string> pieces_;
  std::vector<bool> ends_;
};

}  // namespace h2o
