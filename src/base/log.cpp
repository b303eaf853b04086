#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace tandem {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_mutex;  // keeps lines from different threads whole

void Write(LogLevel level, const char* prefix, std::string_view message) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "%s%.*s\n", prefix, static_cast<int>(message.size()), message.data());
}

}  // namespace

void SetLogLevel(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel GetLogLevel() {
  return static_cast<LogLevel>(g_level.load());
}

void LogInfo(std::string_view message) {
  Write(LogLevel::kInfo, "", message);
}
void LogWarn(std::string_view message) {
  Write(LogLevel::kWarn, "warning: ", message);
}
void LogError(std::string_view message) {
  Write(LogLevel::kError, "error: ", message);
}

}  // namespace tandem
