// Memory sizes as users write them on the command line (--kv-mem 2GiB).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace h2o {

// A byte count: a number (decimals allowed) with an optional unit, case
// insensitive: none or B (bytes), KiB/MiB/GiB/TiB (powers of 1024), K/M/G/T
// (the same, as `2G` means in most tools), KB/MB/GB/TB (powers of 1000).
// Errors name the text: empty, not a number, an unknown unit, negative, or
// past the size_t range.
Result<size_t> ParseByteSize(std::string_view text);

// "1.50 MiB", "320.00 KiB", "800 B": how every command prints a size (in
// core, so that kv/kv_report.h prints the KV figure as the CLI does).
std::string FormatBytes(double bytes);

}  // namespace h2o
