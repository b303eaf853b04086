// The machine probes (see machine_limits.h).
#include "kernels/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "kernels/isa.h"

namespace tandem::kernels {
namespace {

constexpr size_t kChunk = size_t{1} << 20;  // the buffer's unit

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
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
  const auto read_sum = ActiveKernels().read_sum;
  std::vector<unsigned long long> sums(pool.size());
  pool.ParallelForRange(bytes_ / kChunk, [&](size_t begin, size_t end, int thread) {
    sums[thread] += read_sum(data_ + begin * kChunk, (end - begin) * kChunk);
  });
  unsigned long long total = 0;
  for (unsigned long long s : sums) total += s;
  return total;
}

double MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int repeats) {
  ReadBuffer buffer(bytes);
  double best = 0;
  volatile unsigned long long sink = buffer.ReadAll(pool);  // warm up page tables
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    sink = sink + buffer.ReadAll(pool);
    const double seconds = Seconds(start);
    if (seconds > 0 && buffer.bytes() / seconds > best) best = buffer.bytes() / seconds;
  }
  return best;
}

double MeasureInt8Peak(ThreadPool& pool, int64_t rounds, int repeats) {
  const auto multiply_adds = ActiveKernels().int8_multiply_adds;
  std::vector<int64_t> done(pool.size());
  std::vector<int32_t> sums(pool.size());
  double best = 0;
  for (int r = 0; r <= repeats; ++r) {  // the first round warms the cores up and is not counted
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelForRange(pool.size(), [&](size_t, size_t, int thread) {
      done[thread] = multiply_adds(rounds, &sums[thread]);
    });
    const double seconds = Seconds(start);
    double total = 0;
    for (size_t t = 0; t < done.size(); ++t) {
      // The sum is -15 per multiply-add: a probe that skipped work would be caught here.
      if (static_cast<uint32_t>(sums[t]) != static_cast<uint32_t>(-15 * done[t])) {
        Fail(ErrorKind::kInternal, "the int8 peak probe's checksum is wrong");
      }
      total += static_cast<double>(done[t]);
    }
    if (r > 0 && seconds > 0) best = std::max(best, total / seconds);
  }
  return best;
}

}  // namespace tandem::kernels
