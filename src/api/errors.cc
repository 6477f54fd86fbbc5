#include <string>

#include "api/handles.h"

namespace {
thread_local std::string last_error;
}  // namespace

namespace h2o::api {

int Fail(int code, const std::string& message) {
  last_error = message;
  return code;
}

}  // namespace h2o::api

extern "C" {

const char* h2o_last_error(void) { return last_error.c_str(); }

const char* h2o_version(void) { return H2O_VERSION; }

}  // extern "C"
