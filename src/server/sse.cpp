// SSE event framing.
#include "server/sse.h"

namespace tandem::server {
namespace {

// An event name must not break the framing.
std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

std::string SseData(const Json& data) {
  return "data: " + JsonText(data) + "\n\n";
}

std::string SseEvent(std::string_view name, const Json& data) {
  return "event: " + OneLine(name) + "\ndata: " + JsonText(data) + "\n\n";
}

std::string SseDone() {
  return "data: [DONE]\n\n";
}

std::string SseComment(std::string_view text) {
  return ": " + OneLine(text) + "\n\n";
}

}  // namespace tandem::server
