// A small random-weight q8_0 model with the bundled model's vocabulary, for
// tests that compare sequences run together with the same sequences run
// alone: with integer-dot weights every row of a batch comes out bit for
// bit as it does alone (MatMul's contract), where stories260K's f32
// weights round differently in a blocked product than in a single dot.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "convert/mkmodel.h"
#include "model/model.h"
#include "test_data.h"

namespace h2o::testing {

// A random-weight model MakeRandomModel writes from `options` under a name
// of its own (ctest runs tests in parallel), loaded, and removed when this
// goes; held in a function-local static, it is written once per process.
struct WrittenRandomModel {
  std::string path;
  std::unique_ptr<Model> model;
  WrittenRandomModel(const std::string& name, MkModelOptions options)
      : path(::testing::TempDir() + "h2o_" + name + "_" + std::to_string(::getpid()) + ".gguf") {
    options.output_path = path;
    H2O_CHECK(MakeRandomModel(options).ok());
    model = std::move(Model::Load(path).value());
  }
  ~WrittenRandomModel() { std::remove(path.c_str()); }
};

inline const Model& Q8Model() {
  static const WrittenRandomModel written("q8", [] {
    MkModelOptions o;
    o.n_embd = 128;
    o.n_layer = 2;
    o.n_head = 4;
    o.n_head_kv = 2;
    o.n_ff = 256;
    o.n_ctx = 512;
    o.type = "q8_0";
    o.sharpen = 4.0f;  // peaked attention: evictions change the tokens
    o.vocab_from = ModelPath();
    o.n_threads = 2;
    return o;
  }());
  return *written.model;
}

}  // namespace h2o::testing
