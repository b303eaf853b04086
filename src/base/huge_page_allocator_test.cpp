#include "base/huge_page_allocator.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace tandem {
namespace {

// True if the 4 KiB page holding p is in the address space (mincore fails with ENOMEM if not).
bool Mapped(const void* p) {
  const uintptr_t page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  unsigned char v = 0;
  if (::mincore(reinterpret_cast<void*>(page), 4096, &v) == 0) return true;
  EXPECT_EQ(errno, ENOMEM);
  return false;
}

// "AnonHugePages" of the mapping that holds p, from /proc/self/smaps (kB), or -1 if not found.
long AnonHugeKb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's header line
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

TEST(HugePageAllocator, LargeBlocksAreHugePageAlignedAndGoBackToTheSystemWhenFreed) {
  if (!MapsLargeBlocks()) GTEST_SKIP() << "AddressSanitizer build: every block from operator new";
  const size_t bytes = 3 * kHugePageBytes + 12345;
  auto* p = static_cast<uint8_t*>(AllocateLarge(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  std::memset(p, 7, bytes);  // every byte is writable
  EXPECT_EQ(p[bytes - 1], 7);
  EXPECT_TRUE(Mapped(p));
  EXPECT_TRUE(Mapped(p + bytes - 1));
  FreeLarge(p, bytes);
  EXPECT_FALSE(Mapped(p)) << "a freed large block stays in the address space";
  EXPECT_FALSE(Mapped(p + bytes - 1));
}

TEST(HugePageAllocator, TouchedLargeBlocksGetHugePagesWhereTheKernelAdvisesThem) {
  if (!MapsLargeBlocks()) GTEST_SKIP() << "AddressSanitizer build: every block from operator new";
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(mode, modes);
  if (modes.find("[never]") != std::string::npos || modes.empty()) {
    GTEST_SKIP() << "transparent huge pages are off here (" << modes << ")";
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("THP_enabled:", 0) == 0 && line.find('0') != std::string::npos) {
      GTEST_SKIP() << "transparent huge pages are disabled for this process (prctl)";
    }
  }
  const size_t bytes = 4 * kHugePageBytes;
  auto* p = static_cast<uint8_t*>(AllocateLarge(bytes));
  std::memset(p, 1, bytes);
  const long kb = AnonHugeKb(p);
  FreeLarge(p, bytes);
  // The kernel may find no free huge page at the moment; one of four is the least we expect.
  EXPECT_GE(kb, static_cast<long>(kHugePageBytes / 1024)) << "THP modes: " << modes;
}

TEST(HugePageAllocator, SmallBlocksAreCacheLineAligned) {
  for (size_t bytes : {size_t{1}, size_t{100}, kHugePageBytes - 1}) {
    void* p = AllocateLarge(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 0, bytes);
    FreeLarge(p, bytes);
  }
}

TEST(HugePageAllocator, ActivationBufferBehavesAsAVector) {
  ActivationBuffer v(10, 1.5f);
  v.resize(kHugePageBytes / sizeof(float) * 2 + 3);  // crosses into a mapped block
  EXPECT_EQ(v[9], 1.5f);
  EXPECT_EQ(v.back(), 0.0f);  // value-initialised like std::vector
  ActivationBuffer(16).swap(v);
  EXPECT_EQ(v.size(), 16u);
}

}  // namespace
}  // namespace tandem
