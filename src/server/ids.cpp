// Random response and tool-call identifiers.
#include "server/ids.h"

#include <chrono>
#include <mutex>
#include <random>

namespace tandem::server {

std::string RandomId(std::string_view prefix) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::string id(prefix);
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return id;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tandem::server
