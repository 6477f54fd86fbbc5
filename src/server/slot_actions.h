// llama-server's POST /slots/{id}?action=save|restore|erase over the prompt
// cache and its disk tier (h2o serve --cache-dir). Slots here are requests:
// a request's id (the "id" of its response) names the state it left in the
// prompt cache, the conversation so far;
//   save    {"filename": NAME} writes it as DIR/NAME,
//   restore {"filename": NAME} reads DIR/NAME back into the prompt cache
//           (any id: a request that continues the conversation resumes
//           from it, whichever client sends it),
//   erase   drops the request's kept states.
// Only the API key that made a request may save or erase it.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/scheduler.h"
#include "server/api_request.h"

namespace h2o::server {

class SlotActions {
 public:
  // The finished requests remembered by id (the newest `keep`).
  explicit SlotActions(size_t keep) : keep_(keep) {}

  // A request that finished with a kept state of `tokens`.
  void Finished(const std::string& id, int32_t key_index, std::vector<int32_t> tokens);

  // The response body, or the error: 400 a bad action, body or name, a
  // refused file; 404 an unknown request or save.
  std::optional<ApiError> Handle(Scheduler& scheduler, const std::string& id,
                                 std::optional<std::string> action, std::string_view body,
                                 int32_t key_index, std::string& out);

 private:
  struct Done {
    std::string id;
    int32_t key_index;
    std::vector<int32_t> tokens;
  };
  std::optional<std::vector<int32_t>> TokensOf(const std::string& id, int32_t key_index) const;
  size_t keep_;
  mutable std::mutex mu_;
  std::deque<Done> done_;  // newest last
};

}  // namespace h2o::server
