// /v1/responses (OpenAI's Responses API: its parser and its response / typed event shapes on the
// skeleton of generation_route.h), and the stored responses: previous_response_id continued,
// a finished response kept, GET and DELETE /v1/responses/{id}.
#include <memory>
#include <string>
#include <utility>

#include "base/log.h"
#include "server/api_error.h"
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
// A request naming a previous_response_id continues that response's stored conversation; a
// response to be stored is kept once complete, before its last event or its body is sent.
class ResponsesDialect final : public ApiDialect {
 public:
  // `owner`: the API key the request presents; it owns what the request stores and finds only
  // what it stored.
  ResponsesDialect(std::shared_ptr<ResponseStore> store, std::string owner)
      : ApiDialect({.named_events = true, .open_at_once = true}),
        store_(std::move(store)),
        owner_(std::move(owner)) {}

  void Parse(const Json& body, GenerationRequest& request) override {
    keep_ = ResponsesStoreRequested(body, store_ != nullptr);
    Json history = Json::array();
    if (auto previous = OptionalString(body, "previous_response_id")) {
      const auto stored = store_->Get(*previous, owner_);
      if (stored == nullptr) {
        throw HttpError(
            404, "previous_response_id: Previous response with id '" + previous->substr(0, 100) +
                     "' not found (never stored under this API key, deleted, or "
                     "evicted from the response store, which keeps the " +
                     std::to_string(store_->max_count()) + " most recently used responses within " +
                     std::to_string(store_->max_bytes()) + " bytes)");
      }
      history = Json::parse(stored->conversation);
    }
    ParseResponsesBody(body, request, history);
    echo_ = ResponsesEcho(body, request, keep_);
    if (keep_) {
      conversation_ = std::move(history);
      for (const Json& item : InputItems(body)) conversation_.push_back(item);
    }
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
    Keep(response);
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
    Keep(response);
    const bool incomplete = response["status"] == "incomplete";
    return Send(out, {{"type", incomplete ? "response.incomplete" : "response.completed"},
                      {"response", std::move(response)}});
  }

 private:
  // Stores the finished `response` with its conversation (the one continued, this request's
  // input, the response's output), when asked to. One larger than the store's byte limit on its
  // own is not kept: the response says so (store false, a warning).
  void Keep(Json& response) {
    if (!keep_) return;
    Json conversation = conversation_;
    for (const Json& item : response["output"]) conversation.push_back(item);
    if (store_->Put(meta_.id, {JsonText(response), JsonText(conversation), owner_})) return;
    const std::string warning =
        "store: this response and its conversation are larger than the response store's " +
        std::to_string(store_->max_bytes()) +
        " bytes (--responses-store-bytes), so it was not stored";
    LogWarn("responses: " + meta_.id + ": " + warning);
    response["store"] = false;
    if (!response.contains("warnings")) response["warnings"] = Json::array();
    response["warnings"].push_back(warning);
  }

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

  const std::shared_ptr<ResponseStore> store_;  // null: the store is off
  const std::string owner_;
  bool keep_ = false;  // store this response once complete
  Json conversation_;  // kept: the continued conversation and this request's input items
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
  return ServeGeneration(
      context, http, std::make_shared<ResponsesDialect>(context.responses, PresentedApiKey(http)));
}

namespace {

// The {id} of /v1/responses/{id}, checked: the store on, no query parameter, no further path.
std::string StoredResponseId(const RouteContext& context, const HttpRequest& http) {
  const std::string id = http.path.substr(std::string("/v1/responses/").size());
  if (id.empty() || id.find('/') != std::string::npos) {
    throw HttpError(404, "unknown route: " + http.method + " " + http.path.substr(0, 200) +
                             " (tandem serves GET and DELETE /v1/responses/{id})");
  }
  if (!http.query.empty()) {
    throw HttpError(400, "query parameters are not supported on /v1/responses/{id} (got '" +
                             http.query.substr(0, 100) +
                             "'); tandem returns the stored response whole, never streamed");
  }
  if (context.responses == nullptr) {
    throw HttpError(404, "Response with id '" + id.substr(0, 100) +
                             "' not found: this server keeps no responses (it was started with "
                             "--responses-store-count 0 or --responses-store-bytes 0)");
  }
  return id;
}

[[noreturn]] void NotStored(const std::string& id) {
  throw HttpError(404, "Response with id '" + id.substr(0, 100) +
                           "' not found (never stored under this API key, deleted, or "
                           "evicted from the response store)");
}

}  // namespace

HttpResponse HandleGetResponse(const RouteContext& context, const HttpRequest& http) {
  const std::string id = StoredResponseId(context, http);
  const auto stored = context.responses->Get(id, PresentedApiKey(http));
  if (stored == nullptr) NotStored(id);
  HttpResponse response;
  response.body = stored->response;
  return response;
}

HttpResponse HandleDeleteResponse(const RouteContext& context, const HttpRequest& http) {
  const std::string id = StoredResponseId(context, http);
  if (!context.responses->Remove(id, PresentedApiKey(http))) NotStored(id);
  return JsonResponse(200, {{"id", id}, {"object", "response.deleted"}, {"deleted", true}});
}

}  // namespace tandem::server
