// What llama-server's clients ask besides completions: POST /tokenize and
// /detokenize (its request and response shapes), GET /props (the server's
// settings), GET /slots (the running requests) and the model's entry in
// GET /v1/models and /v1/models/{id}. Bodies in, bodies out; nothing here
// touches the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/scheduler.h"
#include "server/api_request.h"
#include "tokenizer/tokenizer.h"

namespace h2o::server {

// {"content": TEXT, "add_special": false, "parse_special": true,
//  "with_pieces": false} -> {"tokens": [ids]}, or with pieces
// [{"id", "piece"}] (a piece that is not whole UTF-8 goes as its bytes).
// Special tokens written in the text are always parsed (parse_special:
// false is a 400 naming it).
std::optional<ApiError> TokenizeBody(std::string_view body, const Tokenizer& tokenizer,
                                     std::string& out);

// {"tokens": [ids]} -> {"content": TEXT}; special tokens as spelled.
std::optional<ApiError> DetokenizeBody(std::string_view body, const Tokenizer& tokenizer,
                                       std::string& out);

struct ServerProps {
  std::string model_id;
  std::string model_path;
  std::string build_info;
  std::string chat_template;  // its name; empty: none
  std::string default_kv;     // --kv as given
  int32_t n_ctx = 0;
  int32_t n_ctx_train = 0;
  int32_t total_slots = 0;  // --parallel; 0: as many as the KV memory holds
  int64_t default_max_tokens = 0;
  size_t kv_memory_bytes = 0;
  size_t prompt_cache_bytes = 0;
  int32_t n_threads = 0;
  int32_t n_vocab = 0;
  int32_t n_layer = 0;
};

std::string PropsBody(const ServerProps& props);

// The running requests, oldest first: an array as llama-server's /slots,
// each with its id, context, where it is, and its cache's policy and bytes.
std::string SlotsBody(const std::vector<SlotInfo>& slots);

// One model's object in /v1/models (OpenAI's fields, and llama-server's
// "meta" with the shape).
std::string ModelObject(const ServerProps& props);
std::string ModelListBody(const ServerProps& props);

}  // namespace h2o::server
