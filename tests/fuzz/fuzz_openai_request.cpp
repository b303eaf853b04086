// libFuzzer target: arbitrary bytes as an OpenAI /v1/chat/completions and /v1/completions body.
// Only tandem::Error may escape the parsers; a crash, a stack overflow (deep nesting), a leak or
// UB is a finding. Seeds: the request shapes the openai npm SDK sends (corpus/).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "server/openai_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace tandem::server;
  try {
    const Json body = ParseJsonObject(text);
    GenerationRequest chat;
    try {
      ParseChatCompletionBody(body, chat);
      for (const tandem::ToolSpec& t : chat.tools) (void)JsonText(t.parameters);
    } catch (const tandem::Error&) {
    }
    GenerationRequest completion;
    ParseCompletionBody(body, completion);
  } catch (const tandem::Error&) {
  }
  return 0;
}
