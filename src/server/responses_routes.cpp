// /v1/responses (OpenAI's Responses API: its parser and its response / typed event shapes on the
// skeleton of generation_route.h).
#include <memory>
#include <string>
#include <utility>

#include "server/generation_route.h"
#include "server/ids.h"
#include "server/responses_json.h"
#include "server/routes.h"

namespace tandem::server {
namespace {

// A response object, or its typed events (each with its sequence_number, named by its type):
// response.created and response.in_progress at once; then each output item added, its content
// streamed (reasoning_text / output_text deltas, function-call arguments) and done, as the output
// changes kind; then response.completed (or response.incomplete) with the whole response.
class ResponsesDialect final : public ApiDialect {
 public:
  ResponsesDialect() : ApiDialect({.named_events = true, .open_at_once = true}) {}

  void Parse(const Json& body, GenerationRequest& request) override {
    ParseResponsesBody(body, request);
    echo_ = ResponsesEcho(body, request);
  }

  void Admitted(const GenerationRun& run) override {
    meta_ = {RandomId("resp_"), UnixSeconds(), run.context.model_id};
  }

  Json Whole(GenerationRun& run, const ChatOutput& output, const Json& timings) override {
    const GenerationTotals& totals = run.stream().totals();
    Json response = ResponseObject(
        meta_, echo_, OutputItems(output, totals.finish == FinishReason::kLength), &totals);
    response["timings"] = timings;
    if (!output.warnings.empty()) response["warnings"] = output.warnings;
    return response;
  }

  bool Open(GenerationRun&, SseWriter& out) override {
    const Json response = ResponseObject(meta_, echo_, Json::array(), nullptr);
    return Send(out, {{"type", "response.created"}, {"response", response}}) &&
           Send(out, {{"type", "response.in_progress"}, {"response", response}});
  }

  bool Parts(GenerationRun&, SseWriter& out, const ParsedDelta& delta) override {
    for (const ChatPart& part : delta.parts) {
      if (!SendPart(out, part)) return false;
    }
    return true;
  }

  bool Finish(GenerationRun& run, SseWriter& out, Json timings) override {
    const GenerationTotals& totals = run.stream().totals();
    // The item being written when the tokens ran out is incomplete, as the whole response has it.
    const char* status = totals.finish == FinishReason::kLength ? "incomplete" : "completed";
    if (!CloseItem(out, status)) return false;
    // Nothing generated: one empty message, as the whole response has.
    if (output_.empty() && (!OpenItem(out, ChatPartKind::kContent) || !CloseItem(out, status))) {
      return false;
    }
    Json response = ResponseObject(meta_, echo_, output_, &totals);
    response["timings"] = std::move(timings);
    if (!run.generation.warnings.empty()) response["warnings"] = run.generation.warnings;
    const bool incomplete = response["status"] == "incomplete";
    return Send(out, {{"type", incomplete ? "response.incomplete" : "response.completed"},
                      {"response", std::move(response)}});
  }

 private:
  bool Send(SseWriter& out, Json event) {
    event["sequence_number"] = sequence_++;
    return out.Event(event);
  }

  // The fields that place an event in the open item's content.
  Json InContent(const char* type) const {
    return {{"type", type},
            {"item_id", item_id_},
            {"output_index", output_.size()},
            {"content_index", 0}};
  }

  bool SendPart(SseWriter& out, const ChatPart& part) {
    switch (part.kind) {
      case ChatPartKind::kContent:
      case ChatPartKind::kReasoning: {
        if ((!item_open_ || open_ != part.kind) && (!CloseItem(out) || !OpenItem(out, part.kind))) {
          return false;
        }
        text_ += part.text;
        const bool content = part.kind == ChatPartKind::kContent;
        Json event =
            InContent(content ? "response.output_text.delta" : "response.reasoning_text.delta");
        event["delta"] = part.text;
        if (content) event["logprobs"] = Json::array();
        return Send(out, std::move(event));
      }
      case ChatPartKind::kToolCall: {
        if (!CloseItem(out)) return false;
        const std::string id = RandomId("fc_");
        const size_t index = output_.size();
        Json item = FunctionCallItem(id, part.tool_call, "in_progress");
        const std::string arguments = item["arguments"].get<std::string>();
        item["arguments"] = "";
        if (!Send(out, {{"type", "response.output_item.added"},
                        {"output_index", index},
                        {"item", item}}) ||
            !Send(out, {{"type", "response.function_call_arguments.delta"},
                        {"item_id", id},
                        {"output_index", index},
                        {"delta", arguments}}) ||
            !Send(out, {{"type", "response.function_call_arguments.done"},
                        {"item_id", id},
                        {"output_index", index},
                        {"name", part.tool_call.name},
                        {"arguments", arguments}})) {
          return false;
        }
        item = FunctionCallItem(id, part.tool_call, "completed");
        output_.push_back(item);
        return Send(out, {{"type", "response.output_item.done"},
                          {"output_index", index},
                          {"item", std::move(item)}});
      }
    }
    return false;
  }

  // Adds an item (a message or reasoning) with an empty content part.
  bool OpenItem(SseWriter& out, ChatPartKind kind) {
    const bool content = kind == ChatPartKind::kContent;
    item_id_ = RandomId(content ? "msg_" : "rs_");
    item_open_ = true;
    open_ = kind;
    text_.clear();
    Json item = content ? MessageItem(item_id_, "", "in_progress")
                        : ReasoningItem(item_id_, "", "in_progress");
    item["content"] = Json::array();
    Json part_added = InContent("response.content_part.added");
    part_added["part"] = content ? OutputTextPart("") : ReasoningTextPart("");
    return Send(out, {{"type", "response.output_item.added"},
                      {"output_index", output_.size()},
                      {"item", std::move(item)}}) &&
           Send(out, std::move(part_added));
  }

  // Ends the open item: its text done, its part done, the item done with `status`.
  bool CloseItem(SseWriter& out, const char* status = "completed") {
    if (!item_open_) return true;
    item_open_ = false;
    const bool content = open_ == ChatPartKind::kContent;
    Json text_done =
        InContent(content ? "response.output_text.done" : "response.reasoning_text.done");
    text_done["text"] = text_;
    if (content) text_done["logprobs"] = Json::array();
    Json part_done = InContent("response.content_part.done");
    part_done["part"] = content ? OutputTextPart(text_) : ReasoningTextPart(text_);
    Json item =
        content ? MessageItem(item_id_, text_, status) : ReasoningItem(item_id_, text_, status);
    const size_t index = output_.size();
    output_.push_back(item);
    return Send(out, std::move(text_done)) && Send(out, std::move(part_done)) &&
           Send(out, {{"type", "response.output_item.done"},
                      {"output_index", index},
                      {"item", std::move(item)}});
  }

  Json echo_;
  ResponsesMeta meta_;
  int64_t sequence_ = 0;
  Json output_ = Json::array();  // the items done so far
  bool item_open_ = false;       // a message or reasoning item is open, at output_.size()
  ChatPartKind open_ = ChatPartKind::kContent;
  std::string item_id_;
  std::string text_;  // the open item's text so far
};

}  // namespace

HttpResponse HandleResponses(const RouteContext& context, const HttpRequest& http) {
  return ServeGeneration(context, http, std::make_shared<ResponsesDialect>());
}

}  // namespace tandem::server
