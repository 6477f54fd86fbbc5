#include "bench_conversation.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli_common.h"
#include "core/byte_size.h"
#include "perf/conversation.h"

namespace h2o::cli {
namespace {

nlohmann::json TurnsJson(const std::vector<ConversationTurn>& turns) {
  nlohmann::json out = nlohmann::json::array();
  for (const ConversationTurn& t : turns) {
    out.push_back({{"prompt_tokens", t.prompt_tokens},
                   {"ttft_mean_ms", t.ttft_mean_ms},
                   {"ttft_max_ms", t.ttft_max_ms},
                   {"resumed", t.resumed},
                   {"cached_tokens_mean", t.cached_tokens_mean}});
  }
  return out;
}

}  // namespace

int RunConversationMode(const ConversationModeArgs& a) {
  auto cache_ram = ParseByteSize(a.cache_ram);
  if (!cache_ram.ok()) return Fail(cache_ram.status().WithContext("--cache-ram"));
  std::vector<bool> modes;  // prompt cache on/off, off first: the baseline
  if (a.prompt_cache != "on") modes.push_back(false);
  if (a.prompt_cache != "off") modes.push_back(true);
  ConversationOptions o;
  o.users = a.users;
  o.turns = a.turns;
  o.turn_tokens = a.turn_tokens;
  o.generate = a.generate;
  o.cache_ram_bytes = *cache_ram;
  o.n_threads = a.bench.n_threads;
  o.chunk = a.bench.chunk;
  o.kv_types = a.bench.kv_types;
  o.seed = a.bench.seed;
  if (o.turns < 1) return Fail(fmt::format("--turns must be 1 or more, not {}", o.turns));
  auto model_result =
      Model::Load(a.model_path, {.repack = !a.no_repack, .n_threads = a.bench.n_threads});
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  if (Status s = CheckKvTypes(o.kv_types, model.hparams().head_dim); !s.ok()) return Fail(s);
  if (a.bench.warmup) {
    if (Status s = WarmUp(model, a.bench); !s.ok()) return Fail(s);
  }
  const std::string model_name = std::filesystem::path(a.model_path).filename().string();
  if (a.output == Output::kMarkdown) {
    std::printf(
        "%d conversations of %d turns (each message %d tokens, each answer %d; context %d), "
        "prompt cache RAM %s, %d threads\n\n",
        o.users, o.turns, o.turn_tokens, o.generate, o.context(),
        FormatBytes(static_cast<double>(o.cache_ram_bytes)).c_str(), o.n_threads);
    std::printf(
        "| model | kv | prompt cache | TTFT turn 1 ms | TTFT turn %d ms | resumed at turn %d | "
        "kept per conversation | conversations in --cache-ram | seconds |\n",
        o.turns, o.turns);
    std::printf("|---|---|---|--:|--:|--:|--:|--:|--:|\n");
    std::fflush(stdout);
  }
  RecordPrinter printer(a.output, {{"model", a.model_path},
                                   {"mode", "conversations"},
                                   {"users", o.users},
                                   {"turns", o.turns},
                                   {"turn_tokens", o.turn_tokens},
                                   {"generate", o.generate},
                                   {"context", o.context()},
                                   {"cache_ram_bytes", o.cache_ram_bytes},
                                   {"threads", o.n_threads},
                                   {"chunk", o.chunk},
                                   {"seed", o.seed}});
  for (const KvSpec& spec : a.specs) {
    for (const bool on : modes) {
      o.prompt_cache = on;
      auto r = RunConversations(model, spec, o);
      if (!r.ok()) return Fail(r.status());
      if (a.output != Output::kMarkdown) {
        printer.Add({{"kv", r->kv},
                     {"kv_resolved", r->kv_resolved},
                     {"prompt_cache", on},
                     {"turns", TurnsJson(r->turns)},
                     {"kept_bytes_per_conversation", r->kept_bytes_per_conversation},
                     {"conversations_fit", r->conversations_fit},
                     {"pool_bytes", r->pool_bytes},
                     {"pool_states", r->pool_states},
                     {"pool_evictions", r->pool_evictions},
                     {"seconds", r->seconds}});
        continue;
      }
      const std::string kv =
          r->kv_resolved == r->kv ? r->kv : fmt::format("{} (= {})", r->kv, r->kv_resolved);
      const ConversationTurn& first = r->turns.front();
      const ConversationTurn& last = r->turns.back();
      std::printf(
          "| %s | %s | %s | %.1f | %.1f | %d of %d | %s | %s | %.1f |\n", model_name.c_str(),
          kv.c_str(), on ? "on" : "off", first.ttft_mean_ms, last.ttft_mean_ms, last.resumed,
          o.users,
          on ? FormatBytes(static_cast<double>(r->kept_bytes_per_conversation)).c_str() : "-",
          on ? std::to_string(r->conversations_fit).c_str() : "-", r->seconds);
      std::fflush(stdout);
    }
  }
  printer.Finish();
  return 0;
}

}  // namespace h2o::cli
