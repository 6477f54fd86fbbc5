// Constants of the GGUF container format shared by the reader and writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace h2o::gguf {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kMinVersion = 2;  // v1 used 32-bit counts
inline constexpr uint32_t kMaxVersion = 3;
inline constexpr uint32_t kWriteVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr std::string_view kAlignmentKey = "general.alignment";
inline constexpr uint32_t kMaxDims = 4;

// x rounded up to a multiple of alignment (a power of two); the caller
// guarantees that the result does not overflow.
inline constexpr uint64_t AlignUp(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

inline constexpr bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// `name` in single quotes for error messages, kept to one short line:
// control bytes become \xNN and names past 120 bytes are cut with "...".
std::string Quote(std::string_view name);

}  // namespace h2o::gguf
