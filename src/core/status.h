// Status and Result<T>: how errors that a user or a file can cause travel
// up to the CLI/server, which print them as one line. Broken invariants use
// H2O_CHECK instead. No exception crosses a module boundary.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace h2o {

// What kind of failure a Status is, so that a caller (the server's HTTP
// status, the C ABI's return code) decides without reading the message.
enum class StatusCode {
  kOk,
  kInvalidArgument,  // input the caller can fix: a flag, a file, a request (the default)
  kUnavailable,      // try again later: a full queue, a server shutting down
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return Status(); }
  static Status Error(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status Error(StatusCode code, std::string message) {
    return Status(code == StatusCode::kOk ? StatusCode::kInvalidArgument : code,
                  std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The one-line message shown to the user; empty when ok().
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "context: message" (e.g. the file
  // name), unless the message already begins with that context. The code
  // stays.
  Status WithContext(const std::string& context) const {
    if (ok() || message_.starts_with(context + ": ")) return *this;
    return Error(code_, context + ": " + message_);
  }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a failed Status. Access value() only when ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

[[noreturn]] inline void CheckFailed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "h2o: internal check failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace h2o

// Always-on invariant check (not for user input: return a Status for that).
#define H2O_CHECK(cond) \
  ((cond) ? (void)0 : ::h2o::CheckFailed(#cond, __FILE__, __LINE__))

// Propagate a failed Status out of the current function.
#define H2O_RETURN_IF_ERROR(expr)            \
  do {                                       \
    ::h2o::Status h2o_status_ = (expr);      \
    if (!h2o_status_.ok()) return h2o_status_; \
  } while (0)

#define H2O_CONCAT_INNER(a, b) a##b
#define H2O_CONCAT(a, b) H2O_CONCAT_INNER(a, b)
// H2O_ASSIGN_OR_RETURN(auto x, MakeX()); binds x or returns the error.
#define H2O_ASSIGN_OR_RETURN(lhs, expr)                                  \
  auto H2O_CONCAT(h2o_result_, __LINE__) = (expr);                       \
  if (!H2O_CONCAT(h2o_result_, __LINE__).ok())                           \
    return H2O_CONCAT(h2o_result_, __LINE__).status();                   \
  lhs = std::move(H2O_CONCAT(h2o_result_, __LINE__)).value()
