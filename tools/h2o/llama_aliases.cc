#include "llama_aliases.h"

#include <algorithm>
#include <string_view>

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

}  // namespace

std::vector<std::string> RewriteLlamaAliases(std::vector<std::string> args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;  // what follows is not a flag
    args[i] = Rename(args[i], "-ctk", "--cache-type-k");
    args[i] = Rename(args[i], "-ctv", "--cache-type-v");
    args[i] = Rename(args[i], "-cnv", "--conversation");
  }
  const auto conversation = std::find(args.begin(), args.end(), "--conversation");
  if (args.size() < 2 || args[1] != "generate" || conversation == args.end()) return args;
  args.erase(conversation);
  args[1] = "chat";
  for (size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--") break;
    args[i] = Rename(args[i], "-p", "--system");
    args[i] = Rename(args[i], "--prompt", "--system");
  }
  return args;
}

}  // namespace h2o::cli
