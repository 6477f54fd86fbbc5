// Paths and loaders for the data the tests share (all inside the repo).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace h2o::testing {

inline std::string ModelPath() { return std::string(H2O_MODELS_DIR) + "/stories260K.gguf"; }
inline std::string DataPath(const std::string& rel) {
  return std::string(H2O_TEST_DATA_DIR) + "/" + rel;
}

inline std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json ReadJson(const std::string& rel) {
  return nlohmann::json::parse(ReadFileOrEmpty(DataPath(rel)));
}

// "1 403 407": ids joined by single spaces, as the CLI prints them.
inline std::string JoinIds(const std::vector<int32_t>& ids) {
  std::ostringstream out;
  for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
  return out.str();
}

// Ids of stories260K/streams/<name>, space separated.
inline std::vector<int32_t> ReadStream(const std::string& name) {
  std::istringstream in(ReadFileOrEmpty(DataPath("stories260K/streams/" + name)));
  std::vector<int32_t> ids;
  int32_t id;
  while (in >> id) ids.push_back(id);
  return ids;
}

// The first n ids of stories260K/streams/<name> (it must hold that many).
inline std::vector<int32_t> ReadStreamPrefix(const std::string& name, size_t n) {
  std::vector<int32_t> ids = ReadStream(name);
  EXPECT_GE(ids.size(), n) << name;
  ids.resize(n);
  return ids;
}

// The --kv spec of a row of reference_greedy.json / reference_nll.json
// (policy, heavy, recent; sink's sinks are its "heavy").
inline std::string ReferenceKvSpec(const nlohmann::json& row) {
  const std::string policy = row["policy"];
  const int heavy = row["heavy"], recent = row["recent"];
  if (policy == "full") return "full";
  if (policy == "local") return "local:recent=" + std::to_string(recent);
  if (policy == "sink") return "sink:sinks=" + std::to_string(heavy) + ",recent=" + std::to_string(recent);
  if (policy == "h2only") return "h2only:heavy=" + std::to_string(heavy);
  return policy + ":heavy=" + std::to_string(heavy) + ",recent=" + std::to_string(recent);
}

}  // namespace h2o::testing
