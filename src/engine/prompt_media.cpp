#include "engine/prompt_media.h"

#include <string>

#include "base/error.h"
#include "base/mix64.h"

namespace tandem {

std::vector<uint64_t> PromptKeys(const EngineRequest& request) {
  std::vector<uint64_t> keys(request.prompt.begin(), request.prompt.end());
  for (const PromptMedia& m : request.media) {
    for (int32_t i = 0; i < m.count; ++i) {
      // Token ids are below 2^31; a media key always has its top bit set.
      keys[m.begin + i] = Mix64(m.key + Mix64(static_cast<uint64_t>(i))) | (1ULL << 63);
    }
  }
  return keys;
}

void ValidatePromptMedia(const EngineRequest& request, int n_embd, int max_batch, bool both_ways) {
  const int64_t n_prompt = static_cast<int64_t>(request.prompt.size());
  int64_t end = 0;
  for (size_t i = 0; i < request.media.size(); ++i) {
    const PromptMedia& m = request.media[i];
    const std::string what = "media item " + std::to_string(i);
    if (m.count < 1 || m.begin < end || m.begin + int64_t{m.count} > n_prompt) {
      Fail(ErrorKind::kInvalidArgument, what + " (positions " + std::to_string(m.begin) + " +" +
                                            std::to_string(m.count) +
                                            ") is empty, overlaps the one before or ends past "
                                            "the prompt");
    }
    if (m.embeddings ? m.embeddings->size() != static_cast<size_t>(m.count) * n_embd : !m.job) {
      Fail(ErrorKind::kInvalidArgument, what + " does not have " + std::to_string(m.count) +
                                            " embedding rows of " + std::to_string(n_embd));
    }
    if (both_ways && !m.audio && m.count > max_batch) {
      Fail(ErrorKind::kInvalidArgument,
           what + " has " + std::to_string(m.count) +
               " soft tokens, which attend to each other and so must share one forward, but the "
               "batch holds " +
               std::to_string(max_batch) + " rows: raise --batch-size");
    }
    end = m.begin + m.count;
  }
}

const PromptMedia* MediaAt(const std::vector<PromptMedia>& media, int32_t pos) {
  for (const PromptMedia& m : media) {
    if (pos < m.begin) return nullptr;
    if (pos < m.begin + m.count) return &m;
  }
  return nullptr;
}

}  // namespace tandem
