// `--check-tensors`, as llama.cpp's: a NaN or Inf stored in a weight makes
// every logit NaN a few layers later, far from its cause; scanning the
// weights at load names the tensor instead.
#pragma once

#include "core/status.h"
#include "gguf/file.h"

namespace h2o {

// Decodes every value of every tensor of a type h2o runs (f32, f16 and bf16
// as stored; quantized blocks through their scales and mins, so a NaN or
// Inf scale shows in every value it scales) and returns the one-line error
// "PATH: tensor 'NAME' has a non-finite value (nan) at row R, column C" for
// the first. Tensors of other types are left to the model loader, which
// refuses any it needs. Reads the whole file: a pass over the weights.
Status CheckTensorValues(const gguf::File& file);

}  // namespace h2o
