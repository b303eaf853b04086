// Leveled logging to stderr. Warnings are for features that cannot be active as asked.
#pragma once

#include <string_view>

namespace tandem {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kSilent = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

void LogInfo(std::string_view message);
void LogWarn(std::string_view message);
void LogError(std::string_view message);

}  // namespace tandem
