#include "multimodal/transcription_prompt.h"

#include <cctype>
#include <string_view>

namespace tandem {
namespace {

struct Language {
  std::string_view code, name;
};

// The languages Whisper-style clients name most often.
constexpr Language kLanguages[] = {
    {"ar", "Arabic"},     {"bn", "Bengali"},  {"ca", "Catalan"},    {"cs", "Czech"},
    {"da", "Danish"},     {"de", "German"},   {"el", "Greek"},      {"en", "English"},
    {"es", "Spanish"},    {"fa", "Persian"},  {"fi", "Finnish"},    {"fr", "French"},
    {"he", "Hebrew"},     {"hi", "Hindi"},    {"hu", "Hungarian"},  {"id", "Indonesian"},
    {"it", "Italian"},    {"ja", "Japanese"}, {"ko", "Korean"},     {"nl", "Dutch"},
    {"no", "Norwegian"},  {"pl", "Polish"},   {"pt", "Portuguese"}, {"ro", "Romanian"},
    {"ru", "Russian"},    {"sv", "Swedish"},  {"sw", "Swahili"},    {"ta", "Tamil"},
    {"th", "Thai"},       {"tr", "Turkish"},  {"uk", "Ukrainian"},  {"ur", "Urdu"},
    {"vi", "Vietnamese"}, {"zh", "Chinese"},
};

}  // namespace

std::string LanguageName(const std::string& code) {
  std::string lower;
  for (char c : code) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Language& l : kLanguages) {
    if (l.code == lower) return std::string(l.name);
  }
  return "";
}

ChatMessage TranscriptionMessage(const TranscriptionTask& task) {
  std::string text;
  if (task.translate) {
    text = "Translate the following speech segment into English text.";
  } else if (task.language.empty()) {
    text = "Transcribe the following speech segment in its original language.";
  } else {
    const std::string name = LanguageName(task.language);
    text = "Transcribe the following speech segment in " +
           (name.empty() ? "the language with code '" + task.language + "'" : name) + ".";
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
