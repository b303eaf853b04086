#include "multimodal/language_names.h"

#include <algorithm>
#include <iterator>

namespace tandem {
namespace {

struct LanguageEntry {
  const char* code;
  const char* name;
};

// ISO-639-1 codes and the names OpenAI's verbose_json writes for them (the languages Whisper
// was trained on; its non-standard "jw" is ISO's "jv"). Sorted by code.
constexpr LanguageEntry kLanguages[] = {
    {"af", "afrikaans"},  {"am", "amharic"},       {"ar", "arabic"},
    {"as", "assamese"},   {"az", "azerbaijani"},   {"ba", "bashkir"},
    {"be", "belarusian"}, {"bg", "bulgarian"},     {"bn", "bengali"},
    {"bo", "tibetan"},    {"br", "breton"},        {"bs", "bosnian"},
    {"ca", "catalan"},    {"cs", "czech"},         {"cy", "welsh"},
    {"da", "danish"},     {"de", "german"},        {"el", "greek"},
    {"en", "english"},    {"es", "spanish"},       {"et", "estonian"},
    {"eu", "basque"},     {"fa", "persian"},       {"fi", "finnish"},
    {"fo", "faroese"},    {"fr", "french"},        {"gl", "galician"},
    {"gu", "gujarati"},   {"ha", "hausa"},         {"he", "hebrew"},
    {"hi", "hindi"},      {"hr", "croatian"},      {"ht", "haitian creole"},
    {"hu", "hungarian"},  {"hy", "armenian"},      {"id", "indonesian"},
    {"is", "icelandic"},  {"it", "italian"},       {"ja", "japanese"},
    {"jv", "javanese"},   {"ka", "georgian"},      {"kk", "kazakh"},
    {"km", "khmer"},      {"kn", "kannada"},       {"ko", "korean"},
    {"la", "latin"},      {"lb", "luxembourgish"}, {"ln", "lingala"},
    {"lo", "lao"},        {"lt", "lithuanian"},    {"lv", "latvian"},
    {"mg", "malagasy"},   {"mi", "maori"},         {"mk", "macedonian"},
    {"ml", "malayalam"},  {"mn", "mongolian"},     {"mr", "marathi"},
    {"ms", "malay"},      {"mt", "maltese"},       {"my", "myanmar"},
    {"ne", "nepali"},     {"nl", "dutch"},         {"nn", "nynorsk"},
    {"no", "norwegian"},  {"oc", "occitan"},       {"pa", "punjabi"},
    {"pl", "polish"},     {"ps", "pashto"},        {"pt", "portuguese"},
    {"ro", "romanian"},   {"ru", "russian"},       {"sa", "sanskrit"},
    {"sd", "sindhi"},     {"si", "sinhala"},       {"sk", "slovak"},
    {"sl", "slovenian"},  {"sn", "shona"},         {"so", "somali"},
    {"sq", "albanian"},   {"sr", "serbian"},       {"su", "sundanese"},
    {"sv", "swedish"},    {"sw", "swahili"},       {"ta", "tamil"},
    {"te", "telugu"},     {"tg", "tajik"},         {"th", "thai"},
    {"tk", "turkmen"},    {"tl", "tagalog"},       {"tr", "turkish"},
    {"tt", "tatar"},      {"uk", "ukrainian"},     {"ur", "urdu"},
    {"uz", "uzbek"},      {"vi", "vietnamese"},    {"yi", "yiddish"},
    {"yo", "yoruba"},     {"zh", "chinese"},
};

}  // namespace

std::string LanguageName(std::string_view code) {
  const auto it = std::lower_bound(
      std::begin(kLanguages), std::end(kLanguages), code,
      [](const LanguageEntry& e, std::string_view c) { return std::string_view(e.code) < c; });
  if (it != std::end(kLanguages) && it->code == code) return it->name;
  return std::string(code);
}

}  // namespace tandem
