// Memory for large working buffers that come and go (a prefill's activations): blocks of 2 MiB
// or more are mapped on their own, 2 MiB aligned and advised for transparent huge pages
// (MADV_HUGEPAGE: Linux often enables them for advised memory only), and unmapped when freed, so
// they leave the resident set at once. A 4 KiB page's first touch is a page fault, dear in a
// VM with paravirtualised page tables, and a prefill touches tens of thousands of them; a huge
// page takes one fault per 2 MiB. Smaller blocks come from operator new, and so does every
// block under AddressSanitizer.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace tandem {

// Blocks at least this large are mapped on their own (and huge-page advised).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of memory, 64-byte aligned (2 MiB aligned and mapped when bytes >= kHugePageBytes and
// MapsLargeBlocks()). Throws
// std::bad_alloc. Free with FreeLarge(p, bytes), the same bytes.
void* AllocateLarge(size_t bytes);
void FreeLarge(void* p, size_t bytes) noexcept;
// False under AddressSanitizer: then every block comes from operator new.
bool MapsLargeBlocks();

// A std::allocator for such buffers: std::vector<float, HugePageAllocator<float>>.
template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(AllocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { FreeLarge(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// A float buffer of activations.
using ActivationBuffer = std::vector<float, HugePageAllocator<float>>;

}  // namespace tandem
