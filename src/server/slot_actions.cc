#include "server/slot_actions.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "server/json_fields.h"

namespace h2o::server {
namespace {

using nlohmann::json;

ApiError NotFound(std::string message) {
  return {404, std::move(message), "invalid_request_error", "", "not_found"};
}

}  // namespace

void SlotActions::Finished(const std::string& id, int32_t key_index, std::vector<int32_t> tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  done_.push_back({id, key_index, std::move(tokens)});
  while (done_.size() > keep_) done_.pop_front();
}

std::optional<std::vector<int32_t>> SlotActions::TokensOf(const std::string& id,
                                                          int32_t key_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Done& d : done_) {
    if (d.id == id && d.key_index == key_index) return d.tokens;
  }
  return std::nullopt;
}

std::optional<ApiError> SlotActions::Handle(Scheduler& scheduler, const std::string& id,
                                            std::optional<std::string> action,
                                            std::string_view body, int32_t key_index,
                                            std::string& out) {
  if (!action || (*action != "save" && *action != "restore" && *action != "erase")) {
    return Bad("action", "'action' must be save, restore or erase (POST /slots/{id}?action=save)");
  }
  std::string filename;
  if (*action != "erase") {
    json j;
    if (auto e = ParseJsonBody(body, j, /*object_only=*/true)) return e;
    if (!j.contains("filename") || !j["filename"].is_string()) {
      return Bad("filename", "'filename' is required: the save's name");
    }
    filename = j["filename"].get<std::string>();
    if (Status s = StateDir::CheckName(filename); !s.ok()) return Bad("filename", s.message());
  }
  if (*action == "restore") {
    auto restored = scheduler.RestoreSaved(filename);
    if (!restored.ok()) return Bad("filename", restored.status().message());
    if (!*restored) return NotFound(fmt::format("no saved conversation '{}'", filename));
    out = BodyText({{"id_slot", id},
                    {"filename", filename},
                    {"n_restored", (*restored)->n_tokens},
                    {"n_read", (*restored)->bytes}});
    return std::nullopt;
  }
  const auto tokens = TokensOf(id, key_index);
  if (!tokens) {
    return NotFound(fmt::format(
        "no finished request '{}' with a kept state for you: unknown, made under another API "
        "key, one of more than {} requests ago, or it kept none (cache_prompt false, cancelled)",
        id, keep_));
  }
  if (*action == "erase") {
    out = BodyText({{"id_slot", id}, {"n_erased", scheduler.EraseKept(*tokens)}});
    return std::nullopt;
  }
  auto written = scheduler.SaveKept(*tokens, filename);
  if (!written.ok()) return Bad("", written.status().message());
  out = BodyText({{"id_slot", id},
                  {"filename", filename},
                  {"n_saved", tokens->size()},
                  {"n_written", *written}});
  return std::nullopt;
}

}  // namespace h2o::server
