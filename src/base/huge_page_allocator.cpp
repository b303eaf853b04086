#include "base/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace tandem {

namespace {

constexpr size_t kSmallAlign = 64;

size_t RoundUp(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

void* AllocateLarge(size_t bytes) {
  if (bytes < kHugePageBytes) {
    return ::operator new (RoundUp(bytes == 0 ? 1 : bytes, kSmallAlign),
                           std::align_val_t{kSmallAlign});
  }
  // Map one huge page more than needed, keep the 2 MiB-aligned span and unmap the rest.
  const size_t size = RoundUp(bytes, kHugePageBytes);
  void* raw = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kHugePageBytes);
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t tail = aligned + size;
  const uintptr_t end = start + size + kHugePageBytes;
  if (end > tail) ::munmap(reinterpret_cast<void*>(tail), end - tail);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only: without transparent huge pages, 4 KiB pages
#endif
  return p;
}

void FreeLarge(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageBytes) {
    ::operator delete (p, std::align_val_t{kSmallAlign});
    return;
  }
  ::munmap(p, RoundUp(bytes, kHugePageBytes));
}

}  // namespace tandem
