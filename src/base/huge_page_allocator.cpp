#include "base/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace tandem {

namespace {

constexpr size_t kSmallAlign = 64;

// Under AddressSanitizer every block comes from operator new, so that reads and writes past a
// buffer's end are still caught (a mapping of its own has no redzones).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLargeBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMapLargeBlocks = false;
#else
constexpr bool kMapLargeBlocks = true;
#endif
#else
constexpr bool kMapLargeBlocks = true;
#endif

bool OwnMapping(size_t bytes) {
  return kMapLargeBlocks && bytes >= kHugePageBytes;
}

size_t RoundUp(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

bool MapsLargeBlocks() {
  return kMapLargeBlocks;
}

void* AllocateLarge(size_t bytes) {
  if (!OwnMapping(bytes)) {
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
  if (!OwnMapping(bytes)) {
    ::operator delete (p, std::align_val_t{kSmallAlign});
    return;
  }
  ::munmap(p, RoundUp(bytes, kHugePageBytes));
}

}  // namespace tandem
