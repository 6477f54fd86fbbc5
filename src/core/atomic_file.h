// Whole-file writes that never leave a partial file behind: eval commands
// write reports (.json, .csv, .svg) that a person or script may open while
// a long run is still going, or after it failed.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace h2o {

// Writes `contents` to "path.tmp", then renames it over `path`, so `path`
// holds either its old contents or all of the new ones. On failure neither
// `path` is touched nor "path.tmp" left behind. Errors are one line
// beginning with "path: ". Two writers of the same path at once are not
// guarded against (they share the .tmp name).
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace h2o
