// The transcription message and the language names it and verbose_json use.
#include "multimodal/transcription_prompt.h"

#include <gtest/gtest.h>

#include "multimodal/language_names.h"

namespace tandem {
namespace {

TEST(LanguageNames, OpenAisNamesByIsoCode) {
  EXPECT_EQ(LanguageName("en"), "english");
  EXPECT_EQ(LanguageName("af"), "afrikaans");  // the table's first
  EXPECT_EQ(LanguageName("zh"), "chinese");    // and last
  EXPECT_EQ(LanguageName("ht"), "haitian creole");
  EXPECT_EQ(LanguageName("jv"), "javanese");
  EXPECT_EQ(LanguageName("nn"), "nynorsk");
  EXPECT_EQ(LanguageName("no"), "norwegian");
  EXPECT_EQ(LanguageName("xx"), "xx");
  EXPECT_EQ(LanguageName(""), "");
}

std::string Instruction(const TranscriptionTask& task) {
  const ChatMessage m = TranscriptionMessage(task);
  EXPECT_EQ(m.role, ChatRole::kUser);
  EXPECT_EQ(m.parts.size(), 2u);
  EXPECT_EQ(m.parts.at(1).type, ContentType::kAudio);
  EXPECT_EQ(m.parts.at(1).media, 0);
  return m.parts.at(0).text;
}

TEST(TranscriptionPrompt, TheInstructionNamesTheTaskTheLanguageAndThePrompt) {
  EXPECT_EQ(Instruction({}),
            "Transcribe the following speech segment in its original language. Write only the "
            "text that is spoken.");
  EXPECT_NE(
      Instruction({.translate = false, .language = "fr", .prompt = ""}).find("segment in French."),
      std::string::npos);
  EXPECT_NE(Instruction({.translate = false, .language = "xx", .prompt = ""})
                .find("in the language with code 'xx'."),
            std::string::npos);
  EXPECT_NE(Instruction({.translate = true, .language = "", .prompt = ""}).find("into English"),
            std::string::npos);
  EXPECT_NE(Instruction({.translate = false, .language = "", .prompt = "Tandem, MTP"})
                .find("\nEarlier text, for context and spelling: Tandem, MTP"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem
