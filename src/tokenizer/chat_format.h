// Gemma 4 chat format: renders a conversation into the prompt text the model was tuned on.
//
// The output follows Google's Gemma 4 chat templates (the E2B/E4B and 26B/31B variants shipped
// with the checkpoints): `<bos>`, an optional system turn holding `<|think|>`, the system text and
// the tool declarations, then one `<|turn>ROLE\n…<turn|>\n` per message, with tool calls and
// tool results written inside the model turn in Gemma 4's `<|"|>`-quoted syntax. The result is
// text; the tokenizer must map the marker strings to their special tokens.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tokenizer/chat_types.h"

namespace tandem {

// The marker strings of the format (each one token in the Gemma 4 vocabulary).
namespace chat_marker {
inline constexpr std::string_view kBos = "<bos>";
inline constexpr std::string_view kEos = "<eos>";
inline constexpr std::string_view kTurnOpen = "<|turn>";
inline constexpr std::string_view kTurnClose = "<turn|>";
inline constexpr std::string_view kThink = "<|think|>";
inline constexpr std::string_view kChannelOpen = "<|channel>";
inline constexpr std::string_view kChannelClose = "<channel|>";
inline constexpr std::string_view kToolOpen = "<|tool>";
inline constexpr std::string_view kToolClose = "<tool|>";
inline constexpr std::string_view kToolCallOpen = "<|tool_call>";
inline constexpr std::string_view kToolCallClose = "<tool_call|>";
inline constexpr std::string_view kToolResponseOpen = "<|tool_response>";
inline constexpr std::string_view kToolResponseClose = "<tool_response|>";
inline constexpr std::string_view kQuote = "<|\"|>";
// Media: an image part is written as its placeholder; the prompt builder expands each one into
// kImageOpen, the image's soft tokens (each a kImage placeholder row) and kImageClose.
inline constexpr std::string_view kImage = "<|image|>";
inline constexpr std::string_view kImageOpen = "<|image>";
inline constexpr std::string_view kImageClose = "<image|>";
// An audio part likewise: kAudioOpen, one kAudio row per 40 ms, kAudioClose.
inline constexpr std::string_view kAudio = "<|audio|>";
inline constexpr std::string_view kAudioOpen = "<|audio>";
inline constexpr std::string_view kAudioClose = "<audio|>";
// Channel name the model writes after `<|channel>` for its reasoning, followed by "\n".
inline constexpr std::string_view kThoughtChannel = "thought";
}  // namespace chat_marker

// Texts of the tokens that end generation: `<eos>`, `<turn|>` and `<|tool_response>` (the model
// emits the last one after a tool call to hand control back). Match generated tokens by text.
std::span<const std::string_view> EndOfGenerationTokenTexts();
bool IsEndOfGenerationTokenText(std::string_view token_text);

struct ChatRenderOptions {
  // Puts `<|think|>` in the system turn so the model reasons in a thought channel first.
  bool thinking = false;
  // Ends the prompt with the opening of the model's turn (unless the last model turn was left
  // open for the model to continue after tool results).
  bool add_generation_prompt = true;
  // 26B-A4B / 31B templates: with thinking off, the generation prompt also gets an empty closed
  // thought block `<|channel>thought\n<channel|>`. E2B/E4B templates do not, and priming them
  // with it makes reasoning leak into the answer. The caller decides from the model (true for
  // the models without per-layer embeddings).
  bool empty_thought_when_thinking_off = false;
  // Writes "<bos>" first, as the templates do. Turn off if the tokenizer adds BOS itself.
  bool add_bos = true;
};

// Renders `messages` with `tools` declared. Rules (from the official templates):
// * A system turn is written when messages[0] is kSystem, when tools are given or when thinking
//   is on: `<|turn>system\n` + (`<|think|>\n`) + trimmed system text +
//   `<|tool>declaration:…<tool|>` per tool + `<turn|>\n`. Later kSystem messages become ordinary
//   system turns.
// * User and system text is trimmed. Assistant text is trimmed and loses any
//   `<|channel>…<channel|>` segments; `reasoning` is written back only for assistant messages
//   after the last user message that make tool calls (interleaved thinking).
// * Assistant tool calls become `<|tool_call>call:NAME{key:value,…}<tool_call|>` (keys sorted).
//   The kTool messages that follow are written into the same model turn as
//   `<|tool_response>response:NAME{value:<|"|>TEXT<|"|>}<tool_response|>`, NAME from the call
//   whose id equals tool_call_id, else `name`, else "unknown". A model turn ending in tool
//   results stays open when the next message is from the assistant (or there is none): the
//   model continues it directly.
// Throws Error(kInvalidArgument) for a tool message that does not follow an assistant message
// with tool calls, for tool-call arguments that are not a JSON object, and for JSON nested
// deeper than 64 levels; the message names the message index.
std::string RenderChat(std::span<const ChatMessage> messages, std::span<const ToolSpec> tools,
                       const ChatRenderOptions& options);

// One tool declaration without the `<|tool>` / `<tool|>` wrapper:
// `declaration:NAME{description:<|"|>…<|"|>,parameters:{properties:{…},required:[…],type:…}}`.
std::string RenderToolDeclaration(const ToolSpec& tool);

}  // namespace tandem
