#include "core/resident_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace h2o {

void PopulateForWrite(void* data, size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + bytes;
  const uintptr_t first_page = begin / page * page;
#ifdef MADV_POPULATE_WRITE
  // The pages at either end hold bytes of the range, so they are mapped;
  // populating leaves the bytes around it as they are. Best effort: an
  // older kernel refuses, and the writes below fault the pages in.
  const uintptr_t last_page_end = (end + page - 1) / page * page;
  (void)madvise(reinterpret_cast<void*>(first_page), last_page_end - first_page,
                MADV_POPULATE_WRITE);
#endif
  // Always a byte of the range itself: another thread may own the rest of
  // an end page.
  auto* range = static_cast<volatile uint8_t*>(data);
  for (uintptr_t p = first_page; p < end; p += page) range[(p < begin ? begin : p) - begin] = 0;
}

}  // namespace h2o
