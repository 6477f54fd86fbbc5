#include "cli/run_binary.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace h2o::testing {

namespace {
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

void ExpectOneErrorLine(const RunResult& r, const std::string& needle) {
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "killed by a signal";
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("h2o: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

void ExpectUsageError(const RunResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectOneErrorLine(r, needle);
}

RunResult RunH2o(const std::string& args, const std::string& stdin_path) {
  static int counter = 0;
  const auto base = std::filesystem::temp_directory_path() /
                    ("h2o_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const std::string out_path = base.string() + ".out";
  const std::string err_path = base.string() + ".err";
  const std::string cmd = std::string(H2O_BINARY) + " " + args + " <" + stdin_path + " >" + out_path +
                          " 2>" + err_path;
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

}  // namespace h2o::testing
