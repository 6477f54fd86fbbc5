// llama.cpp's spellings that CLI11 cannot declare: multi-letter flags with
// one dash (-ctk, -ctv, -cnv; CLI11 would read "-ctk" as "-c tk") and
// `generate -cnv`, which llama.cpp's main turns into a conversation. They
// are rewritten before parsing into the names h2o declares.
#pragma once

#include <string>
#include <vector>

namespace h2o::cli {

// args[0] is the program. -ctk/-ctv (also "-ctk=X") become
// --cache-type-k/--cache-type-v, -cnv becomes --conversation; and
// `generate ... --conversation` becomes `chat ...` with -p/--prompt (the
// system prompt in llama.cpp's conversation mode) as --system.
std::vector<std::string> RewriteLlamaAliases(std::vector<std::string> args);

}  // namespace h2o::cli
