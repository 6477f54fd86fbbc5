#include "eval/jsonl.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "tokenizer/utf8.h"

namespace h2o {
namespace {

Status FieldError(const JsonlLine& line, const char* key, const char* what) {
  return Status::Error(fmt::format("{}: field '{}' must be {}", line.where, key, what));
}

const nlohmann::ordered_json* Find(const JsonlLine& line, const char* key) {
  auto it = line.value.find(key);
  return it == line.value.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

Result<std::vector<JsonlLine>> ReadJsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(fmt::format("{}: cannot open file", path));
  std::vector<JsonlLine> lines;
  std::string text;
  for (int64_t number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    JsonlLine line{fmt::format("{}:{}", path, number), {}};
    H2O_RETURN_IF_ERROR(CheckUtf8(text, line.where));
    line.value = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.value.is_discarded()) {
      return Status::Error(fmt::format("{}: not valid JSON", line.where));
    }
    if (!line.value.is_object()) {
      return Status::Error(fmt::format("{}: expected a JSON object per line", line.where));
    }
    lines.push_back(std::move(line));
  }
  if (in.bad()) return Status::Error(fmt::format("{}: read error", path));
  if (lines.empty()) return Status::Error(fmt::format("{}: no JSON lines in the file", path));
  return lines;
}

Result<std::string> StringField(const JsonlLine& line, const char* key) {
  const auto* v = Find(line, key);
  if (v == nullptr) return Status::Error(fmt::format("{}: missing field '{}'", line.where, key));
  if (!v->is_string()) return FieldError(line, key, "a string");
  return v->get<std::string>();
}

Result<int64_t> IntField(const JsonlLine& line, const char* key) {
  const auto* v = Find(line, key);
  if (v == nullptr) return Status::Error(fmt::format("{}: missing field '{}'", line.where, key));
  if (!v->is_number_integer()) return FieldError(line, key, "an integer");
  return v->get<int64_t>();
}

Result<int64_t> IntField(const JsonlLine& line, const char* key, int64_t fallback) {
  if (Find(line, key) == nullptr) return fallback;
  return IntField(line, key);
}

Result<double> NumberField(const JsonlLine& line, const char* key, double fallback) {
  const auto* v = Find(line, key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) return FieldError(line, key, "a number");
  return v->get<double>();
}

Result<std::vector<std::string>> StringListField(const JsonlLine& line, const char* key) {
  const auto* v = Find(line, key);
  if (v == nullptr) return Status::Error(fmt::format("{}: missing field '{}'", line.where, key));
  if (!v->is_array()) return FieldError(line, key, "a list of strings");
  std::vector<std::string> out;
  for (const auto& item : *v) {
    if (!item.is_string()) return FieldError(line, key, "a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::vector<std::string>> StringsField(const JsonlLine& line, const char* key) {
  const auto* v = Find(line, key);
  if (v == nullptr) return std::vector<std::string>{};
  if (v->is_string()) return std::vector<std::string>{v->get<std::string>()};
  return StringListField(line, key);
}

}  // namespace h2o
