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

// Written once per process (under a name of its own: ctest runs tests in
// parallel) and removed at exit.
inline const Model& Q8Model() {
  struct Written {
    std::string path = ::testing::TempDir() + "h2o_q8_" + std::to_string(::getpid()) + ".gguf";
    std::unique_ptr<Model> model;
    Written() {
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
      o.output_path = path;
      H2O_CHECK(MakeRandomModel(o).ok());
      model = std::move(Model::Load(path).value());
    }
    ~Written() { std::remove(path.c_str()); }
  };
  static const Written written;
  return *written.model;
}

}  // namespace h2o::testing
