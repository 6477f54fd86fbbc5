// How `h2o bench` prints its records (-o md, json, jsonl), shared by its
// modes.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

namespace h2o::cli {

enum class Output { kMarkdown, kJson, kJsonl };

// The records of a run as -o asks. json: one object, the run's
// configuration with the records under "records", printed at the end.
// jsonl: a line per record as soon as it comes, the configuration merged
// in, as llama-bench's jsonl (a long run can be followed, and a killed one
// keeps its finished lines).
class RecordPrinter {
 public:
  RecordPrinter(Output output, nlohmann::json config)
      : output_(output), config_(std::move(config)) {}

  void Add(nlohmann::json record) {
    if (output_ == Output::kJsonl) {
      nlohmann::json line = config_;
      line.update(record);
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
      return;
    }
    records_.push_back(std::move(record));
  }

  void Finish() {
    if (output_ != Output::kJson) return;
    config_["records"] = std::move(records_);
    std::printf("%s\n", config_.dump(2).c_str());
  }

 private:
  Output output_;
  nlohmann::json config_;
  nlohmann::json records_ = nlohmann::json::array();
};

}  // namespace h2o::cli
