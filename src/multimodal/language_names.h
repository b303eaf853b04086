// ISO-639-1 language codes and their English names, as OpenAI's transcription API writes them
// (verbose_json's "language") and as the transcription prompt names the language to expect.
#pragma once

#include <string>
#include <string_view>

namespace tandem {

// The lower-case English name of an ISO-639-1 `code` ("en": "english"); the code itself when the
// table does not name it; "" for "".
std::string LanguageName(std::string_view code);

}  // namespace tandem
