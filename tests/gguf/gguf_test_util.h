// Helpers for the gguf tests: a temporary directory, whole-file byte I/O, and
// a hand encoder of GGUF bytes that shares no code with gguf::Writer, so the
// reader is checked against bytes laid out by the spec, not by our writer.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace h2o::gguf::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("h2o_gguf_test_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Little-endian GGUF primitives, appended in call order.
class Bytes {
 public:
  // resize + memcpy rather than insert: GCC 12 warns (-Wstringop-overflow,
  // a false positive) on an inlined insert into an empty vector.
  Bytes& Raw(const void* p, size_t n) {
    const size_t old = v_.size();
    v_.resize(old + n);
    if (n > 0) std::memcpy(v_.data() + old, p, n);
    return *this;
  }
  Bytes& U8(uint8_t x) { return Raw(&x, 1); }
  Bytes& U32(uint32_t x) { return Raw(&x, 4); }
  Bytes& I32(int32_t x) { return Raw(&x, 4); }
  Bytes& U64(uint64_t x) { return Raw(&x, 8); }
  Bytes& I64(int64_t x) { return Raw(&x, 8); }
  Bytes& F32(float x) { return Raw(&x, 4); }
  Bytes& Str(const std::string& s) {
    U64(s.size());
    return Raw(s.data(), s.size());
  }
  Bytes& Header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    Raw("GGUF", 4);
    U32(version);
    U64(n_tensors);
    return U64(n_kv);
  }
  // A key/value whose value is a uint32 (type 4).
  Bytes& KvU32(const std::string& key, uint32_t x) { return Str(key).U32(4).U32(x); }
  // A tensor info: name, n_dims, dims, GGML type, offset.
  Bytes& TensorInfo(const std::string& name, const std::vector<int64_t>& dims, uint32_t type,
                    uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) I64(d);
    return U32(type).U64(offset);
  }
  Bytes& PadTo(size_t alignment) {
    while (v_.size() % alignment != 0) v_.push_back(0);
    return *this;
  }
  Bytes& Zeros(size_t n) {
    v_.resize(v_.size() + n, 0);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return v_; }
  size_t size() const { return v_.size(); }

 private:
  std::vector<uint8_t> v_;
};

inline std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

}  // namespace h2o::gguf::testing
