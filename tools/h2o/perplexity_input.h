// What `h2o perplexity` scores: the token streams of its input files, or,
// in the windowed mode, llama-perplexity's windows of the whole input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"

namespace h2o::cli {

struct Stream {
  std::string name;  // "story.txt#2", "ids.txt:3", "window 4"
  std::vector<int32_t> ids;
};

// Streaming mode: each text document (split at <|endoftext|>, BOS first)
// and each non-empty line of each token file is one stream.
Result<std::vector<Stream>> ReadStreams(const std::string& text_file,
                                        const std::vector<std::string>& token_files,
                                        const Model& model);

// Windowed mode: the whole text file tokenized as one sequence (BOS first
// when the vocabulary adds one; <|endoftext|> is plain text, as
// llama-perplexity reads it), or every token file's lines joined in order,
// split by SplitWindows into n_ctx-token windows. Errors: no full window.
Result<std::vector<Stream>> ReadWindows(const std::string& text_file,
                                        const std::vector<std::string>& token_files,
                                        const Model& model, int32_t n_ctx);

}  // namespace h2o::cli
