#include "server/media_fields.h"

#include <algorithm>

#include "base/error.h"
#include "media/audio_format.h"
#include "media/base64.h"
#include "media/data_url.h"
#include "multimodal/media_prompt.h"
#include "tokenizer/chat_format.h"

namespace tandem::server {

namespace {

[[noreturn]] void Remote(const std::string& where) {
  Fail(ErrorKind::kInvalidArgument,
       where + ": remote image URLs are not fetched; send the image inline (a base64 data URL)");
}

RequestImage FromDataUrl(const std::string& url, const std::string& where) {
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) Remote(where);
  if (!IsDataUrl(url)) {
    Fail(ErrorKind::kInvalidArgument, where + ": expected a data URL (data:image/...;base64,...)");
  }
  try {
    DataUrl data = ParseDataUrl(url, kMaxImageBytes);
    return {std::move(data.bytes), std::move(data.mime), where};
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, where + ": " + e.what());
  }
}

std::vector<uint8_t> FromBase64(const std::string& text, const std::string& where,
                                size_t max_bytes = kMaxImageBytes) {
  try {
    return DecodeBase64(text, max_bytes);
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, where + ": " + e.what());
  }
}

}  // namespace

RequestImage OpenAiImagePart(const Json& part, const std::string& where) {
  const std::string iw = FieldPath(where, "image_url");
  const Json& image_url = RequiredField(part, "image_url", where);
  if (image_url.is_string()) return FromDataUrl(image_url.get<std::string>(), iw);
  ExpectType(image_url, "object", iw);
  RejectUnknownFields(image_url, {"url", "detail"}, iw);
  if (auto detail = OptionalString(image_url, "detail", iw); detail && *detail != "auto") {
    Fail(ErrorKind::kInvalidArgument,
         FieldPath(iw, "detail") + ": '" + *detail +
             "' is not supported (tandem sizes images by --image-budget; use \"auto\")");
  }
  return FromDataUrl(RequiredString(image_url, "url", iw), FieldPath(iw, "url"));
}

RequestImage AnthropicImageBlock(const Json& block, const std::string& where) {
  const std::string sw = FieldPath(where, "source");
  const Json& source = RequiredField(block, "source", where);
  ExpectType(source, "object", sw);
  const std::string type = RequiredString(source, "type", sw);
  if (type == "url") Remote(sw);
  if (type != "base64") {
    Fail(ErrorKind::kInvalidArgument,
         FieldPath(sw, "type") + ": '" + type + "' is not supported (base64 only)");
  }
  RejectUnknownFields(source, {"type", "media_type", "data"}, sw);
  RequestImage image;
  image.mime = RequiredString(source, "media_type", sw);
  image.bytes = FromBase64(RequiredString(source, "data", sw), FieldPath(sw, "data"));
  image.where = where;
  return image;
}

RequestAudio OpenAiInputAudioPart(const Json& part, const std::string& where) {
  const std::string aw = FieldPath(where, "input_audio");
  const Json& input = RequiredField(part, "input_audio", where);
  ExpectType(input, "object", aw);
  RejectUnknownFields(input, {"data", "format"}, aw);
  RequestAudio audio;
  audio.format = RequiredString(input, "format", aw);
  if (audio.format.empty()) {
    Fail(ErrorKind::kInvalidArgument, FieldPath(aw, "format") + " must not be empty");
  }
  const std::string data = RequiredString(input, "data", aw);
  if (IsDataUrl(data)) {
    Fail(ErrorKind::kInvalidArgument,
         FieldPath(aw, "data") + ": expected plain base64, not a data URL");
  }
  audio.bytes = FromBase64(data, FieldPath(aw, "data"), kMaxAudioBytes);
  audio.where = where;
  return audio;
}

void ParseMultimodalData(const Json& body, GenerationRequest& request) {
  const Json* data = FindField(body, "multimodal_data");
  if (data == nullptr) return;
  ExpectType(*data, "array", "multimodal_data");
  if (!request.prompt_tokens.empty()) {
    Fail(ErrorKind::kInvalidArgument,
         "multimodal_data needs a text prompt with a <__media__> marker per item, not token ids");
  }
  std::vector<std::string_view> placeholders;
  for (size_t i = 0; i < data->size(); ++i) {
    const std::string where = ElementPath("multimodal_data", i);
    ExpectType((*data)[i], "string", where);
    std::vector<uint8_t> bytes =
        FromBase64((*data)[i].get<std::string>(), where, std::max(kMaxImageBytes, kMaxAudioBytes));
    bool audio = true;
    try {
      (void)SniffAudioFormat(bytes);
    } catch (const Error&) {
      audio = false;
    }
    if (audio) {
      request.audio.push_back({std::move(bytes), "", where});
      placeholders.push_back(chat_marker::kAudio);
    } else {
      if (bytes.size() > kMaxImageBytes) {
        Fail(ErrorKind::kInvalidArgument, where + ": an image of " + std::to_string(bytes.size()) +
                                              " bytes is over the limit of " +
                                              std::to_string(kMaxImageBytes));
      }
      request.images.push_back({std::move(bytes), "", where});
      placeholders.push_back(chat_marker::kImage);
    }
  }
  const size_t markers = static_cast<size_t>(ReplaceMediaMarkers(request.prompt, placeholders));
  if (markers != data->size()) {
    Fail(ErrorKind::kInvalidArgument, "multimodal_data has " + std::to_string(data->size()) +
                                          " items, the prompt " + std::to_string(markers) +
                                          " <__media__> markers: they must match");
  }
}

}  // namespace tandem::server
