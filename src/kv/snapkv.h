// SnapKV: Li et al., "SnapKV: LLM Knows What You are Looking for Before
// Generation" (2024, arXiv 2404.14469). The attention the last prompt
// queries (the "observation window") pay to the earlier tokens predicts
// what generation will attend to; SnapKV keeps, per head, the earlier
// tokens that window attends to most (after max-pooling the attention over
// neighbouring positions, so a selected token keeps some context) plus the
// window itself, once, when the prompt has been read.
//
// As built here (--kv snapkv:budget=B,window=W,kernel=K), per (layer, KV
// head), with B > W >= 1 and K odd:
//   - Observation: the policy's observation_window() is W, so each forward
//     pass clears the head's scores and only its last min(W, n) queries (n:
//     the pass's tokens) add their attention to them, summed over the
//     group's query heads (GQA: one token set per KV head).
//   - Selection happens once, at the head's first eviction: the first time
//     a pass leaves it over budget. Candidates are the tokens outside the
//     window (the W highest positions); each is ranked by the largest score
//     among the candidates within K / 2 positions of it (max-pooling with
//     kernel K, SnapKV's default pooling; K = 1 is none), and the lowest
//     ranked are evicted until B remain: the B - W best plus the window.
//     Ties go to the lowest position.
//   - After that (decoding, and any later prompt chunk), the window slides:
//     each eviction removes the newest token outside the W highest
//     positions, so the head keeps the B - W selected tokens and the last
//     W positions (the paper lets the cache grow while decoding; a fixed
//     budget keeps memory flat).
// So with the whole prompt in one pass (generate's default) the
// observation window is the last W prompt queries, as in the paper. A
// prompt fed in chunks (--chunk N, the server's --batch-tokens) selects at
// the end of the first chunk that overflows the budget, observing that
// chunk's last min(W, N) queries, and later chunks only slide the window;
// one token at a time (perplexity's default) the window is the single
// query that first overflows it. A prompt no longer
// than the budget is not compressed at all: the selection then happens
// while decoding, with one query.
//
// Whether a head has evicted before is read from its metadata: positions
// 0..newest_pos are all present until the first eviction (every engine
// path appends every position from 0). The selection's victims are ranked
// once and handed out one ChooseVictim call at a time (the cache evicts
// one victim per call); nothing else is kept between calls.
// Position semantics: keys keep their original RoPE position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kv/kv_policy.h"

namespace h2o {

class SnapKvPolicy final : public EvictionPolicy {
 public:
  // Requires 1 <= window < budget and kernel odd >= 1.
  SnapKvPolicy(int32_t budget, int32_t window, int32_t kernel);
  std::string name() const override { return "snapkv"; }
  int32_t budget() const override { return budget_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool has_state() const override { return true; }  // the selection in progress
  bool needs_scores() const override { return true; }
  int32_t observation_window() const override { return window_; }

  int32_t window() const { return window_; }
  int32_t kernel() const { return kernel_; }

 private:
  // Ranks the selection's candidates into order_ (slots, lowest first).
  void RankCandidates(const HeadMetadata& meta, int64_t window_start);

  int32_t budget_;
  int32_t window_;
  int32_t kernel_;
  // The selection being handed out: for the head whose positions array is
  // `pending_pos_`, expected to hold `pending_count_` tokens at the next
  // call, order_[next_] is the next victim.
  const int32_t* pending_pos_ = nullptr;
  int32_t pending_count_ = -1;
  size_t next_ = 0;
  std::vector<int32_t> order_;         // candidate slots, victims first
  std::vector<int32_t> order_pos_;     // their positions, to check the slot still holds it
  std::vector<int32_t> slot_of_pos_;   // scratch: [window_start] slot of each position
  std::vector<double> pooled_;         // scratch: [window_start] pooled score by position
  std::vector<int32_t> queue_;         // scratch: sliding-maximum queue
};

}  // namespace h2o
