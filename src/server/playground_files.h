// The web playground's files (web/playground/), compiled into the binary
// at build time (embed_files.cmake) so `h2o serve` needs nothing on disk
// and nothing from the network to serve it.
#pragma once

#include <span>
#include <string_view>

namespace h2o::server {

struct StaticFile {
  std::string_view path;  // the URL path: "/" for index.html, else "/" + the file name
  std::string_view content_type;
  std::string_view body;
};

std::span<const StaticFile> PlaygroundFiles();

}  // namespace h2o::server
