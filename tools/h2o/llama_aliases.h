// llama.cpp's spellings that CLI11 cannot declare, and its flags that mean
// nothing here. Multi-letter flags with one dash (-ctk, -ctv, -cnv, -np;
// CLI11 would read "-ctk" as "-c tk") and `generate -cnv`, which llama.cpp's
// main turns into a conversation, are rewritten into the names h2o
// declares. Flags for GPUs, memory locking and micro-batches (-ngl, -fa,
// -ub, --mlock, ...) are dropped with their values and a warning each: a
// user's llama.cpp command line runs, and says what did not apply, instead
// of failing or (worse) reading "-ngl 99" as "-n gl".
#pragma once

#include <string>
#include <vector>

namespace h2o::cli {

struct RewrittenArgs {
  std::vector<std::string> args;
  std::vector<std::string> warnings;  // one per dropped flag, for Warn
};

// args[0] is the program. -ctk/-ctv (also "-ctk=X") become
// --cache-type-k/--cache-type-v, -cnv becomes --conversation, -np
// --parallel; `generate ... --conversation` becomes `chat ...` with
// -p/--prompt (the system prompt in llama.cpp's conversation mode) as
// --system; the flags of kIgnoredLlamaFlags (llama_aliases.cc) go.
RewrittenArgs RewriteLlamaAliases(std::vector<std::string> args);

}  // namespace h2o::cli
