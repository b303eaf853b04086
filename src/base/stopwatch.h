// Wall time for cost accounting and reports: milliseconds on the steady clock.
#pragma once

#include <chrono>

namespace tandem {

using SteadyClock = std::chrono::steady_clock;

// Milliseconds elapsed since t0.
inline double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

}  // namespace tandem
