// Internal to the reference kernels: every block type of q4_1, q5_0, q5_1
// and the K-quants read into one integer form, so that dequantize, both
// dots and the quantizers are written once over it (ref_quant_ext.cc) and
// only the byte layouts differ per type (ref_formats.cc).
#pragma once

#include <cstdint>

#include "kernels/quant.h"

namespace h2o::kernels::ref {

// A block as integers: element i of sub-block s = i / kSubSize has the value
// (d * scale[s]) * code[i] - dmin * min[s], computed in float in that order
// (GGML's). Types without a min have dmin = min[s] = 0, so the subtraction
// is of +0 and changes nothing; q4_1 and q5_1, whose value is d * q + m,
// have dmin = -m and min = 1.
template <int kElems, int kSubBlocks>
struct Unpacked {
  static constexpr int kSize = kElems;
  static constexpr int kSubs = kSubBlocks;
  static constexpr int kSubSize = kElems / kSubBlocks;
  float d = 0.0f;
  float dmin = 0.0f;
  int16_t scale[kSubBlocks] = {};
  int16_t min[kSubBlocks] = {};
  int8_t code[kElems] = {};
};

// A type's block, its integer form, the activation block of its integer
// dot, and the layout: Unpack reads a block, Pack writes the integer form
// back (Pack(Unpack(b)) == b for every valid block). Each type's Unpack and
// Pack are explicit specializations in ref_formats.cc.
template <typename BlockT, int kElems, int kSubBlocks, typename ActT>
struct Format {
  using Block = BlockT;
  using Ints = Unpacked<kElems, kSubBlocks>;
  using Act = ActT;
  static void Unpack(const Block& b, Ints& u);
  static void Pack(const Ints& u, Block& b);
};

using FormatQ4_1 = Format<BlockQ4_1, 32, 1, BlockQ8Act>;
using FormatQ5_0 = Format<BlockQ5_0, 32, 1, BlockQ8Act>;
using FormatQ5_1 = Format<BlockQ5_1, 32, 1, BlockQ8Act>;
using FormatQ2_K = Format<BlockQ2_K, 256, 16, BlockQ8KAct>;
using FormatQ3_K = Format<BlockQ3_K, 256, 16, BlockQ8KAct>;
using FormatQ4_K = Format<BlockQ4_K, 256, 8, BlockQ8KAct>;
using FormatQ5_K = Format<BlockQ5_K, 256, 8, BlockQ8KAct>;
using FormatQ6_K = Format<BlockQ6_K, 256, 16, BlockQ8KAct>;

}  // namespace h2o::kernels::ref
