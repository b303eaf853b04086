#include "multimodal/transcription_prompt.h"

#include <cctype>

#include "multimodal/language_names.h"

namespace tandem {

ChatMessage TranscriptionMessage(const TranscriptionTask& task) {
  std::string text;
  if (task.translate) {
    text = "Translate the following speech segment into English text.";
  } else if (task.language.empty()) {
    text = "Transcribe the following speech segment in its original language.";
  } else {
    std::string name = LanguageName(task.language);
    if (name == task.language) {
      name = "the language with code '" + task.language + "'";
    } else {
      name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
    }
    text = "Transcribe the following speech segment in " + name + ".";
  }
  text += " Write only the text that is spoken.";
  if (!task.prompt.empty()) text += "\nEarlier text, for context and spelling: " + task.prompt;
  ChatMessage m;
  m.role = ChatRole::kUser;
  m.parts.push_back({.type = ContentType::kText, .text = text, .media = -1});
  m.parts.push_back({.type = ContentType::kAudio, .text = {}, .media = 0});
  return m;
}

}  // namespace tandem
