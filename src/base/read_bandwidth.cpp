// Streaming-read bandwidth probe (see read_bandwidth.h).
#include "base/read_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/huge_page_allocator.h"

namespace tandem {
namespace {

constexpr size_t kChunk = size_t{1} << 20;  // 1 MiB per task

// Sums a range of 64-bit words with four independent chains; the compiler vectorises it with
// the baseline ISA, which is far faster than DRAM on every x86-64.
uint64_t SumWords(const uint64_t* p, size_t n) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    a0 += p[i];
    a1 += p[i + 1];
    a2 += p[i + 2];
    a3 += p[i + 3];
  }
  return a0 + a1 + a2 + a3;  // n is a multiple of 4 here
}

}  // namespace

ReadBuffer::ReadBuffer(size_t bytes) : bytes_(std::max(kChunk, bytes & ~(kChunk - 1))) {
  data_ = static_cast<unsigned char*>(AllocateLarge(bytes_));
  std::memset(data_, 1, bytes_);
}

ReadBuffer::~ReadBuffer() {
  FreeLarge(data_, bytes_);
}

unsigned long long ReadBuffer::ReadAll(ThreadPool& pool) const {
  const size_t n_tasks = bytes_ / kChunk;
  std::vector<uint64_t> sums(n_tasks);
  pool.ParallelFor(n_tasks, [&](size_t task) {
    sums[task] = SumWords(reinterpret_cast<const uint64_t*>(data_ + task * kChunk), kChunk / 8);
  });
  unsigned long long total = 0;
  for (uint64_t s : sums) total += s;
  return total;
}

double MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int repeats) {
  ReadBuffer buffer(bytes);
  double best = 0;
  volatile unsigned long long sink = buffer.ReadAll(pool);  // warm up page tables
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    sink = sink + buffer.ReadAll(pool);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0 && buffer.bytes() / seconds > best) best = buffer.bytes() / seconds;
  }
  return best;
}

}  // namespace tandem
