#include "model/synthetic_vocab.h"

#include <cstdio>
#include <iterator>
#include <set>

#include "base/error.h"
#include "gguf/gguf_writer.h"

namespace tandem {
namespace {

constexpr const char* kSpace = "\xE2\x96\x81";  // U+2581, the escaped space

struct Special {
  const char* text;
  int type;
};
// Control tokens are matched in input text and hidden in output; user-defined (4) ones are
// rendered, so reasoning and tool-call parsers can see them (docs/gemma4.md § Tokenizer).
constexpr Special kSpecials[] = {
    {"<pad>", 3},
    {"<eos>", 3},
    {"<bos>", 3},
    {"<unk>", 2},
    {"<mask>", 4},
    {"<|turn>", 3},
    {"<turn|>", 3},
    {"<|think|>", 3},
    {"<|channel>", 4},
    {"<channel|>", 4},
    {"<|tool>", 3},
    {"<tool|>", 3},
    {"<|tool_call>", 4},
    {"<tool_call|>", 4},
    {"<|tool_response>", 4},
    {"<tool_response|>", 4},
    {"<|\"|>", 4},
};

// The media markup (begin/end of an image and of audio, the image, audio and video soft-token
// placeholders), last: added after the other tokens were laid out, they moved no id.
constexpr const char* kMediaMarkup[] = {"<|image>", "<image|>",  "<|image|>", "<|audio>",
                                        "<audio|>", "<|audio|>", "<|video|>"};

// Merges in rank order; each joins two existing pieces (space written as U+2581).
constexpr const char* kMerges[][2] = {
    {"_", "t"},  {"h", "e"},  {"_t", "he"}, {"_", "a"},   {"i", "n"},   {"e", "r"}, {"a", "n"},
    {"o", "n"},  {"_", "s"},  {"_", "w"},   {"r", "e"},   {"_", "o"},   {"_", "i"}, {"e", "n"},
    {"_", "b"},  {"a", "t"},  {"o", "u"},   {"_", "c"},   {"_", "m"},   {"e", "d"}, {"_", "f"},
    {"i", "s"},  {"_", "p"},  {"_a", "n"},  {"_an", "d"}, {"in", "g"},  {"_", "d"}, {"_o", "f"},
    {"_t", "o"}, {"_i", "n"}, {"\n", "\n"}, {"_", "_"},   {"__", "__"},
};

std::string Escape(const char* s) {
  std::string out;
  for (; *s; ++s) {
    if (*s == '_') {
      out += kSpace;
    } else {
      out += *s;
    }
  }
  return out;
}

}  // namespace

SyntheticVocab MakeSyntheticVocab(int n_vocab) {
  if (n_vocab < 512) {
    Fail(ErrorKind::kInvalidArgument,
         "synthetic vocab needs >= 512 tokens, got " + std::to_string(n_vocab));
  }
  SyntheticVocab v;
  std::set<std::string> seen;
  auto add = [&](const std::string& text, int type) {
    v.tokens.push_back(text);
    v.types.push_back(type);
    seen.insert(text);
  };
  for (const auto& s : kSpecials) add(s.text, s.type);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 6);
  }
  for (char c = '!'; c <= '~'; ++c) add(std::string(1, c), 1);
  add(kSpace, 1);
  add("\n", 1);
  for (const auto& m : kMerges) {
    std::string left = Escape(m[0]), right = Escape(m[1]);
    v.merges.push_back(left + " " + right);
    if (!seen.count(left + right)) add(left + right, 1);
  }
  const int n_fill = n_vocab - static_cast<int>(std::size(kMediaMarkup));
  for (int i = 0; static_cast<int>(v.tokens.size()) < n_fill; ++i) {
    add(std::string(kSpace) + "t" + std::to_string(i), 1);
  }
  for (const char* text : kMediaMarkup) add(text, 3);
  return v;
}

void WriteVocabToGguf(const SyntheticVocab& v, GgufWriter& w) {
  w.SetString("tokenizer.ggml.model", "gemma4");
  w.SetString("tokenizer.ggml.pre", "gemma4");
  w.Set("tokenizer.ggml.tokens", GgufValue::StringArray(std::span<const std::string>(v.tokens)));
  std::vector<float> scores(v.tokens.size(), 0.0f);
  w.Set("tokenizer.ggml.scores", GgufValue::Array(std::span<const float>(scores)));
  w.Set("tokenizer.ggml.token_type", GgufValue::Array(std::span<const int32_t>(v.types)));
  w.Set("tokenizer.ggml.merges", GgufValue::StringArray(std::span<const std::string>(v.merges)));
  w.SetU32("tokenizer.ggml.bos_token_id", v.bos);
  w.SetU32("tokenizer.ggml.eos_token_id", v.eos);
  w.SetU32("tokenizer.ggml.unknown_token_id", v.unk);
  w.SetU32("tokenizer.ggml.padding_token_id", v.pad);
  w.SetBool("tokenizer.ggml.add_bos_token", true);
  w.SetBool("tokenizer.ggml.add_eos_token", false);
  w.SetBool("tokenizer.ggml.add_space_prefix", false);
}

}  // namespace tandem
