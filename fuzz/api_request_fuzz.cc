// A request body from the network -> CompletionParams or an ApiError.
// Byte 0 chooses the endpoint (completions or chat). Every error must
// serialize to a JSON body a client can parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool chat = (data[0] & 1) != 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  h2o::server::CompletionParams params;
  const auto error = h2o::server::ParseCompletionRequest(body, chat, params);
  if (!error) return 0;
  if (error->status < 400 || error->status > 599) std::abort();
  // Invalid UTF-8 in a message must not make the error body unparseable.
  if (!nlohmann::json::accept(h2o::server::ErrorBody(*error))) std::abort();
  return 0;
}
