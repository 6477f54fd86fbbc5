// `h2o --version`: what a bug report needs to say which binary ran.
#pragma once

#include <string>

namespace h2o::cli {

// "h2o.cpp 0.1.0 (commit 0123abcd4567)\ncompiler: GCC 12.2.0\nSIMD
// kernels: avx512 (available: avx512, avx2, ref)".
std::string VersionText();

}  // namespace h2o::cli
