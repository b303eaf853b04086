#include "multimodal/image_prompt.h"

#include <string>

#include "base/error.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace tandem {

ImageTokens FindImageTokens(const Tokenizer& tokenizer) {
  ImageTokens t;
  t.open = tokenizer.FindToken(chat_marker::kImageOpen);
  t.close = tokenizer.FindToken(chat_marker::kImageClose);
  t.placeholder = tokenizer.FindToken(chat_marker::kImage);
  if (t.open < 0 || t.close < 0 || t.placeholder < 0) {
    Fail(ErrorKind::kUnsupported, "this model's vocabulary has no image markup tokens (" +
                                      std::string(chat_marker::kImageOpen) + ", " +
                                      std::string(chat_marker::kImage) + ", " +
                                      std::string(chat_marker::kImageClose) + ")");
  }
  return t;
}

int ReplaceMediaMarkers(std::string& prompt) {
  int n = 0;
  for (size_t at = prompt.find(kMediaMarker); at != std::string::npos;
       at = prompt.find(kMediaMarker, at)) {
    prompt.replace(at, kMediaMarker.size(), chat_marker::kImage);
    ++n;
  }
  return n;
}

void ExpandImages(const std::vector<int32_t>& tokens, std::vector<PromptMedia> images,
                  const ImageTokens& markup, EngineRequest& request) {
  size_t next = 0;
  request.prompt.clear();
  request.media.clear();
  for (const int32_t token : tokens) {
    if (token != markup.placeholder) {
      request.prompt.push_back(token);
      continue;
    }
    if (next == images.size()) break;
    PromptMedia& image = images[next++];
    request.prompt.push_back(markup.open);
    image.begin = static_cast<int32_t>(request.prompt.size());
    request.prompt.insert(request.prompt.end(), image.count, markup.placeholder);
    request.prompt.push_back(markup.close);
    request.media.push_back(std::move(image));
  }
  size_t placeholders = 0;
  for (const int32_t token : tokens) placeholders += token == markup.placeholder;
  if (placeholders != images.size()) {
    Fail(ErrorKind::kInvalidArgument,
         "the prompt has " + std::to_string(placeholders) + " image placeholder" +
             (placeholders == 1 ? "" : "s") + " (" + std::string(chat_marker::kImage) + ") for " +
             std::to_string(images.size()) + " image" + (images.size() == 1 ? "" : "s"));
  }
}

}  // namespace tandem
