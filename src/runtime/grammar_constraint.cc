#include "runtime/grammar_constraint.h"

#include <limits>

namespace h2o {

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                                     const Tokenizer& tokenizer)
    : matcher_(std::move(grammar)) {
  pieces_.reserve(static_cast<size_t>(tokenizer.n_vocab()));
  ends_.reserve(static_cast<size_t>(tokenizer.n_vocab()));
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    pieces_.push_back(tokenizer.TokenToPiece(id));
    ends_.push_back(tokenizer.IsEndOfGeneration(id));
  }
}

bool GrammarConstraint::Mask(std::span<const float> logits, std::vector<float>& out) const {
  constexpr float kNever = -std::numeric_limits<float>::infinity();
  out.assign(logits.begin(), logits.end());
  const bool can_end = matcher_.CanEnd();
  bool any = false;
  for (size_t id = 0; id < out.size(); ++id) {
    if (out[id] == kNever) continue;  // already banned (logit bias)
    const bool allowed =
        id < pieces_.size() && (ends_[id] ? can_end : matcher_.Allows(pieces_[id]));
    if (allowed) {
      any = true;
    } else {
      out[id] = kNever;
    }
  }
  return any;
}

void GrammarConstraint::Accept(int32_t id) {
  if (!ends_[static_cast<size_t>(id)]) matcher_.Accept(pieces_[static_cast<size_t>(id)]);
}

}  // namespace h2o
