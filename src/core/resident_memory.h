// Backing memory with RAM before it is first written. A page's first write
// otherwise traps (about 10 us per 4 KiB page measured on a 2-core PVM
// guest), and in a batched decode step every sequence's new KV pages would
// trap in the same step, stalling all of them.
#pragma once

#include <cstddef>

namespace h2o {

// Makes the pages that [data, data + bytes) touches resident and writable
// now: the kernel fills the range in one call where it offers that
// (MADV_POPULATE_WRITE, Linux 5.14: 0.6-0.9 us per page on that guest),
// then one of the range's own bytes per page is written, because a guest
// whose hypervisor shadows its page tables still traps on that first
// write (5 us per page there, populated or not). So the contents of the
// range are unspecified afterwards (it is meant for memory not yet
// written); bytes outside it are left as they are.
void PopulateForWrite(void* data, size_t bytes);

}  // namespace h2o
