// What the routes share: the loaded model and engine, the server's defaults, and the steps of a
// generating request before its response (new request with defaults, model check, admission:
// prompt, parameters, constraint, submit). The response side is generation_route.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_cache.h"
#include "sampling/sampling_params.h"
#include "server/backend.h"
#include "server/generation_request.h"
#include "server/generation_stream.h"
#include "server/http_types.h"
#include "server/json_fields.h"
#include "server/request_to_prompt.h"
#include "server/response_store.h"
#include "tokenizer/tokenizer.h"

namespace tandem {
class AudioInput;
class ImageInput;
}  // namespace tandem

namespace tandem::server {

struct RouteContext {
  Backend* backend = nullptr;
  const Tokenizer* tokenizer = nullptr;
  std::shared_ptr<GrammarCache> grammars;  // compiles constraints; null: constraints are a 400
  ModelLimits limits;
  SamplingParams default_sampling;
  bool json_one_line = false;            // --json-one-line: GenerationRequest::json_one_line
  std::string model_id;                  // what /v1/models lists (the target's file name)
  std::string assistant_id;              // the drafter's file name; empty: none loaded
  std::vector<std::string> model_names;  // names requests may use (id, stem, aliases)
  int retry_after_seconds = 1;           // Retry-After on 503 queue full
  ImageInput* images = nullptr;          // -mm: the vision tower's input; null: no images
  AudioInput* audio = nullptr;           // -mm: the audio tower's input; null: no audio
  std::string slot_save_path;            // --slot-save-path; empty: save/restore refused (501)
  // Kept Responses API responses (--responses-store-count / -bytes); null: the store is off.
  std::shared_ptr<ResponseStore> responses;
};

// A request preset with the server's defaults (sampling, JSON whitespace; the rest empty).
GenerationRequest NewRequest(const RouteContext& context);

// Throws HttpError(404) unless `name` is empty or one of context.model_names.
void CheckModel(const RouteContext& context, const std::string& name);

// A submitted generation and the engine parameters it runs with.
struct StartedGeneration {
  std::unique_ptr<GenerationStream> stream;
  GenerateParams params;
  std::vector<int32_t> prompt;        // the prompt's token ids
  std::vector<std::string> warnings;  // the request's own (GenerationRequest::warnings)
  std::string request_id;             // X-Request-Id, for log lines
};

// Logs each warning of a request (the request's own and tool-call text that could not be
// parsed) with its id; the response carries them in `warnings`.
void LogWarnings(const StartedGeneration& generation, const std::vector<std::string>& warnings);

// Builds the prompt and parameters and submits. Throws Error(kInvalidArgument) for a request
// that cannot run (400) and HttpError(503, Retry-After) when the engine's queue is full.
StartedGeneration StartGeneration(const RouteContext& context, const HttpRequest& http,
                                  const GenerationRequest& request);

// A JSON response with the given status.
HttpResponse JsonResponse(int status, const Json& body);

}  // namespace tandem::server
