// The probes in plain C++ (probes_isa.h): what the compiler makes of them with the baseline ISA.
#include "kernels/probes_isa.h"

namespace tandem::kernels::ref {

uint64_t ReadSum(const void* p, size_t bytes) {
  const uint64_t* w = static_cast<const uint64_t*>(p);
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i < bytes / 8; i += 4) {
    a0 += w[i];
    a1 += w[i + 1];
    a2 += w[i + 2];
    a3 += w[i + 3];
  }
  return a0 + a1 + a2 + a3;
}

int64_t Int8MultiplyAdds(int64_t rounds, int32_t* sum) {
  constexpr int kAcc = 8;
  uint32_t acc[kAcc] = {};  // unsigned: the sums wrap
  int32_t a = 3, b = -5;
  for (int64_t r = 0; r < rounds; ++r) {
    for (int k = 0; k < kAcc; ++k)
      acc[k] += static_cast<uint32_t>(static_cast<int8_t>(a) * static_cast<int8_t>(b));
    __asm__ volatile("" : "+r"(a), "+r"(b));  // the operands are unknown to the compiler
  }
  uint32_t s = 0;
  for (uint32_t v : acc) s += v;
  *sum = static_cast<int32_t>(s);
  return rounds * kAcc;
}

}  // namespace tandem::kernels::ref
