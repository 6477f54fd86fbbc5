#include "eval/token_feed.h"

#include <algorithm>
#include <vector>

namespace h2o {

Status FeedLockstep(Engine& engine, std::span<Sequence* const> sequences,
                    std::span<const int32_t> ids, LogitsFor which, const ChunkVisitor& after_chunk) {
  H2O_CHECK(!sequences.empty());
  const size_t chunk = static_cast<size_t>(sequences[0]->max_chunk());
  for (const Sequence* s : sequences) {
    if (static_cast<size_t>(s->max_chunk()) != chunk) {
      return Status::Error("sequences fed in lockstep must share max_chunk");
    }
  }
  std::vector<BatchItem> batch(sequences.size());
  for (size_t begin = 0; begin < ids.size(); begin += chunk) {
    const size_t len = std::min(chunk, ids.size() - begin);
    const bool logits = which == LogitsFor::kAllTokens || begin + len == ids.size();
    for (size_t i = 0; i < sequences.size(); ++i) {
      batch[i] = {sequences[i], ids.subspan(begin, len), which, logits};
    }
    H2O_RETURN_IF_ERROR(engine.Forward(batch));
    if (after_chunk) after_chunk(begin, len);
  }
  return Status::Ok();
}

}  // namespace h2o
