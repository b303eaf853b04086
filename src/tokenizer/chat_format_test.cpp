// Tests of the Gemma 4 chat renderer: golden prompts for each feature, model-size and error case.
//
// The goldens were produced by rendering the same conversations with Google's Gemma 4 chat
// templates (E2B/E4B template, and the 26B/31B generation prompt) in Python Jinja2, except the
// tests marked "tandem rule", which cover conversations where the official template emits a
// broken prompt.
#include "tokenizer/chat_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

using nlohmann::json;

// (GCC 12 warns about designated initializers that skip members, so messages are built here.)
ChatMessage Message(ChatRole role, std::string text) {
  ChatMessage message;
  message.role = role;
  message.content = std::move(text);
  return message;
}
ChatMessage System(std::string text) {
  return Message(ChatRole::kSystem, std::move(text));
}
ChatMessage User(std::string text) {
  return Message(ChatRole::kUser, std::move(text));
}
ChatMessage Assistant(std::string text) {
  return Message(ChatRole::kAssistant, std::move(text));
}
ChatMessage Calls(std::vector<ToolCall> calls, std::string reasoning = "") {
  ChatMessage message = Message(ChatRole::kAssistant, "");
  message.reasoning = std::move(reasoning);
  message.tool_calls = std::move(calls);
  return message;
}
ChatMessage Result(std::string id, std::string text) {
  ChatMessage message = Message(ChatRole::kTool, std::move(text));
  message.tool_call_id = std::move(id);
  return message;
}
ChatMessage NamedResult(std::string name, std::string text) {
  ChatMessage message = Message(ChatRole::kTool, std::move(text));
  message.name = std::move(name);
  return message;
}

ChatRenderOptions Options(bool thinking, bool empty_thought) {
  ChatRenderOptions options;
  options.thinking = thinking;
  options.empty_thought_when_thinking_off = empty_thought;
  return options;
}
ChatRenderOptions Small(bool thinking = false) {
  return Options(thinking, false);
}
ChatRenderOptions Large(bool thinking = false) {
  return Options(thinking, true);
}

std::string Render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options,
                   const std::vector<ToolSpec>& tools = {}) {
  return RenderChat(messages, tools, options);
}

ToolSpec WeatherTool() {
  return {"get_weather", "Current weather for a place.", json::parse(R"({
            "type": "object",
            "properties": {
              "location": {"type": "string", "description": "City name, e.g. Paris"},
              "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
              "days": {"type": "integer", "description": "Forecast days", "nullable": true}
            },
            "required": ["location"]})")};
}

ToolSpec SearchTool() {
  return {"search", "Search documents.", json::parse(R"({
            "type": "object",
            "properties": {
              "query": {"type": "string"},
              "filters": {"type": "object", "description": "Optional filters",
                          "properties": {"lang": {"type": "string"},
                                         "tags": {"type": "array", "items": {"type": "string"}}},
                          "required": ["lang"]},
              "limit": {"type": "integer"}
            },
            "required": ["query"]})")};
}

ToolSpec NowTool() {
  return {"now", "Current time.", nullptr};
}

TEST(ChatFormatTest, UserOnlySmallModelEndsAtModelTurn) {
  EXPECT_EQ(Render({User("Hello")}, Small()), R"g(<bos><|turn>user
Hello<turn|>
<|turn>model
)g");
}

TEST(ChatFormatTest, UserOnlyLargeModelAddsEmptyThoughtWhenThinkingOff) {
  EXPECT_EQ(Render({User("Hello")}, Large()), R"g(<bos><|turn>user
Hello<turn|>
<|turn>model
<|channel>thought
<channel|>)g");
}

TEST(ChatFormatTest, ThinkingOnPutsThinkTokenInSystemTurnForBothSizes) {
  const char* expected = R"g(<bos><|turn>system
<|think|>
You are terse.<turn|>
<|turn>user
Hi<turn|>
<|turn>model
)g";
  std::vector<ChatMessage> messages = {System("  You are terse. \n"), User("Hi")};
  EXPECT_EQ(Render(messages, Small(true)), expected);
  EXPECT_EQ(Render(messages, Large(true)), expected);
}

TEST(ChatFormatTest, ThinkingWithoutSystemMessageStillOpensSystemTurn) {
  EXPECT_EQ(Render({User("Hi")}, Small(true)), R"g(<bos><|turn>system
<|think|>
<turn|>
<|turn>user
Hi<turn|>
<|turn>model
)g");
}

TEST(ChatFormatTest, MultiTurnStripsPreviousThoughts) {
  ChatMessage answer = Assistant("<|channel>thought\nEasy.<channel|>Paris.");
  answer.reasoning = "not rendered: no tool call";
  std::vector<ChatMessage> messages = {
      System("Be brief."), User(" What is the capital of France? "), answer, User("And of Italy?")};
  EXPECT_EQ(Render(messages, Large()), R"g(<bos><|turn>system
Be brief.<turn|>
<|turn>user
What is the capital of France?<turn|>
<|turn>model
Paris.<turn|>
<|turn>user
And of Italy?<turn|>
<|turn>model
<|channel>thought
<channel|>)g");
}

TEST(ChatFormatTest, ToolDeclarationsFromJsonSchema) {
  EXPECT_EQ(Render({User("Weather in Paris?")}, Small(), {WeatherTool(), SearchTool(), NowTool()}),
            R"g(<bos><|turn>system
<|tool>declaration:get_weather{description:<|"|>Current weather for a place.<|"|>,parameters:{properties:{days:{description:<|"|>Forecast days<|"|>,nullable:true,type:<|"|>INTEGER<|"|>},location:{description:<|"|>City name, e.g. Paris<|"|>,type:<|"|>STRING<|"|>},unit:{enum:[<|"|>celsius<|"|>,<|"|>fahrenheit<|"|>],type:<|"|>STRING<|"|>}},required:[<|"|>location<|"|>],type:<|"|>OBJECT<|"|>}}<tool|><|tool>declaration:search{description:<|"|>Search documents.<|"|>,parameters:{properties:{filters:{description:<|"|>Optional filters<|"|>,properties:{lang:{type:<|"|>STRING<|"|>},tags:{items:{type:<|"|>STRING<|"|>},type:<|"|>ARRAY<|"|>}},required:[<|"|>lang<|"|>],type:<|"|>OBJECT<|"|>},limit:{type:<|"|>INTEGER<|"|>},query:{type:<|"|>STRING<|"|>}},required:[<|"|>query<|"|>],type:<|"|>OBJECT<|"|>}}<tool|><|tool>declaration:now{description:<|"|>Current time.<|"|>}<tool|><turn|>
<|turn>user
Weather in Paris?<turn|>
<|turn>model
)g");
}

TEST(ChatFormatTest, ToolCallsAndResultsShareTheModelTurn) {
  std::vector<ChatMessage> messages = {
      User("Weather in Paris and Rome?"),
      Calls({{"call_1", "get_weather", R"({"unit":"celsius","location":"Paris"})"},
             {"call_2", "get_weather",
              R"({"location":"Rome","days":2,"opts":{"hourly":false,"fields":["temp","wind"]}})"}},
            "Need both cities; not rendered, a user message follows."),
      Result("call_2", R"({"temp": 24})"),
      Result("call_1", R"({"temp": 18})"),
      Assistant("Paris 18 C, Rome 24 C."),
      User("Thanks!")};
  EXPECT_EQ(Render(messages, Small(true), {WeatherTool()}), R"g(<bos><|turn>system
<|think|>
<|tool>declaration:get_weather{description:<|"|>Current weather for a place.<|"|>,parameters:{properties:{days:{description:<|"|>Forecast days<|"|>,nullable:true,type:<|"|>INTEGER<|"|>},location:{description:<|"|>City name, e.g. Paris<|"|>,type:<|"|>STRING<|"|>},unit:{enum:[<|"|>celsius<|"|>,<|"|>fahrenheit<|"|>],type:<|"|>STRING<|"|>}},required:[<|"|>location<|"|>],type:<|"|>OBJECT<|"|>}}<tool|><turn|>
<|turn>user
Weather in Paris and Rome?<turn|>
<|turn>model
<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|><|tool_call>call:get_weather{days:2,location:<|"|>Rome<|"|>,opts:{fields:[<|"|>temp<|"|>,<|"|>wind<|"|>],hourly:false}}<tool_call|><|tool_response>response:get_weather{value:<|"|>{"temp": 24}<|"|>}<tool_response|><|tool_response>response:get_weather{value:<|"|>{"temp": 18}<|"|>}<tool_response|>Paris 18 C, Rome 24 C.<turn|>
<|turn>user
Thanks!<turn|>
<|turn>model
)g");
}

TEST(ChatFormatTest, EndingInToolResultsLeavesTurnOpenWithoutPrompt) {
  std::vector<ChatMessage> messages = {User("Time?"), Calls({{"t1", "now", "{}"}}),
                                       NamedResult("now", "12:00")};
  EXPECT_EQ(Render(messages, Large(), {NowTool()}), R"g(<bos><|turn>system
<|tool>declaration:now{description:<|"|>Current time.<|"|>}<tool|><turn|>
<|turn>user
Time?<turn|>
<|turn>model
<|tool_call>call:now{}<tool_call|><|tool_response>response:now{value:<|"|>12:00<|"|>}<tool_response|>)g");
}

TEST(ChatFormatTest, InterleavedReasoningAfterLastUserIsKept) {
  std::vector<ChatMessage> messages = {
      User("Time in Tokyo?"), Calls({{"t1", "now", R"({"tz":"Asia/Tokyo"})"}}, "Call the clock."),
      Result("t1", "21:00"), Calls({{"t2", "now", R"({"tz":"Asia/Tokyo"})"}}, "Check again."),
      Result("t2", "21:01")};
  EXPECT_EQ(Render(messages, Large(true), {NowTool()}), R"g(<bos><|turn>system
<|think|>
<|tool>declaration:now{description:<|"|>Current time.<|"|>}<tool|><turn|>
<|turn>user
Time in Tokyo?<turn|>
<|turn>model
<|channel>thought
Call the clock.
<channel|><|tool_call>call:now{tz:<|"|>Asia/Tokyo<|"|>}<tool_call|><|tool_response>response:now{value:<|"|>21:00<|"|>}<tool_response|><|channel>thought
Check again.
<channel|><|tool_call>call:now{tz:<|"|>Asia/Tokyo<|"|>}<tool_call|><|tool_response>response:now{value:<|"|>21:01<|"|>}<tool_response|>)g");
}

TEST(ChatFormatTest, CallWithoutResultEndsWithToolResponseToken) {
  std::vector<ChatMessage> messages = {User("Time?"), Calls({{"t1", "now", ""}})};
  EXPECT_EQ(Render(messages, Small(), {NowTool()}), R"g(<bos><|turn>system
<|tool>declaration:now{description:<|"|>Current time.<|"|>}<tool|><turn|>
<|turn>user
Time?<turn|>
<|turn>model
<|tool_call>call:now{}<tool_call|><|tool_response>)g");
}

// Tandem rule: the official template omits the generation prompt after a closed model turn that
// made tool calls; tandem opens the next model turn as for any other closed turn.
TEST(ChatFormatTest, ClosedToolTurnStillGetsGenerationPrompt) {
  std::vector<ChatMessage> messages = {User("Time?"), Calls({{"t1", "now", "{}"}}),
                                       Result("t1", "12:00"), Assistant("It is noon.")};
  EXPECT_EQ(Render(messages, Large()), R"g(<bos><|turn>user
Time?<turn|>
<|turn>model
<|tool_call>call:now{}<tool_call|><|tool_response>response:now{value:<|"|>12:00<|"|>}<tool_response|>It is noon.<turn|>
<|turn>model
<|channel>thought
<channel|>)g");
}

// Tandem rule: a model turn ending in tool results is closed before a user message.
TEST(ChatFormatTest, OpenToolTurnIsClosedBeforeUserMessage) {
  std::vector<ChatMessage> messages = {User("Time?"), Calls({{"t1", "now", "{}"}}),
                                       Result("t1", "12:00"), User("Never mind.")};
  EXPECT_EQ(Render(messages, Small()), R"g(<bos><|turn>user
Time?<turn|>
<|turn>model
<|tool_call>call:now{}<tool_call|><|tool_response>response:now{value:<|"|>12:00<|"|>}<tool_response|><turn|>
<|turn>user
Never mind.<turn|>
<|turn>model
)g");
}

TEST(ChatFormatTest, ResultNameFallsBackToMessageNameThenUnknown) {
  std::string out = Render({User("q"), Calls({{"x", "f", "{}"}, {"y", "g", "{}"}}),
                            NamedResult("lookup", "a"), Result("nope", "b")},
                           Small());
  EXPECT_NE(out.find("response:lookup{value:<|\"|>a<|\"|>}"), std::string::npos) << out;
  EXPECT_NE(out.find("response:unknown{value:<|\"|>b<|\"|>}"), std::string::npos) << out;
}

TEST(ChatFormatTest, WithoutGenerationPromptOrBos) {
  ChatRenderOptions options = Large();
  options.add_generation_prompt = false;
  options.add_bos = false;
  EXPECT_EQ(Render({User("Hi"), Assistant("Hello!")}, options),
            "<|turn>user\nHi<turn|>\n<|turn>model\nHello!<turn|>\n");
}

TEST(ChatFormatTest, DeclarationTakesFirstNonNullTypeAndClosesWithoutType) {
  ToolSpec tool = {"f", "d", json::parse(R"({"properties":{
                       "a":{"type":["null","string"]},
                       "b":{"type":"array","items":{"type":["integer","null"]}}}})")};
  EXPECT_EQ(
      RenderToolDeclaration(tool),
      R"g(declaration:f{description:<|"|>d<|"|>,parameters:{properties:{a:{type:<|"|>STRING<|"|>},b:{items:{type:[<|"|>INTEGER<|"|>,<|"|>NULL<|"|>]},type:<|"|>ARRAY<|"|>}}}})g");
}

TEST(ChatFormatTest, ArgumentKeysSortCaseInsensitivelyAndNullIsNull) {
  std::string out =
      Render({User("q"), Calls({{"", "f", R"({"b":null,"Zeta":1.5,"a":[true,"x"]})"}})}, Small());
  EXPECT_NE(out.find("call:f{a:[true,<|\"|>x<|\"|>],b:null,Zeta:1.5}"), std::string::npos) << out;
}

void ExpectInvalid(const std::vector<ChatMessage>& messages, const std::string& fragment,
                   const std::vector<ToolSpec>& tools = {}) {
  try {
    Render(messages, Small(), tools);
    FAIL() << "expected an error mentioning " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ChatFormatTest, BadConversationsThrowNamingTheMessage) {
  ExpectInvalid({User("q"), Result("t1", "orphan")}, "chat message 1");
  ExpectInvalid({User("q"), Calls({{"t1", "f", "{not json"}})}, "chat message 1");
  ExpectInvalid({User("q"), Calls({{"t1", "f", "[1,2]"}})}, "not a JSON object");
  ChatMessage user_with_call = User("q");
  user_with_call.tool_calls.push_back({"t1", "f", "{}"});
  ExpectInvalid({user_with_call}, "only assistant");
  std::string deep = std::string(100, '[') + std::string(100, ']');
  ExpectInvalid({User("q"), Calls({{"t1", "f", "{\"a\":" + deep + "}"}})}, "nested deeper");
  ExpectInvalid({User("q")}, "parameters must be", {{"f", "", json::array({1})}});
}

TEST(ChatFormatTest, EndOfGenerationTokens) {
  std::vector<std::string_view> texts(EndOfGenerationTokenTexts().begin(),
                                      EndOfGenerationTokenTexts().end());
  EXPECT_EQ(texts, (std::vector<std::string_view>{"<eos>", "<turn|>", "<|tool_response>"}));
  EXPECT_TRUE(IsEndOfGenerationTokenText("<turn|>"));
  EXPECT_FALSE(IsEndOfGenerationTokenText("<|turn>"));
  EXPECT_FALSE(IsEndOfGenerationTokenText("<tool_response|>"));
}

TEST(ChatFormatTest, ParseChatRole) {
  EXPECT_EQ(ParseChatRole("developer"), ChatRole::kSystem);
  EXPECT_EQ(ParseChatRole("model"), ChatRole::kAssistant);
  EXPECT_EQ(ParseChatRole("tool"), ChatRole::kTool);
  EXPECT_THROW(ParseChatRole("wizard"), Error);
}

}  // namespace
}  // namespace tandem
