// The byte layouts of q4_1, q5_0, q5_1 and the K-quants, pinned two ways:
// blocks built here by GGML's own packing loops (quantize_row_*_ref in
// ggml-quants.c, rewritten from their structure) from chosen scales and
// codes must decode, on every backend, to exactly the values GGML's
// dequantize_row_* formulas give (same float expression, same order); and a
// few single bytes set by hand must move exactly the elements worked out
// below. Two blocks each, so a wrong block stride shows.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::TypeName;

// What a block holds, in GGML's terms: the stored half-precision scales,
// per-sub-block scale and min codes (q3_K: the stored 6-bit value, 0..63;
// q6_K: the signed byte) and the stored codes (q3_K: 0..7 including the
// high bit; q6_K: 0..63).
struct Contents {
  uint16_t d = 0;
  uint16_t dmin = 0;  // m for q4_1 / q5_1
  int scale[16] = {};
  int min[16] = {};
  int code[256] = {};
};

struct Case {
  TensorType type;
  int block_size;
  int code_max;
  int scale_lo, scale_hi;  // range of the scale codes drawn
  int min_max;             // range of the min codes drawn (0: none)
  // Writes one block from its contents, as GGML's quantizer packs it.
  std::function<void(const Contents&, uint8_t*)> pack;
  // The value of element e, as GGML's dequantizer computes it.
  std::function<float(const Contents&, int)> value;
};

float Half(uint16_t h) { return F16ToF32(h); }

uint32_t FifthBitsOf(const Contents& c) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qh |= static_cast<uint32_t>((c.code[j] & 0x10) >> 4) << j;
    qh |= static_cast<uint32_t>((c.code[j + 16] & 0x10) >> 4) << (j + 16);
  }
  return qh;
}

// GGML's q2_K/q3_K 2-bit packing: for each half of 128, byte l holds
// elements l, l + 32, l + 64, l + 96 at bits 0, 2, 4, 6.
void PackTwoBitHalves(const int* L, uint8_t* qs) {
  for (int j = 0; j < 256; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>((L[j + l] & 3) | (L[j + l + 32] & 3) << 2 |
                                           (L[j + l + 64] & 3) << 4 | (L[j + l + 96] & 3) << 6);
    }
  }
}

// GGML's q4_K/q5_K scale packing.
void PackScalesK4(const Contents& c, uint8_t* scales) {
  for (int j = 0; j < 8; ++j) {
    const int ls = c.scale[j], lm = c.min[j];
    if (j < 4) {
      scales[j] = static_cast<uint8_t>(ls);
      scales[j + 4] = static_cast<uint8_t>(lm);
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      scales[j - 0] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
}

// GGML's packing of the 32-element types: nibbles j and j + 16 share byte
// j; the fifth bits (q5_*) go to qh, m (q4_1, q5_1) beside d.
template <typename Block>
void PackLegacy(const Contents& c, uint8_t* out) {
  Block b{};
  b.d = c.d;
  if constexpr (requires { b.m; }) b.m = c.dmin;
  for (int j = 0; j < 16; ++j) {
    b.qs[j] = static_cast<uint8_t>((c.code[j] & 0xF) | (c.code[j + 16] & 0xF) << 4);
  }
  if constexpr (requires { b.qh; }) {
    const uint32_t qh = FifthBitsOf(c);
    std::memcpy(b.qh, &qh, 4);
  }
  std::memcpy(out, &b, sizeof(b));
}

// dequantize_row_q4_1 / q5_1: x0 * d + m.
float MinValue(const Contents& c, int e) { return c.code[e] * Half(c.d) + Half(c.dmin); }

// dequantize_row_q4_K / q5_K: d1 = d * sc, m1 = dmin * m, then d1 * q - m1.
float SubBlock32Value(const Contents& c, int e) {
  const float d1 = Half(c.d) * c.scale[e / 32];
  const float m1 = Half(c.dmin) * c.min[e / 32];
  return d1 * c.code[e] - m1;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({TensorType::kQ4_1, 32, 15, 0, 0, 0, PackLegacy<BlockQ4_1>, MinValue});
  cases.push_back({TensorType::kQ5_0, 32, 31, 0, 0, 0, PackLegacy<BlockQ5_0>,
                   [](const Contents& c, int e) { return (c.code[e] - 16) * Half(c.d); }});
  cases.push_back({TensorType::kQ5_1, 32, 31, 0, 0, 0, PackLegacy<BlockQ5_1>, MinValue});
  cases.push_back({TensorType::kQ2_K, 256, 3, 0, 15, 15,
                   [](const Contents& c, uint8_t* out) {
                     BlockQ2_K b;
                     for (int j = 0; j < 16; ++j)
                       b.scales[j] = static_cast<uint8_t>(c.scale[j] | c.min[j] << 4);
                     PackTwoBitHalves(c.code, b.qs);
                     b.d = c.d;
                     b.dmin = c.dmin;
                     std::memcpy(out, &b, sizeof(b));
                   },
                   [](const Contents& c, int e) {
                     const float dl = Half(c.d) * c.scale[e / 16];
                     const float ml = Half(c.dmin) * c.min[e / 16];
                     return dl * c.code[e] - ml;
                   }});
  cases.push_back({TensorType::kQ3_K, 256, 7, 0, 63, 0,
                   [](const Contents& c, uint8_t* out) {
                     BlockQ3_K b;
                     std::memset(b.scales, 0, 12);
                     for (int j = 0; j < 16; ++j) {
                       int l = c.scale[j];
                       if (j < 8) {
                         b.scales[j] = static_cast<uint8_t>(l & 0xF);
                       } else {
                         b.scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
                       }
                       l >>= 4;
                       b.scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
                     }
                     int L[256];
                     std::memcpy(L, c.code, sizeof(L));
                     std::memset(b.hmask, 0, 32);
                     int m = 0;
                     uint8_t hm = 1;
                     for (int j = 0; j < 256; ++j) {
                       if (L[j] > 3) {
                         b.hmask[m] |= hm;
                         L[j] -= 4;
                       }
                       if (++m == 32) {
                         m = 0;
                         hm = static_cast<uint8_t>(hm << 1);
                       }
                     }
                     PackTwoBitHalves(L, b.qs);
                     b.d = c.d;
                     std::memcpy(out, &b, sizeof(b));
                   },
                   [](const Contents& c, int e) {
                     const float dl = Half(c.d) * (c.scale[e / 16] - 32);
                     return dl * (c.code[e] - 4);
                   }});
  cases.push_back({TensorType::kQ4_K, 256, 15, 0, 63, 63,
                   [](const Contents& c, uint8_t* out) {
                     BlockQ4_K b;
                     std::memset(b.scales, 0, 12);
                     PackScalesK4(c, b.scales);
                     uint8_t* q = b.qs;
                     for (int j = 0; j < 256; j += 64) {
                       for (int l = 0; l < 32; ++l)
                         q[l] = static_cast<uint8_t>(c.code[j + l] | c.code[j + l + 32] << 4);
                       q += 32;
                     }
                     b.d = c.d;
                     b.dmin = c.dmin;
                     std::memcpy(out, &b, sizeof(b));
                   },
                   SubBlock32Value});
  cases.push_back({TensorType::kQ5_K, 256, 31, 0, 63, 63,
                   [](const Contents& c, uint8_t* out) {
                     BlockQ5_K b;
                     std::memset(b.scales, 0, 12);
                     PackScalesK4(c, b.scales);
                     std::memset(b.qh, 0, 32);
                     uint8_t* ql = b.qs;
                     uint8_t m1 = 1, m2 = 2;
                     for (int n = 0; n < 256; n += 64) {
                       for (int j = 0; j < 32; ++j) {
                         int l1 = c.code[n + j];
                         if (l1 > 15) {
                           l1 -= 16;
                           b.qh[j] |= m1;
                         }
                         int l2 = c.code[n + j + 32];
                         if (l2 > 15) {
                           l2 -= 16;
                           b.qh[j] |= m2;
                         }
                         ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
                       }
                       m1 = static_cast<uint8_t>(m1 << 2);
                       m2 = static_cast<uint8_t>(m2 << 2);
                       ql += 32;
                     }
                     b.d = c.d;
                     b.dmin = c.dmin;
                     std::memcpy(out, &b, sizeof(b));
                   },
                   SubBlock32Value});
  cases.push_back({TensorType::kQ6_K, 256, 63, -128, 127, 0,
                   [](const Contents& c, uint8_t* out) {
                     BlockQ6_K b;
                     uint8_t* ql = b.ql;
                     uint8_t* qh = b.qh;
                     for (int j = 0; j < 256; j += 128) {
                       for (int l = 0; l < 32; ++l) {
                         const int q1 = c.code[j + l] & 0xF, q2 = c.code[j + l + 32] & 0xF;
                         const int q3 = c.code[j + l + 64] & 0xF, q4 = c.code[j + l + 96] & 0xF;
                         ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
                         ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
                         qh[l] = static_cast<uint8_t>(
                             (c.code[j + l] >> 4) | ((c.code[j + l + 32] >> 4) << 2) |
                             ((c.code[j + l + 64] >> 4) << 4) | ((c.code[j + l + 96] >> 4) << 6));
                       }
                       ql += 64;
                       qh += 32;
                     }
                     for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(c.scale[j]);
                     b.d = c.d;
                     std::memcpy(out, &b, sizeof(b));
                   },
                   [](const Contents& c, int e) {
                     return Half(c.d) * static_cast<float>(c.scale[e / 16]) * (c.code[e] - 32);
                   }});
  return cases;
}

// Seeded contents; the halves are inexact decimals (1/3, -0.7, ...) so
// that the order of the float operations shows in the last bits.
Contents RandomContents(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint16_t halves[] = {0x3555, 0xB99A, 0x2E66, 0x4248, 0x3C00, 0x1A8F};
  Contents out;
  out.d = halves[rng() % 6];
  out.dmin = halves[rng() % 6];
  for (int s = 0; s < 16; ++s) {
    out.scale[s] = c.scale_lo + static_cast<int>(rng() % (c.scale_hi - c.scale_lo + 1));
    out.min[s] = c.min_max > 0 ? static_cast<int>(rng() % (c.min_max + 1)) : 0;
  }
  for (int e = 0; e < c.block_size; ++e) out.code[e] = static_cast<int>(rng() % (c.code_max + 1));
  // The extreme codes in every block, and the extreme scales.
  out.code[0] = 0;
  out.code[c.block_size - 1] = c.code_max;
  out.scale[0] = c.scale_hi;
  out.scale[1] = c.scale_lo;
  return out;
}

TEST(QuantLayoutTest, GgmlPackedBlocksDecodeToGgmlValuesOnEveryBackend) {
  for (const Case& c : Cases()) {
    const size_t block_bytes = TraitsOf(c.type).block_bytes;
    const int n = 2 * c.block_size;
    const Contents blocks[2] = {RandomContents(c, 1), RandomContents(c, 2)};
    std::vector<uint8_t> row(2 * block_bytes);
    c.pack(blocks[0], row.data());
    c.pack(blocks[1], row.data() + block_bytes);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = c.value(blocks[i / c.block_size], i % c.block_size);
    for (const KernelTable* table : AvailableKernels()) {
      std::vector<float> got(n);
      table->For(c.type).dequantize_row(row.data(), got.data(), n);
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], want[i]) << table->name << " " << TypeName(c.type) << " i=" << i;
      }
      // A unit vector picks one element out of the float dot.
      std::vector<float> unit(n, 0.0f);
      for (int i = 0; i < n; ++i) {
        unit[i] = 1.0f;
        ASSERT_EQ(table->For(c.type).dot_row(row.data(), unit.data(), n), want[i])
            << table->name << " " << TypeName(c.type) << " i=" << i;
        unit[i] = 0.0f;
      }
    }
  }
}

// Reference decode of a row on every backend (equal by the test above).
std::vector<float> Decode(TensorType type, const void* row, int64_t n) {
  std::vector<float> y(n);
  DequantizeRow(type, row, y.data(), n);
  return y;
}

// Single bytes set by hand in an otherwise zero second block (d = 1, dmin
// or m = 0.5 where the type has one), with the elements they move worked
// out from the layout comments of quant.h.
TEST(QuantLayoutTest, HandSetBytesMoveTheElementsTheLayoutSays) {
  {  // q5_1: qs[3] = 0x5A, qh bit 19 set, m = 0.5: element 3 = 10 + 0.5,
     // element 19 = 5 + 16 + 0.5; the rest of the block is 0.5.
    BlockQ5_1 b[2] = {};
    b[1].d = 0x3C00;
    b[1].m = 0x3800;
    b[1].qs[3] = 0x5A;
    b[1].qh[2] = 0x08;
    const std::vector<float> y = Decode(TensorType::kQ5_1, b, 64);
    EXPECT_EQ(y[32 + 3], 10.5f);
    EXPECT_EQ(y[32 + 19], 21.5f);
    EXPECT_EQ(y[32 + 4], 0.5f);
    EXPECT_EQ(y[0], 0.0f);
  }
  {  // q2_K: scales[8] = 0x32: sub-block 8 (elements 128..143) has scale 2,
     // min 3. qs[32 + 7] = 0b11'01'00'10 holds elements 128 + 7 (bits 0-1:
     // 2), 160 + 7 (bits 2-3: 0), 192 + 7 (bits 4-5: 1), 224 + 7 (bits 6-7:
     // 3), in sub-blocks 8, 10, 12 (scales[12] = 0x10: scale 0, min 1), 14.
    BlockQ2_K b[2] = {};
    b[1].d = 0x3C00;
    b[1].dmin = 0x3800;
    b[1].scales[8] = 0x32;
    b[1].scales[12] = 0x10;
    b[1].qs[32 + 7] = 0xD2;
    const std::vector<float> y = Decode(TensorType::kQ2_K, b, 512);
    EXPECT_EQ(y[256 + 128 + 7], 2.0f * 2 - 0.5f * 3);
    EXPECT_EQ(y[256 + 128 + 8], -1.5f);  // code 0, same sub-block
    EXPECT_EQ(y[256 + 160 + 7], 0.0f);
    EXPECT_EQ(y[256 + 192 + 7], -0.5f);  // code 1, but scale 0
    EXPECT_EQ(y[256 + 224 + 7], 0.0f);   // code 3, but scale and min 0
  }
  {  // q3_K: stored scale of sub-block 9 = 0x25 (37, so 5): low nibble in
     // the high half of scales[1], top bits 0b10 at bits 4-5 of scales[9].
     // Element 128 + 16 + 3 = 147 (sub-block 9): 2-bit code 1 at bits 0-1 of
     // qs[32 + 19], high bit (bit 4 of hmask[19]) set: code 1 + 4 - 4 = 1.
     // Element 147 + 32 = 179: bits 2-3 of the same byte, 2, no high bit:
     // 2 - 4 = -2, in sub-block 11 whose stored scale is 0 -> -32.
    BlockQ3_K b[2] = {};
    b[1].d = 0x3C00;
    b[1].scales[1] = 0x50;
    b[1].scales[9] = 0x20;
    b[1].qs[32 + 19] = 0x09;
    b[1].hmask[19] = 0x10;
    const std::vector<float> y = Decode(TensorType::kQ3_K, b, 512);
    EXPECT_EQ(y[256 + 147], 5.0f * 1);
    EXPECT_EQ(y[256 + 179], -32.0f * -2);
    EXPECT_EQ(y[256 + 146], 5.0f * -4);  // 2-bit code 0, no high bit
  }
  {  // q4_K: sub-block 6 (elements 192..223): scale 0x2A = 42 from the low
     // nibble of scales[10] (0xA) and the top bits of scales[2] (0b10);
     // min 0x11 = 17 from the high nibble of scales[10] (0x1) and the top
     // bits of scales[6] (0b01). qs[96 + 5] = 0x70: element 192 + 5 has the
     // low nibble 0, element 224 + 5 (sub-block 7) the high nibble 7.
    BlockQ4_K b[2] = {};
    b[1].d = 0x3C00;
    b[1].dmin = 0x3800;
    b[1].scales[10] = 0x1A;
    b[1].scales[2] = 0x80;
    b[1].scales[6] = 0x40;
    b[1].scales[11] = 0x03;  // sub-block 7: scale 3, min 0
    b[1].qs[96 + 5] = 0x70;
    const std::vector<float> y = Decode(TensorType::kQ4_K, b, 512);
    EXPECT_EQ(y[256 + 192 + 5], 42.0f * 0 - 0.5f * 17);
    EXPECT_EQ(y[256 + 224 + 5], 3.0f * 7);
    EXPECT_EQ(y[256 + 64], 0.0f);  // sub-block 2: scale 0 (only top bits set), min 0
  }
  {  // q5_K: as q4_K with qh: bit 7 of qh[9] makes element 224 + 9 16 + its
     // nibble (high nibble of qs[96 + 9] = 2); scale of sub-block 7 is 1.
    BlockQ5_K b[2] = {};
    b[1].d = 0x3C00;
    b[1].scales[11] = 0x01;
    b[1].qh[9] = 0x80;
    b[1].qs[96 + 9] = 0x20;
    const std::vector<float> y = Decode(TensorType::kQ5_K, b, 512);
    EXPECT_EQ(y[256 + 224 + 9], 18.0f);
    EXPECT_EQ(y[256 + 192 + 9], 0.0f);
  }
  {  // q6_K: element 128 + 64 + 2 = 194 (h = 1, k = 2, l = 2): low nibble is
     // the high nibble of ql[64 + 2], top bits are bits 4-5 of qh[32 + 2];
     // 0x3 | 0b10 << 4 = 35, minus 32 = 3; scale of sub-block 12 = -2.
    BlockQ6_K b[2] = {};
    b[1].d = 0x3C00;
    b[1].ql[64 + 2] = 0x30;
    b[1].qh[32 + 2] = 0x20;
    b[1].scales[12] = -2;
    const std::vector<float> y = Decode(TensorType::kQ6_K, b, 512);
    EXPECT_EQ(y[256 + 194], -6.0f);
    EXPECT_EQ(y[256 + 192], -2.0f * -32);  // stored 0, so the code is -32
  }
}

}  // namespace
}  // namespace h2o::kernels
