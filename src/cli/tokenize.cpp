// `tandem tokenize` / `tandem detokenize`: text <-> token ids with a GGUF file's vocabulary.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "gguf/gguf_reader.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  std::vector<std::string> text;  // joined by spaces; stdin if empty
  bool ids = false;               // print [id, id, ...]
  bool pieces = false;            // print one quoted piece per line
  bool no_bos = false;
  bool no_parse_special = false;
};

struct DetokenizeOptions {
  std::string model;
  std::vector<std::string> ids;  // stdin if empty
  bool no_special = false;
};

// Only the tokenizer keys are read, so vocab-only files (no tensors) work.
Tokenizer LoadTokenizer(const std::string& path) {
  const auto file = GgufFile::Open(path);
  return Tokenizer(LoadVocabFromGguf(*file));
}

std::string ReadStdin() {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  if (std::cin.bad()) Fail(ErrorKind::kIo, "stdin: read failed");
  return text;
}

// `piece` in single quotes, with control characters, quotes, backslashes and bytes that are not
// well-formed UTF-8 escaped, so every piece prints on one line.
std::string Quote(std::string_view piece) {
  std::string out = "'";
  for (size_t pos = 0; pos < piece.size();) {
    const auto c = static_cast<uint8_t>(piece[pos]);
    const size_t len = Utf8SequenceLength(piece, pos);
    if (len > 1) {
      out.append(piece.substr(pos, len));
      pos += len;
      continue;
    }
    ++pos;
    switch (c) {
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\'':
        out += "\\'";
        continue;
      default:
        break;
    }
    if (len == 0 || c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "'";
}

int RunTokenize(const TokenizeOptions& opt) {
  const Tokenizer tokenizer = LoadTokenizer(opt.model);
  std::string text;
  if (opt.text.empty()) {
    text = ReadStdin();
  } else {
    for (size_t i = 0; i < opt.text.size(); ++i) text += (i ? " " : "") + opt.text[i];
  }
  const std::vector<int32_t> ids =
      tokenizer.Encode(text, {.add_special = !opt.no_bos, .parse_special = !opt.no_parse_special});
  std::string out;
  if (opt.ids) {
    out = "[";
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
    out += "]\n";
  } else {
    for (const int32_t id : ids) {
      const std::string piece = Quote(tokenizer.TokenToPiece(id, /*render_special=*/true));
      out += opt.pieces ? piece + "\n" : std::to_string(id) + " -> " + piece + "\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

// Token ids separated by white space, commas or brackets (so `--ids` output can be pasted back).
std::vector<int32_t> ParseIds(const std::vector<std::string>& args) {
  std::string all;
  for (const std::string& a : args) all += a + " ";
  std::vector<int32_t> ids;
  std::string word;
  const auto flush = [&] {
    if (word.empty()) return;
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || value < 0 || value > INT32_MAX) {
      Fail(ErrorKind::kInvalidArgument, "detokenize: '" + word + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(value));
    word.clear();
  };
  for (const char c : all) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '[' || c == ']') {
      flush();
    } else {
      word.push_back(c);
    }
  }
  flush();
  return ids;
}

int RunDetokenize(const DetokenizeOptions& opt) {
  const Tokenizer tokenizer = LoadTokenizer(opt.model);
  const std::vector<int32_t> ids =
      ParseIds(opt.ids.empty() ? std::vector<std::string>{ReadStdin()} : opt.ids);
  const std::string text = tokenizer.Decode(ids, /*render_special=*/!opt.no_special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

void AddTokenizeCommands(CLI::App& app, CommandRunner& runner) {
  auto tok = std::make_shared<TokenizeOptions>();
  auto* sub = app.add_subcommand("tokenize", "Print the token ids of TEXT (or stdin)");
  sub->add_option("-m,--model", tok->model, "GGUF file with tokenizer keys")->required();
  sub->add_option("text", tok->text, "Text to tokenize; read from stdin if absent");
  auto* ids = sub->add_flag("--ids", tok->ids, "Print only the ids, as [id, id, ...]");
  sub->add_flag("--pieces", tok->pieces, "Print only the pieces, one quoted piece per line")
      ->excludes(ids);
  sub->add_flag("--no-bos", tok->no_bos, "Do not add the BOS token");
  sub->add_flag("--no-parse-special", tok->no_parse_special,
                "Treat control-token texts such as <bos> as plain text");
  sub->callback([&runner, tok] { runner = [tok] { return RunTokenize(*tok); }; });

  auto detok = std::make_shared<DetokenizeOptions>();
  auto* dsub = app.add_subcommand("detokenize", "Print the text of token IDS (or stdin)");
  dsub->add_option("-m,--model", detok->model, "GGUF file with tokenizer keys")->required();
  dsub->add_option("ids", detok->ids, "Token ids (separated by spaces, commas or brackets)");
  dsub->add_flag("--no-special", detok->no_special, "Omit control tokens such as <bos>");
  dsub->callback([&runner, detok] { runner = [detok] { return RunDetokenize(*detok); }; });
}

}  // namespace tandem::cli
