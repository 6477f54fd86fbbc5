#include "server/http_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <cstring>
#include <strings.h>

#include "core/strings.h"

namespace h2o::server {
namespace {

namespace http = boost::beast::http;
using boost::beast::error_code;

// Reads are at most this large; the buffer holds at most the larger of
// this and max_header_bytes.
constexpr size_t kReadBytes = 16 * 1024;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

// Beast's grammar with our limits: only what a handler reads is kept, and
// every callback that grows memory checks its bound first.
class RequestReader::Parser final : public http::basic_parser<true> {
 public:
  explicit Parser(const HttpLimits& limits) : limits_(limits) {
    header_limit(static_cast<std::uint32_t>(
        std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    body_limit(limits.max_body_bytes);
  }

  HttpRequest request;
  std::optional<HttpRefusal> refusal;
  bool request_line_seen = false;
  bool expect_continue = false;

 private:
  void Refuse(int status, std::string message, error_code& ec) {
    refusal = HttpRefusal{status, std::move(message)};
    ec = http::error::bad_value;  // any error stops the parse; refusal says why
  }

  void on_request_impl(http::verb, boost::beast::string_view method,
                       boost::beast::string_view target, int, error_code& ec) override {
    request_line_seen = true;
    if (target.size() > limits_.max_request_line) {
      Refuse(414, fmt::format("request target of {} bytes is over {} bytes", target.size(),
                              limits_.max_request_line),
             ec);
      return;
    }
    request.method.assign(method.data(), method.size());
    const std::string_view t(target.data(), target.size());
    const size_t q = t.find('?');
    request.path = t.substr(0, q);
    if (q != std::string_view::npos) request.query = t.substr(q + 1);
  }

  void on_response_impl(int, boost::beast::string_view, int, error_code& ec) override {
    ec = http::error::bad_method;  // never called for requests
  }

  void on_field_impl(http::field name, boost::beast::string_view name_text,
                     boost::beast::string_view value, error_code& ec) override {
    if (static_cast<int32_t>(request.headers.size()) >= limits_.max_header_count) {
      Refuse(431, fmt::format("more than {} header fields ({})", limits_.max_header_count,
                              kMaxHeadersFlag),
             ec);
      return;
    }
    const std::string_view v(value.data(), value.size());
    if (name == http::field::expect && EqualsNoCase(Trim(v), "100-continue")) {
      expect_continue = true;
    }
    request.headers.emplace_back(std::string(name_text.data(), name_text.size()), std::string(v));
  }

  void on_header_impl(error_code& ec) override {
    // Nothing is inflated: a gzip body of 1 MiB can be 1 GB of JSON.
    const std::string_view coding = Trim(request.Header("Content-Encoding"));
    if (!coding.empty() && !EqualsNoCase(coding, "identity")) {
      Refuse(415,
             fmt::format("Content-Encoding '{}' is not accepted: send the body uncompressed",
                         coding.substr(0, 64)),
             ec);
    }
  }

  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}

  size_t Append(boost::beast::string_view body, error_code& ec) {
    if (request.body.size() + body.size() > limits_.max_body_bytes) {  // Beast checks too
      Refuse(413, fmt::format("request body over {} bytes ({})", limits_.max_body_bytes,
                              kMaxBodyFlag),
             ec);
      return 0;
    }
    request.body.append(body.data(), body.size());
    return body.size();
  }

  size_t on_body_impl(boost::beast::string_view body, error_code& ec) override {
    return Append(body, ec);
  }

  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view, error_code&) override {}

  size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body,
                            error_code& ec) override {
    return Append(body, ec);
  }

  void on_finish_impl(error_code&) override {}

  const HttpLimits& limits_;
};

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsNoCase(key, name)) return value;
  }
  return {};
}

std::optional<std::string> HttpRequest::QueryParam(std::string_view key) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = item.find('=');
    if (PercentDecode(item.substr(0, eq)) != key) continue;
    return eq == std::string_view::npos ? std::string() : PercentDecode(item.substr(eq + 1));
  }
  return std::nullopt;
}

std::string PercentDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
               hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

RequestReader::RequestReader(const HttpLimits& limits) : limits_(limits) { StartRequest(); }

RequestReader::~RequestReader() = default;

void RequestReader::StartRequest() {
  parser_ = std::make_unique<Parser>(limits_);
  parser_->eager(true);
  continue_sent_ = false;
}

size_t RequestReader::BufferCap() const { return std::max(limits_.max_header_bytes, kReadBytes); }

bool RequestReader::wants_bytes() const {
  return !refusal_ && !parser_->is_done() && buffer_.size() - begin_ < BufferCap();
}

std::span<char> RequestReader::ReadSpace() {
  if (!wants_bytes()) return {};
  const size_t cap = BufferCap();
  if (begin_ > 0) {
    buffer_.erase(0, begin_);
    begin_ = 0;
  }
  const size_t held = buffer_.size();
  if (held >= cap) return {};
  const size_t room = std::min(cap - held, kReadBytes);
  if (buffer_.capacity() < cap) buffer_.reserve(cap);
  buffer_.resize(held + room);
  read_at_ = held;
  return {buffer_.data() + held, room};
}

void RequestReader::Commit(size_t n) {
  buffer_.resize(read_at_ + n);  // ReadSpace() grew it by all its room
  Parse();
}

size_t RequestReader::Feed(std::string_view bytes) {
  size_t taken = 0;
  while (taken < bytes.size()) {
    const std::span<char> space = ReadSpace();
    if (space.empty()) break;
    const size_t n = std::min(space.size(), bytes.size() - taken);
    std::memcpy(space.data(), bytes.data() + taken, n);
    taken += n;
    Commit(n);
  }
  return taken;
}

bool RequestReader::started() const { return buffer_.size() > begin_ || parser_->got_some(); }

bool RequestReader::head_done() const { return parser_->is_header_done(); }

bool RequestReader::wants_continue() const {
  return !refusal_ && parser_->expect_continue && parser_->is_header_done() &&
         !parser_->is_done() && !continue_sent_ && parser_->request.body.empty();
}

void RequestReader::MarkContinueSent() { continue_sent_ = true; }

bool RequestReader::complete() const { return !refusal_ && parser_->is_done(); }

void RequestReader::Refuse(int status, std::string message) {
  refusal_ = HttpRefusal{status, std::move(message)};
}

void RequestReader::Parse() {
  // Inside a chunked body Beast asserts that it is fed again with at least
  // the 5 bytes of a last chunk ("0\r\n\r\n"). Fewer can never finish the
  // message, so they wait for more.
  constexpr size_t kLastChunkBytes = 5;
  while (!refusal_ && !parser_->is_done() && buffer_.size() > begin_) {
    if (parser_->is_header_done() && parser_->chunked() &&
        buffer_.size() - begin_ < kLastChunkBytes) {
      return;
    }
    error_code ec;
    const size_t used = parser_->put(
        boost::asio::const_buffer(buffer_.data() + begin_, buffer_.size() - begin_), ec);
    begin_ += used;
    if (parser_->refusal) {
      refusal_ = std::move(parser_->refusal);
      return;
    }
    const size_t waiting = buffer_.size() - begin_;
    if (ec == http::error::need_more || (!ec && used == 0)) {
      if (!parser_->is_header_done()) {
        if (!parser_->request_line_seen && waiting > limits_.max_request_line) {
          Refuse(414, fmt::format("request line over {} bytes", limits_.max_request_line));
        } else if (waiting >= limits_.max_header_bytes) {
          Refuse(431, fmt::format("request head over {} bytes ({})", limits_.max_header_bytes,
                                  kMaxHeaderSizeFlag));
        }
      } else if (waiting >= BufferCap()) {
        Refuse(400, "a chunk header or trailer line longer than the read buffer");
      }
      return;
    }
    if (ec == http::error::header_limit) {
      if (!parser_->request_line_seen) {
        Refuse(414, fmt::format("request line over {} bytes", limits_.max_request_line));
      } else {
        Refuse(431, fmt::format("request head over {} bytes ({})", limits_.max_header_bytes,
                                kMaxHeaderSizeFlag));
      }
      return;
    }
    if (ec == http::error::body_limit) {
      Refuse(413, fmt::format("request body over {} bytes ({})", limits_.max_body_bytes,
                              kMaxBodyFlag));
      return;
    }
    if (ec) {
      Refuse(400, fmt::format("malformed HTTP request: {}", ec.message()));
      return;
    }
  }
}

HttpRequest RequestReader::TakeRequest() {
  HttpRequest request = std::move(parser_->request);
  request.keep_alive = parser_->keep_alive();
  StartRequest();
  Parse();
  return request;
}

size_t RequestReader::held_bytes() const {
  return buffer_.capacity() + parser_->request.body.capacity();
}

void RequestReader::ReleaseIdleMemory() {
  if (buffer_.size() > begin_ || parser_->got_some()) return;
  std::string().swap(buffer_);
  begin_ = 0;
}

}  // namespace h2o::server
