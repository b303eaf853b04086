// libFuzzer target: arbitrary bytes as an Anthropic /v1/messages body. Only tandem::Error may
// escape the parser. Seeds: the request shapes @anthropic-ai/sdk sends (corpus/).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "server/anthropic_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace tandem::server;
  try {
    const Json body = ParseJsonObject(text);
    GenerationRequest request;
    ParseMessagesBody(body, request);
    for (const tandem::ToolSpec& t : request.tools) (void)JsonText(t.parameters);
  } catch (const tandem::Error&) {
  }
  return 0;
}
