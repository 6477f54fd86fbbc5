// The gguf module's public API in one include: File (reader), Writer,
// Value/KeyValue metadata and TensorInfo.
#pragma once

#include "gguf/file.h"         // IWYU pragma: export
#include "gguf/tensor_info.h"  // IWYU pragma: export
#include "gguf/value.h"        // IWYU pragma: export
#include "gguf/writer.h"       // IWYU pragma: export
