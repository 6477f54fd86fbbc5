// Requests from the network, as bytes. Byte 0 chooses:
//   bit 0: the endpoint a body goes to (completions or chat);
//   bit 1: what the rest is: a request body -> ParseCompletionRequest, or
//          whole HTTP/1.1 requests (pipelined, any encoding) fed to a
//          RequestReader under small limits, bits 2-7 the size of each
//          piece fed, and every complete request's body then parsed.
// Every error must serialize to a JSON body a client can parse, and the
// reader must hold no more memory than its limits allow, keep no request
// beyond them, and refuse only with the statuses it documents.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_request.h"
#include "server/http_request.h"

namespace {

using h2o::server::HttpLimits;
using h2o::server::HttpRequest;
using h2o::server::RequestReader;

void ParseBody(std::string_view body, bool chat) {
  h2o::server::CompletionParams params;
  const auto error = h2o::server::ParseCompletionRequest(body, chat, params);
  if (!error) return;
  if (error->status < 400 || error->status > 599) std::abort();
  // Invalid UTF-8 in a message must not make the error body unparseable.
  if (!nlohmann::json::accept(h2o::server::ErrorBody(*error))) std::abort();
}

void ReadHttp(std::string_view bytes, bool chat, size_t piece) {
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_request_line = 256;
  limits.max_header_count = 8;
  limits.max_body_bytes = 2048;
  // The buffer (at most 16 KiB or the head limit), a body, what strings add.
  const size_t bound = 2 * (16 * 1024 + limits.max_header_bytes + limits.max_body_bytes);
  RequestReader reader(limits);
  while (!bytes.empty()) {
    const size_t taken = reader.Feed(bytes.substr(0, piece));
    bytes.remove_prefix(taken);
    if (reader.held_bytes() > bound) std::abort();
    while (reader.complete()) {
      const HttpRequest request = reader.TakeRequest();
      if (request.body.size() > limits.max_body_bytes) std::abort();
      if (request.headers.size() > static_cast<size_t>(limits.max_header_count)) std::abort();
      if (request.path.size() > limits.max_request_line) std::abort();
      (void)request.QueryParam("layer");
      if (!request.body.empty()) ParseBody(request.body, chat);
    }
    if (const auto& refusal = reader.refusal()) {
      switch (refusal->status) {
        case 400: case 413: case 414: case 415: case 431: return;
        default: std::abort();
      }
    }
    if (taken == 0) return;  // the buffer is full of a request that cannot end
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool chat = (data[0] & 1) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 2) == 0) {
    ParseBody(rest, chat);
  } else {
    ReadHttp(rest, chat, size_t{1} + (data[0] >> 2) * 7);
  }
  return 0;
}
