#include "multimodal/media_prompt.h"

#include <string>

#include "base/error.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace tandem {
namespace {

MediaTokens FindTokens(const Tokenizer& tokenizer, std::string_view open, std::string_view close,
                       std::string_view placeholder, const std::string& noun) {
  MediaTokens t;
  t.open = tokenizer.FindToken(open);
  t.close = tokenizer.FindToken(close);
  t.placeholder = tokenizer.FindToken(placeholder);
  if (t.open < 0 || t.close < 0 || t.placeholder < 0) {
    Fail(ErrorKind::kUnsupported, "this model's vocabulary has no " + noun + " markup tokens (" +
                                      std::string(open) + ", " + std::string(placeholder) + ", " +
                                      std::string(close) + ")");
  }
  return t;
}

}  // namespace

MediaTokens FindImageTokens(const Tokenizer& tokenizer) {
  return FindTokens(tokenizer, chat_marker::kImageOpen, chat_marker::kImageClose,
                    chat_marker::kImage, "image");
}

MediaTokens FindAudioTokens(const Tokenizer& tokenizer) {
  return FindTokens(tokenizer, chat_marker::kAudioOpen, chat_marker::kAudioClose,
                    chat_marker::kAudio, "audio");
}

int ReplaceMediaMarkers(std::string& prompt, std::span<const std::string_view> placeholders) {
  size_t n = 0;
  for (size_t at = prompt.find(kMediaMarker); at != std::string::npos;
       at = prompt.find(kMediaMarker, at)) {
    const std::string_view p = n < placeholders.size() ? placeholders[n] : chat_marker::kImage;
    prompt.replace(at, kMediaMarker.size(), p);
    at += p.size();
    ++n;
  }
  return static_cast<int>(n);
}

void ExpandMedia(const std::vector<int32_t>& tokens, std::vector<MediaList> lists,
                 EngineRequest& request) {
  std::vector<size_t> next(lists.size(), 0), placeholders(lists.size(), 0);
  request.prompt.clear();
  request.media.clear();
  for (const int32_t token : tokens) {
    size_t k = 0;
    while (k < lists.size() && lists[k].markup.placeholder != token) ++k;
    if (k == lists.size()) {
      request.prompt.push_back(token);
      continue;
    }
    ++placeholders[k];
    if (next[k] == lists[k].items.size()) continue;
    PromptMedia& item = lists[k].items[next[k]++];
    request.prompt.push_back(lists[k].markup.open);
    item.begin = static_cast<int32_t>(request.prompt.size());
    request.prompt.insert(request.prompt.end(), item.count, lists[k].markup.placeholder);
    request.prompt.push_back(lists[k].markup.close);
    request.media.push_back(std::move(item));
  }
  for (size_t k = 0; k < lists.size(); ++k) {
    const size_t n = lists[k].items.size();
    if (placeholders[k] == n) continue;
    const std::string& noun = lists[k].noun;
    Fail(ErrorKind::kInvalidArgument, "the prompt has " + std::to_string(placeholders[k]) + " " +
                                          noun + " placeholder" +
                                          (placeholders[k] == 1 ? "" : "s") + " for " +
                                          std::to_string(n) + " " + noun + (n == 1 ? "" : "s"));
  }
}

}  // namespace tandem
