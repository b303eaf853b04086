// What `tandem run` reports after generating: timings, memory and speculative statistics, as
// text for people or as one JSON object for scripts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/model_options.h"
#include "engine/generator.h"

namespace tandem::cli {

nlohmann::json GenerationJson(const std::string& text, const GenerateResult& r,
                              const LoadedModels& m, size_t kv_bytes);
// Human-readable summary lines (for stderr).
std::string GenerationSummary(const GenerateResult& r, const LoadedModels& m, size_t kv_bytes);

}  // namespace tandem::cli
