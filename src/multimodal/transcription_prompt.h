// The chat message that asks Gemma 4 for a transcription (or an English translation) of a
// recording: the instruction, then the audio part. One place for the wording, shared by
// `tandem transcribe` and the server's /v1/audio/transcriptions and /v1/audio/translations.
#pragma once

#include <string>

#include "tokenizer/chat_types.h"

namespace tandem {

struct TranscriptionTask {
  bool translate = false;  // into English (OpenAI's /v1/audio/translations)
  std::string language;    // ISO-639-1 code of the speech ("en"); empty: not given
  std::string prompt;      // earlier text or vocabulary to follow (OpenAI's `prompt`)
};

// A user message: the instruction text, then an audio part pointing at media index 0.
ChatMessage TranscriptionMessage(const TranscriptionTask& task);

}  // namespace tandem
