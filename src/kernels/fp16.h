// IEEE 754 binary16 ("half", GGML F16) and bfloat16 conversions, done with
// integer bit manipulation so the result is the same on every compiler and
// CPU. Narrowing rounds to nearest, ties to even; overflow gives inf;
// subnormals are produced and read exactly; NaN stays NaN (quietened, sign
// and top payload bits kept). All functions are pure and thread-safe.
#pragma once

#include <bit>
#include <cstdint>

namespace h2o::kernels {

// Exact: every half is representable as a float.
inline float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  // Rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t F32ToF16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) {  // inf or NaN
    if (abs == 0x7F800000) return sign | 0x7C00;
    return static_cast<uint16_t>(sign | 0x7E00 | ((abs >> 13) & 0x3FF));
  }
  // 65520 (0x477FF000) is halfway between 65504, the largest half, and 2^16;
  // the tie goes to the even side, which is overflow.
  if (abs >= 0x477FF000) return sign | 0x7C00;
  if (abs >= 0x38800000) {  // normal half range: >= 2^-14
    // Adding 0xFFF plus the lowest kept bit rounds to nearest even; a carry
    // out of the mantissa correctly bumps the exponent.
    const uint32_t rounded = abs + 0xFFF + ((abs >> 13) & 1);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000) >> 13));
  }
  // Subnormal half: result is round(value / 2^-24). value = m * 2^(e - 150)
  // with the implicit bit in m, so the quotient is m >> (126 - e).
  const uint32_t e = abs >> 23;
  if (e < 102) return sign;  // below 2^-25, rounds to zero
  const uint32_t m = (abs & 0x7FFFFF) | 0x800000;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;  // q == 0x400 is the smallest normal
  return static_cast<uint16_t>(sign | q);
}

// Exact: bfloat16 is the top half of a float.
inline float BF16ToF32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

inline uint16_t F32ToBF16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x0040);  // quiet NaN
  // Round to nearest even; rounding past the largest finite value gives inf.
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

}  // namespace h2o::kernels
