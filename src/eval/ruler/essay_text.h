// essay.txt compiled into the binary (embed_text.cmake).
#pragma once

#include <string_view>

namespace h2o::ruler {

std::string_view EmbeddedEssay();

}  // namespace h2o::ruler
