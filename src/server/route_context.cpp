// Shared steps of the generating routes.
#include "server/route_context.h"

#include <algorithm>

#include "base/error.h"
#include "server/api_error.h"

namespace tandem::server {

GenerationRequest NewRequest(const RouteContext& context) {
  GenerationRequest request;
  request.sampling = context.default_sampling;
  return request;
}

void CheckModel(const RouteContext& context, const std::string& name) {
  if (name.empty()) return;
  const auto& names = context.model_names;
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  throw HttpError(404,
                  "model '" + name + "' not found: this server serves '" + context.model_id + "'");
}

StartedGeneration StartGeneration(const RouteContext& context, const GenerationRequest& request) {
  StartedGeneration started;
  std::vector<int32_t> prompt = BuildPrompt(request, *context.tokenizer, context.limits);
  started.params = BuildGenerateParams(request, *context.tokenizer, context.limits);
  StreamOptions options;
  options.chat = request.chat;
  options.stop = request.stop;
  try {
    started.stream =
        std::make_unique<GenerationStream>(*context.backend, *context.tokenizer, std::move(prompt),
                                           started.params, std::move(options));
  } catch (const Error& e) {
    // The engine refuses with kUnsupported only when its queue is full.
    if (e.kind() == ErrorKind::kUnsupported) {
      throw HttpError(503, std::string("the server is busy: ") + e.what(),
                      context.retry_after_seconds);
    }
    throw;
  }
  return started;
}

HttpResponse JsonResponse(int status, const Json& body) {
  HttpResponse response;
  response.status = status;
  response.body = JsonText(body);
  return response;
}

}  // namespace tandem::server
