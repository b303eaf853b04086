// Wall time for cost accounting and reports: milliseconds on the steady clock.
#pragma once

#include <chrono>

namespace tandem {

using SteadyClock = std::chrono::steady_clock;

// Milliseconds elapsed since t0.
inline double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

// A rate per second of n things done in `ms` milliseconds (0 when no time passed).
inline double PerSecond(double n, double ms) {
  return ms > 0 ? n * 1000.0 / ms : 0.0;
}

}  // namespace tandem
