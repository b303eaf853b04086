// Media in requests, each dialect's way: OpenAI `image_url` and `input_audio` content parts,
// Anthropic `image` blocks, llama-server's `multimodal_data` with <__media__> markers (images or
// audio, told apart by their bytes). Only the bytes are read here (data URLs and base64);
// decoding waits for the prompt (multimodal/image_input.h, multimodal/audio_input.h).
#pragma once

#include <string>

#include "server/generation_request.h"
#include "server/json_fields.h"

namespace tandem::server {

// Bytes of one image or recording at most (before decoding; --body-limit bounds the whole
// request).
inline constexpr size_t kMaxImageBytes = 20u << 20;
inline constexpr size_t kMaxAudioBytes = 25u << 20;

// OpenAI: {"type": "image_url", "image_url": {"url": "data:image/png;base64,...", "detail":
// "auto"}}. A remote http(s) URL is refused (tandem fetches nothing), as is a detail other than
// "auto". Throws Error(kInvalidArgument) naming `where`.
RequestImage OpenAiImagePart(const Json& part, const std::string& where);

// Anthropic: {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data":
// "..."}}; a "url" source is refused likewise.
RequestImage AnthropicImageBlock(const Json& block, const std::string& where);

// OpenAI: {"type": "input_audio", "input_audio": {"data": "<base64>", "format": "wav"}}. The
// format is required (OpenAI's names: wav, mp3; tandem also decodes flac and ogg) and checked
// against the bytes when the audio is prepared. Throws Error(kInvalidArgument) naming `where`.
RequestAudio OpenAiInputAudioPart(const Json& part, const std::string& where);

// llama-server's /completion: `multimodal_data`, an array of base64 strings, one per
// <__media__> marker in the prompt, which becomes the image placeholder, or the audio
// placeholder when the bytes are a WAV, FLAC, Ogg or MP3 file. Throws when the counts differ or
// the prompt is given as token ids.
void ParseMultimodalData(const Json& body, GenerationRequest& request);

}  // namespace tandem::server
