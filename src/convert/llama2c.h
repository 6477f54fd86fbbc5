// Import of Andrej Karpathy's llama2.c checkpoints (the "v0" format: a
// 7-int header, then float32 weights) into GGUF, so the tinyllamas models
// run here and load in other GGUF engines.
#pragma once

#include <string>

#include "core/status.h"

namespace h2o {

struct Llama2cConvertOptions {
  std::string checkpoint_path;  // model.bin
  std::string tokenizer_path;   // tokenizer.bin; empty: the GGUF gets no vocabulary
  std::string output_path;      // written atomically: no partial file on failure
  std::string name = "llama2c";
};

// Validates the checkpoint against its file size, then writes an F32 GGUF
// (architecture "llama", standard tensor names, tied classifier left tied).
// Errors name the file and the problem.
Status ConvertLlama2c(const Llama2cConvertOptions& options);

}  // namespace h2o
