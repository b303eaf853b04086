// Shared steps of the generating routes.
#include "server/route_context.h"

#include "multimodal/audio_input.h"
#include "multimodal/image_input.h"
#include "multimodal/media_prompt.h"

#include <algorithm>

#include "base/error.h"
#include "base/log.h"
#include "server/api_error.h"
#include "server/constraint_fields.h"

namespace tandem::server {

GenerationRequest NewRequest(const RouteContext& context) {
  GenerationRequest request;
  request.sampling = context.default_sampling;
  request.json_one_line = context.json_one_line;
  return request;
}

void CheckModel(const RouteContext& context, const std::string& name) {
  if (name.empty()) return;
  const auto& names = context.model_names;
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  throw HttpError(404,
                  "model '" + name + "' not found: this server serves '" + context.model_id + "'");
}

void LogWarnings(const StartedGeneration& generation, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    LogWarn("server: request " + generation.request_id + ": " + w);
  }
}

namespace {

// The request's images and audio, decoded and prepared before any model work, and the prompt
// with their markup and soft-token rows. Errors name the item's place in the request.
std::vector<PromptMedia> PrepareMedia(const RouteContext& context, const GenerationRequest& request,
                                      std::vector<int32_t>& prompt) {
  if (request.images.empty() && request.audio.empty()) return {};
  std::vector<MediaList> lists;
  if (!request.images.empty()) {
    if (context.images == nullptr) {
      Fail(ErrorKind::kInvalidArgument,
           request.images[0].where +
               ": this model has no vision projector: start the server with --mmproj");
    }
    try {
      context.images->CheckImageCount(request.images.size());
    } catch (const Error& e) {
      Fail(ErrorKind::kInvalidArgument,
           request.images[context.images->options().max_per_request].where + ": " + e.what());
    }
    MediaList& list = lists.emplace_back();
    list.markup = FindImageTokens(*context.tokenizer);
    for (const RequestImage& image : request.images) {
      try {
        list.items.push_back(
            context.images->ToMedia(context.images->Prepare(image.bytes, image.mime)));
      } catch (const Error& e) {
        Fail(ErrorKind::kInvalidArgument, image.where + ": " + e.what());
      }
    }
  }
  if (!request.audio.empty()) {
    if (context.audio == nullptr) {
      Fail(ErrorKind::kInvalidArgument,
           request.audio[0].where +
               ": this model has no audio encoder: start the server with an --mmproj that has "
               "one (Gemma 4 E2B or E4B)");
    }
    try {
      context.audio->CheckCount(request.audio.size());
    } catch (const Error& e) {
      Fail(ErrorKind::kInvalidArgument,
           request.audio[context.audio->options().max_per_request].where + ": " + e.what());
    }
    MediaList& list = lists.emplace_back();
    list.markup = FindAudioTokens(*context.tokenizer);
    list.noun = "recording";
    for (const RequestAudio& audio : request.audio) {
      try {
        list.items.push_back(context.audio->ToMedia(
            audio.prepared ? *audio.prepared : context.audio->Prepare(audio.bytes, audio.format)));
      } catch (const Error& e) {
        Fail(ErrorKind::kInvalidArgument, audio.where + ": " + e.what());
      }
    }
  }
  EngineRequest expanded;
  ExpandMedia(prompt, std::move(lists), expanded);
  if (static_cast<int64_t>(expanded.prompt.size()) >= context.limits.n_ctx) {
    Fail(ErrorKind::kInvalidArgument,
         "the prompt has " + std::to_string(expanded.prompt.size()) +
             " tokens with its media's soft tokens, but the context is " +
             std::to_string(context.limits.n_ctx) +
             " (it must leave room for at least one new token)");
  }
  prompt = std::move(expanded.prompt);
  return std::move(expanded.media);
}

}  // namespace

StartedGeneration StartGeneration(const RouteContext& context, const HttpRequest& http,
                                  const GenerationRequest& request) {
  StartedGeneration started;
  started.request_id = http.Header("x-request-id");
  std::shared_ptr<CompiledGrammar> grammar = CompileConstraint(request, context.grammars.get());
  std::vector<int32_t> prompt = BuildPrompt(request, *context.tokenizer, context.limits);
  std::vector<PromptMedia> media = PrepareMedia(context, request, prompt);
  started.params =
      BuildGenerateParams(request, *context.tokenizer, context.limits, std::move(grammar));
  // Suffix drafting keeps each API key's text apart; requests without one share a tenant
  // (docs/mtp.md § Suffix drafting).
  started.params.tenant = PresentedApiKey(http);
  started.warnings = request.warnings;
  started.prompt = prompt;
  StreamOptions options;
  options.chat = request.chat;
  options.stop = request.stop;
  options.max_tool_calls = request.max_tool_calls;
  try {
    started.stream =
        std::make_unique<GenerationStream>(*context.backend, *context.tokenizer, std::move(prompt),
                                           started.params, std::move(options), std::move(media));
  } catch (const Error& e) {
    // A full queue or a stopping engine: retryable. Anything else (kUnsupported included) is
    // the request's own fault and keeps its 400.
    if (e.kind() == ErrorKind::kUnavailable) {
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
