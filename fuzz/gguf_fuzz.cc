// File bytes -> gguf::File, then the vocabulary loader and tokenizer built
// from its metadata: the path a downloaded model takes before any tensor is
// touched. The bytes go through a memfd so File::Open runs exactly as it
// does for a file on disk (mmap included), with no disk I/O per input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/gguf_vocab.h"

namespace {

int g_fd = -1;
std::string g_path;

// A crash in the fuzzer's own plumbing must not pass for a finding.
void Check(bool ok, const char* what) {
  if (!ok) {
    perror(what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fd = memfd_create("gguf_fuzz", 0);
  Check(g_fd >= 0, "memfd_create");
  g_path = "/proc/self/fd/" + std::to_string(g_fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Check(ftruncate(g_fd, 0) == 0, "ftruncate");
  Check(pwrite(g_fd, data, size, 0) == static_cast<ssize_t>(size), "pwrite");
  auto file = h2o::gguf::File::Open(g_path);
  if (!file.ok()) return 0;
  const h2o::gguf::File& f = *file.value();
  for (const h2o::gguf::KeyValue& kv : f.metadata()) (void)h2o::gguf::FormatValue(kv.value);
  // The parser promises every tensor's bytes lie inside the file; ASan does
  // not watch the mapping, so check the arithmetic and touch both ends.
  for (const h2o::gguf::TensorInfo& t : f.tensors()) {
    const uint64_t room = f.file_size() - f.data_offset();
    if (t.offset > room || t.nbytes > room - t.offset) std::abort();
    if (t.nbytes > 0) {
      volatile uint8_t sink = t.data[0];
      sink = t.data[t.nbytes - 1];
      (void)sink;
    }
  }
  auto tokenizer = h2o::LoadTokenizerFromGguf(f);
  if (!tokenizer.ok()) return 0;
  const std::vector<int32_t> ids = tokenizer.value().Encode("Hello, world! <s> 123", true);
  (void)tokenizer.value().Decode(ids, true);
  return 0;
}
