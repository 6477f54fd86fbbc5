// The byte layouts of quant.h, read into and written from the integer form
// of ref_formats.h. Element indices follow the layout comments in quant.h.
#include "kernels/ref_formats.h"

#include <cstring>

#include "kernels/fp16.h"

namespace h2o::kernels::ref {
namespace {

uint32_t LoadU32(const uint8_t (&bytes)[4]) {
  uint32_t v = 0;
  std::memcpy(&v, bytes, sizeof(v));  // GGML stores qh little-endian, as x86 reads it
  return v;
}

void StoreU32(uint32_t v, uint8_t (&bytes)[4]) { std::memcpy(bytes, &v, sizeof(v)); }

// Nibble j (< 16) of a 32-element block is element j, the high nibble of
// byte j element j + 16; the fifth bit of element j is bit j of qh.
template <typename Ints>
void UnpackNibbles32(const uint8_t (&qs)[16], uint32_t qh, int bias, Ints& u) {
  for (int j = 0; j < 16; ++j) {
    u.code[j] = static_cast<int8_t>((qs[j] & 0x0F) + 16 * ((qh >> j) & 1) - bias);
    u.code[j + 16] = static_cast<int8_t>((qs[j] >> 4) + 16 * ((qh >> (j + 16)) & 1) - bias);
  }
}

template <typename Ints>
uint32_t PackNibbles32(const Ints& u, int bias, uint8_t (&qs)[16]) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = u.code[j] + bias;
    const int hi = u.code[j + 16] + bias;
    qs[j] = static_cast<uint8_t>((lo & 0x0F) | (hi & 0x0F) << 4);
    qh |= static_cast<uint32_t>(lo >> 4) << j | static_cast<uint32_t>(hi >> 4) << (j + 16);
  }
  return qh;
}

// The bit planes of the K-quants: fields of kBits bits, 8 / kBits to a
// byte, element e at bit kBits * (e / 32 % (8 / kBits)) of byte
// 32 * (e / (256 / kBits)) + e % 32. That is GGML's layout of the 2-bit
// codes (q2_K, q3_K, the top bits of q6_K), the nibbles (q4_K, q5_K) and
// the 1-bit planes (q3_K's hmask, q5_K's qh).
template <int kBits>
int FieldByte(int e) {
  return 32 * (e / (256 / kBits)) + e % 32;
}

template <int kBits>
int FieldShift(int e) {
  return kBits * (e / 32 % (8 / kBits));
}

template <int kBits, size_t kBytes>
int Field(const uint8_t (&bytes)[kBytes], int e) {
  static_assert(kBytes * 8 >= 256 * kBits);
  return (bytes[FieldByte<kBits>(e)] >> FieldShift<kBits>(e)) & ((1 << kBits) - 1);
}

// Writes bits [shift, shift + kBits) of each v[e] as field e.
template <int kBits, size_t kBytes>
void PackField(const int (&v)[256], int shift, uint8_t (&bytes)[kBytes]) {
  static_assert(kBytes * 8 >= 256 * kBits);
  std::memset(bytes, 0, kBytes);
  for (int e = 0; e < 256; ++e) {
    const int field = (v[e] >> shift) & ((1 << kBits) - 1);
    bytes[FieldByte<kBits>(e)] |= static_cast<uint8_t>(field << FieldShift<kBits>(e));
  }
}

// The stored codes of a K-quant: the integer form's codes plus the type's
// bias (4 for q3_K, 32 for q6_K, 0 for the others).
template <typename Ints>
void StoredCodes(const Ints& u, int bias, int (&q)[256]) {
  for (int e = 0; e < 256; ++e) q[e] = u.code[e] + bias;
}

// The 6-bit scales and mins of Q4_K and Q5_K (layout in quant.h).
void UnpackScales6(const uint8_t (&sc)[12], int16_t (&scale)[8], int16_t (&min)[8]) {
  for (int s = 0; s < 4; ++s) {
    scale[s] = sc[s] & 63;
    min[s] = sc[s + 4] & 63;
  }
  for (int s = 4; s < 8; ++s) {
    scale[s] = static_cast<int16_t>((sc[s + 4] & 0x0F) | (sc[s - 4] >> 6) << 4);
    min[s] = static_cast<int16_t>((sc[s + 4] >> 4) | (sc[s] >> 6) << 4);
  }
}

void PackScales6(const int16_t (&scale)[8], const int16_t (&min)[8], uint8_t (&sc)[12]) {
  for (int s = 0; s < 4; ++s) {
    sc[s] = static_cast<uint8_t>((scale[s] & 63) | (scale[s + 4] >> 4) << 6);
    sc[s + 4] = static_cast<uint8_t>((min[s] & 63) | (min[s + 4] >> 4) << 6);
    sc[s + 8] = static_cast<uint8_t>((scale[s + 4] & 0x0F) | (min[s + 4] & 0x0F) << 4);
  }
}

// d, dmin and the 6-bit scales and mins: the part q4_K and q5_K share.
template <typename Block, typename Ints>
void UnpackSixBitHeader(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  u.dmin = F16ToF32(b.dmin);
  UnpackScales6(b.scales, u.scale, u.min);
}

template <typename Ints, typename Block>
void PackSixBitHeader(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  b.dmin = F32ToF16(u.dmin);
  PackScales6(u.scale, u.min, b.scales);
}

}  // namespace

template <>
void FormatQ4_1::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  u.dmin = -F16ToF32(b.m);
  u.scale[0] = 1;
  u.min[0] = 1;
  UnpackNibbles32(b.qs, 0, 0, u);
}

template <>
void FormatQ4_1::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  b.m = F32ToF16(-u.dmin);
  PackNibbles32(u, 0, b.qs);
}

template <>
void FormatQ5_0::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  u.scale[0] = 1;
  UnpackNibbles32(b.qs, LoadU32(b.qh), 16, u);
}

template <>
void FormatQ5_0::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  StoreU32(PackNibbles32(u, 16, b.qs), b.qh);
}

template <>
void FormatQ5_1::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  u.dmin = -F16ToF32(b.m);
  u.scale[0] = 1;
  u.min[0] = 1;
  UnpackNibbles32(b.qs, LoadU32(b.qh), 0, u);
}

template <>
void FormatQ5_1::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  b.m = F32ToF16(-u.dmin);
  StoreU32(PackNibbles32(u, 0, b.qs), b.qh);
}

template <>
void FormatQ2_K::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  u.dmin = F16ToF32(b.dmin);
  for (int s = 0; s < 16; ++s) {
    u.scale[s] = b.scales[s] & 0x0F;
    u.min[s] = b.scales[s] >> 4;
  }
  for (int e = 0; e < 256; ++e) u.code[e] = static_cast<int8_t>(Field<2>(b.qs, e));
}

template <>
void FormatQ2_K::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  b.dmin = F32ToF16(u.dmin);
  for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<uint8_t>(u.scale[s] | u.min[s] << 4);
  int q[256];
  StoredCodes(u, 0, q);
  PackField<2>(q, 0, b.qs);
}

template <>
void FormatQ3_K::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  for (int s = 0; s < 16; ++s) {
    const int low = s < 8 ? b.scales[s] & 0x0F : b.scales[s - 8] >> 4;
    const int high = (b.scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    u.scale[s] = static_cast<int16_t>((low | high << 4) - 32);
  }
  for (int e = 0; e < 256; ++e) {
    u.code[e] = static_cast<int8_t>(Field<2>(b.qs, e) + 4 * Field<1>(b.hmask, e) - 4);
  }
}

template <>
void FormatQ3_K::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  std::memset(b.scales, 0, sizeof(b.scales));
  for (int s = 0; s < 16; ++s) {
    const int v = u.scale[s] + 32;
    b.scales[s % 8] |= static_cast<uint8_t>((v & 0x0F) << (s < 8 ? 0 : 4));
    b.scales[8 + s % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (s / 4)));
  }
  int q[256];
  StoredCodes(u, 4, q);
  PackField<2>(q, 0, b.qs);
  PackField<1>(q, 2, b.hmask);
}

template <>
void FormatQ4_K::Unpack(const Block& b, Ints& u) {
  UnpackSixBitHeader(b, u);
  for (int e = 0; e < 256; ++e) u.code[e] = static_cast<int8_t>(Field<4>(b.qs, e));
}

template <>
void FormatQ4_K::Pack(const Ints& u, Block& b) {
  PackSixBitHeader(u, b);
  int q[256];
  StoredCodes(u, 0, q);
  PackField<4>(q, 0, b.qs);
}

template <>
void FormatQ5_K::Unpack(const Block& b, Ints& u) {
  UnpackSixBitHeader(b, u);
  for (int e = 0; e < 256; ++e)
    u.code[e] = static_cast<int8_t>(Field<4>(b.qs, e) + 16 * Field<1>(b.qh, e));
}

template <>
void FormatQ5_K::Pack(const Ints& u, Block& b) {
  PackSixBitHeader(u, b);
  int q[256];
  StoredCodes(u, 0, q);
  PackField<4>(q, 0, b.qs);
  PackField<1>(q, 4, b.qh);
}

// Q6_K: element 128 h + 32 k + l has its low nibble in nibble k / 2 of
// ql[64 h + 32 (k % 2) + l]; its top two bits are the 2-bit plane qh.
template <>
void FormatQ6_K::Unpack(const Block& b, Ints& u) {
  u.d = F16ToF32(b.d);
  for (int s = 0; s < 16; ++s) u.scale[s] = b.scales[s];
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = e / 32 % 4, l = e % 32;
    const int low = (b.ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0x0F;
    u.code[e] = static_cast<int8_t>((low | Field<2>(b.qh, e) << 4) - 32);
  }
}

template <>
void FormatQ6_K::Pack(const Ints& u, Block& b) {
  b.d = F32ToF16(u.d);
  for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(u.scale[s]);
  int q[256];
  StoredCodes(u, 32, q);
  std::memset(b.ql, 0, sizeof(b.ql));
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = e / 32 % 4, l = e % 32;
    b.ql[64 * h + 32 * (k % 2) + l] |= static_cast<uint8_t>((q[e] & 0x0F) << (4 * (k / 2)));
  }
  PackField<2>(q, 4, b.qh);
}

}  // namespace h2o::kernels::ref
