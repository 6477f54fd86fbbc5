// A fresh directory under the test's temp dir, named for the test and the
// process (tests of one binary run in parallel under ctest), removed when
// it goes out of scope.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace h2o::testing {

struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& name)
      : path(::testing::TempDir() + "h2o_" + name + "_" + std::to_string(::getpid())) {
    std::filesystem::remove_all(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

}  // namespace h2o::testing
