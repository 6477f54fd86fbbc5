// Feeding the same tokens to several sequences at once: the loop every
// log-likelihood scorer (multiple choice, scored requests, perplexity)
// shares. Each chunk of the sequences' common max_chunk goes to all of them
// in one forward pass, so the weights are read once per chunk for every
// policy, and eviction runs exactly as `--chunk` says.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/status.h"
#include "runtime/engine.h"
#include "runtime/sequence.h"

namespace h2o {

// Called after each chunk with its place in the ids; the sequences then
// hold its logits (see FeedLockstep).
using ChunkVisitor = std::function<void(size_t begin, size_t len)>;

// Appends `ids` to what every sequence already holds, one chunk of each per
// forward pass. With kAllTokens every chunk's tokens get logits, row t of
// each sequence's logits() following ids[begin + t]; with kLastToken only
// the last chunk's last token gets them (last_logits()). Errors: sequences
// with different max_chunk (before anything is fed), or Engine::Forward's
// (a bad id, a full context, more rows than the engine takes); the
// sequences then hold the chunks fed before it.
Status FeedLockstep(Engine& engine, std::span<Sequence* const> sequences,
                    std::span<const int32_t> ids, LogitsFor which,
                    const ChunkVisitor& after_chunk = {});

}  // namespace h2o
