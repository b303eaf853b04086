// The endpoint handlers. Each parses the body at the edge (throwing Error(kInvalidArgument) or
// HttpError for bad requests; the router turns those into error responses), runs the request,
// and answers with a whole JSON body or an SSE stream. The generating ones are the route skeleton
// (generation_route.h) run with their API's dialect.
#pragma once

#include <string_view>

#include "server/http_types.h"
#include "server/route_context.h"

namespace tandem::server {

// openai_routes.cpp
HttpResponse HandleChatCompletions(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleCompletions(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleModels(const RouteContext& context, const HttpRequest& request);

// responses_routes.cpp: OpenAI's Responses API: POST /v1/responses (store, previous_response_id
// over context.responses), GET /v1/responses/{id} (the stored response as it was returned) and
// DELETE /v1/responses/{id}; an unknown id, or no store, is a 404.
HttpResponse HandleResponses(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleGetResponse(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleDeleteResponse(const RouteContext& context, const HttpRequest& request);

// native_routes.cpp: llama-server's native /completion (its fields and its response shape).
HttpResponse HandleCompletion(const RouteContext& context, const HttpRequest& request);

// audio_routes.cpp: OpenAI's /v1/audio/transcriptions and /v1/audio/translations
// (multipart/form-data; needs an audio tower).
HttpResponse HandleTranscriptions(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleTranslations(const RouteContext& context, const HttpRequest& request);

// anthropic_routes.cpp
HttpResponse HandleMessages(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleCountTokens(const RouteContext& context, const HttpRequest& request);

// token_routes.cpp: llama-server's /tokenize ({content, add_special, parse_special,
// with_pieces} → {tokens}) and /detokenize ({tokens} → {content}).
HttpResponse HandleTokenize(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleDetokenize(const RouteContext& context, const HttpRequest& request);

// web_routes.cpp: the chat page (GET / and /web/NAME, public like /health: the page asks for
// the API key itself) and GET /props (the server state the page shows).
bool IsWebAsset(std::string_view path);
HttpResponse HandleWebAsset(const HttpRequest& request);
HttpResponse HandleProps(const RouteContext& context, const HttpRequest& request);

// slot_routes.cpp: llama-server's saved slots: GET /slots (every slot's state) and
// POST /slots/{id}?action=save|restore|erase (files under --slot-save-path).
HttpResponse HandleSlots(const RouteContext& context, const HttpRequest& request);
HttpResponse HandleSlotAction(const RouteContext& context, const HttpRequest& request);
// Throws Error(kInvalidArgument) naming `field` unless `name` is a plain file name: 1 to 200
// characters of [A-Za-z0-9._-], not starting with '.' and without "..".
void CheckSlotFileName(const std::string& name, const std::string& field);

}  // namespace tandem::server
