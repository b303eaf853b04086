// Identifiers the APIs expect on responses and tool calls ("chatcmpl-…", "msg_…", "call_…").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tandem::server {

// `prefix` followed by 24 random characters from [A-Za-z0-9]. Thread-safe.
std::string RandomId(std::string_view prefix);

// Seconds since the Unix epoch (the "created" field).
int64_t UnixSeconds();

}  // namespace tandem::server
