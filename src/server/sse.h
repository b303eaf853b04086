// Server-sent events framing (text/event-stream): one JSON payload per event, each event ended
// by a blank line, data always on one line.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "server/json_fields.h"

namespace tandem::server {

// How long one streamer call waits for tokens, and the idle time after which a keep-alive goes
// out (writing is how a vanished client is noticed while the request waits).
inline constexpr auto kSsePoll = std::chrono::milliseconds(200);
inline constexpr auto kSseKeepAlive = std::chrono::seconds(2);

// "data: {json}\n\n" (OpenAI chunks).
std::string SseData(const Json& data);
// "event: NAME\ndata: {json}\n\n" (Anthropic events).
std::string SseEvent(std::string_view name, const Json& data);
// "data: [DONE]\n\n", OpenAI's end of stream.
std::string SseDone();
// ": TEXT\n\n", a comment clients ignore (keep-alive). Newlines in `text` become spaces.
std::string SseComment(std::string_view text);

}  // namespace tandem::server
