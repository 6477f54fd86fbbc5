#include "llama_aliases.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

namespace h2o::cli {
namespace {

// `arg` with its name replaced when it is `from` or "`from`=value".
std::string Rename(const std::string& arg, std::string_view from, std::string_view to) {
  if (arg == from) return std::string(to);
  if (arg.size() > from.size() && arg.compare(0, from.size(), from) == 0 &&
      arg[from.size()] == '=') {
    return std::string(to) + arg.substr(from.size());
  }
  return arg;
}

enum class Takes {
  kNothing,
  kValue,
  kSwitch,  // -fa: a bare flag in older llama.cpp, -fa on|off|auto in newer
};

struct IgnoredFlag {
  std::array<std::string_view, 3> names;  // unused names empty
  Takes takes;
  std::string_view why;
};

constexpr std::string_view kCpuOnly = "h2o runs on the CPU";

// llama.cpp's flags (b7847's names) that have no counterpart here.
constexpr IgnoredFlag kIgnoredLlamaFlags[] = {
    {{"-ngl", "--gpu-layers", "--n-gpu-layers"}, Takes::kValue, kCpuOnly},
    {{"-sm", "--split-mode"}, Takes::kValue, kCpuOnly},
    {{"-mg", "--main-gpu"}, Takes::kValue, kCpuOnly},
    {{"-ts", "--tensor-split"}, Takes::kValue, kCpuOnly},
    {{"-dev", "--device"}, Takes::kValue, kCpuOnly},
    {{"-nkvo", "--no-kv-offload"}, Takes::kNothing, kCpuOnly},
    {{"-fa", "--flash-attn"}, Takes::kSwitch,
     "h2o has one attention kernel, which streams over the cache and reports what the policy "
     "scores"},
    {{"-ub", "--ubatch-size"}, Takes::kValue,
     "a prompt is fed in chunks of -b/--batch-size tokens, with no smaller micro-batch"},
    {{"-tb", "--threads-batch"}, Takes::kValue, "-t/--threads serves prompts and generation alike"},
    {{"--mlock"}, Takes::kNothing, "the model file is mapped and not locked in memory"},
    {{"--no-mmap"}, Takes::kNothing, "the model file is always mapped"},
    {{"--numa"}, Takes::kValue, "threads are not placed by NUMA node"},
    {{"-cb", "--cont-batching"}, Takes::kNothing, "the server always batches continuously"},
    {{"--jinja"}, Takes::kNothing,
     "chat templates are the built-in ones named by the model or --chat-template"},
};

const IgnoredFlag* FindIgnored(std::string_view arg, std::string_view* name) {
  for (const IgnoredFlag& flag : kIgnoredLlamaFlags) {
    for (std::string_view n : flag.names) {
      if (n.empty()) continue;
      if (arg == n || (arg.size() > n.size() && arg.substr(0, n.size()) == n &&
                       arg[n.size()] == '=')) {
        *name = n;
        return &flag;
      }
    }
  }
  return nullptr;
}

bool IsSwitchValue(std::string_view v) {
  for (std::string_view word : {"on", "off", "auto", "1", "0", "true", "false"}) {
    if (v == word) return true;
  }
  return false;
}

}  // namespace

RewrittenArgs RewriteLlamaAliases(std::vector<std::string> args) {
  RewrittenArgs out;
  out.args.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = std::move(args[i]);
    if (i == 0 || arg == "--") {  // after "--" nothing is a flag
      out.args.push_back(std::move(arg));
      if (i > 0) {
        for (++i; i < args.size(); ++i) out.args.push_back(std::move(args[i]));
      }
      continue;
    }
    std::string_view name;
    if (const IgnoredFlag* flag = FindIgnored(arg, &name)) {
      std::string written = arg;
      const bool inline_value = arg.size() > name.size();
      const bool next_is_value =
          !inline_value && i + 1 < args.size() &&
          (flag->takes == Takes::kValue ||
           (flag->takes == Takes::kSwitch && IsSwitchValue(args[i + 1])));
      if (next_is_value) written += " " + args[++i];
      out.warnings.push_back(fmt::format("{} ignored: {} (a llama.cpp flag)", written, flag->why));
      continue;
    }
    arg = Rename(arg, "-ctk", "--cache-type-k");
    arg = Rename(arg, "-ctv", "--cache-type-v");
    arg = Rename(arg, "-cnv", "--conversation");
    arg = Rename(arg, "-np", "--parallel");
    arg = Rename(arg, "-jf", "--json-schema-file");
    out.args.push_back(std::move(arg));
  }
  std::vector<std::string>& a = out.args;
  const auto conversation = std::find(a.begin(), a.end(), "--conversation");
  if (a.size() < 2 || a[1] != "generate" || conversation == a.end()) return out;
  a.erase(conversation);
  a[1] = "chat";
  for (size_t i = 2; i < a.size(); ++i) {
    if (a[i] == "--") break;
    a[i] = Rename(a[i], "-p", "--system");
    a[i] = Rename(a[i], "--prompt", "--system");
  }
  return out;
}

}  // namespace h2o::cli
