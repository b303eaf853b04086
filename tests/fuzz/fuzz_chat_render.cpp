// libFuzzer target: arbitrary bytes parsed as an OpenAI or Anthropic request (chosen by the first
// byte), then rendered into a Gemma 4 prompt with and without thinking. Only tandem::Error may
// escape. Seeds: SDK request shapes with tools, tool calls and tool results (corpus/).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "server/anthropic_json.h"
#include "server/openai_json.h"
#include "tokenizer/chat_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool anthropic = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace tandem::server;
  try {
    const Json body = ParseJsonObject(text);
    GenerationRequest request;
    if (anthropic) {
      ParseMessagesBody(body, request);
    } else {
      ParseChatCompletionBody(body, request);
    }
    tandem::ChatRenderOptions options;
    for (bool thinking : {false, true}) {
      options.thinking = thinking;
      volatile size_t n = tandem::RenderChat(request.messages, request.tools, options).size();
      (void)n;
    }
  } catch (const tandem::Error&) {
  }
  return 0;
}
