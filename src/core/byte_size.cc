#include "core/byte_size.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/strings.h"

namespace h2o {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

Result<size_t> ParseByteSize(std::string_view text) {
  const std::string_view t = Trim(text);
  // Appended, not "'" + text + "'": g++ 12 warns falsely (-Wrestrict) on that.
  std::string quoted(1, '\'');
  quoted.append(text).push_back('\'');
  if (t.empty()) return Status::Error("empty size");
  size_t unit_at = 0;
  while (unit_at < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[unit_at])) || t[unit_at] == '.')) {
    ++unit_at;
  }
  double number = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + unit_at, number);
  if (unit_at == 0 || ec != std::errc() || end != t.data() + unit_at) {
    return Status::Error(quoted + " is not a size (e.g. 2GiB, 512MiB, 1073741824)");
  }
  const std::string unit = Lower(Trim(t.substr(unit_at)));
  struct Unit {
    const char* name;
    double bytes;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"b", 1},
      {"k", 1024.0},
      {"kib", 1024.0},
      {"kb", 1e3},
      {"m", 1048576.0},
      {"mib", 1048576.0},
      {"mb", 1e6},
      {"g", 1073741824.0},
      {"gib", 1073741824.0},
      {"gb", 1e9},
      {"t", 1099511627776.0},
      {"tib", 1099511627776.0},
      {"tb", 1e12},
  };
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    const double bytes = std::floor(number * u.bytes);
    if (!(bytes < static_cast<double>(std::numeric_limits<size_t>::max()))) {
      return Status::Error(quoted + " is too large");
    }
    return static_cast<size_t>(bytes);
  }
  return Status::Error(quoted +
                       " has an unknown unit (B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, "
                       "GB, TB)");
}

std::string FormatBytes(double bytes) {
  // snprintf, not fmt: core links nothing.
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  } else if (bytes >= 1024.0 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024));
  } else if (bytes >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  }
  return buf;
}

}  // namespace h2o
