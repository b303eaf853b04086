#include "grammar/gbnf_parser.h"

#include <cstdint>

#include "base/error.h"
#include "grammar/codepoint_class.h"
#include "tokenizer/utf8.h"

namespace tandem {
namespace {

using Symbol = GrammarBuilder::Symbol;
using Sequence = GrammarBuilder::Sequence;

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// Appends x{min,max} (max < 0: unbounded) to `seq` through helper rules named after `base`; each
// helper is called from one place only, so its frame has a single return position.
void AppendRepetition(GrammarBuilder& b, const std::string& base, const Symbol& x, uint32_t min,
                      int64_t max, Sequence& seq) {
  for (uint32_t i = 0; i < min; ++i) seq.push_back(x);
  if (max < 0) {
    // star ::= x star | (empty)
    const int32_t star = b.NewRule(base);
    b.Define(star, {{x, GrammarBuilder::Rule(star)}, {}});
    seq.push_back(GrammarBuilder::Rule(star));
    return;
  }
  // opt_k ::= x opt_{k-1} | (empty), opt_1 ::= x | (empty)
  int32_t inner = -1;
  for (int64_t k = 1; k <= max - min; ++k) {
    const int32_t opt = b.NewRule(base);
    Sequence first = {x};
    if (inner >= 0) first.push_back(GrammarBuilder::Rule(inner));
    b.Define(opt, {first, {}});
    inner = opt;
  }
  if (inner >= 0) seq.push_back(GrammarBuilder::Rule(inner));
}

class Parser {
 public:
  Parser(std::string_view text, GrammarBuilder& builder) : text_(text), b_(builder) {}

  void ParseAll() {
    SkipSpace(true);
    while (pos_ < text_.size()) {
      ParseRule();
      SkipSpace(true);
    }
  }

 private:
  [[noreturn]] void Error(const std::string& message) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    Fail(ErrorKind::kInvalidArgument, "grammar: line " + std::to_string(line) + " column " +
                                          std::to_string(col) + ": " + message);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\n' && Peek() != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string ParseName() {
    const size_t start = pos_;
    while (!AtEnd() && IsWordChar(Peek())) ++pos_;
    if (pos_ == start) Error("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  void ParseRule() {
    const std::string name = ParseName();
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=") Error("expected '::=' after '" + name + "'");
    pos_ += 3;
    SkipSpace(true);
    const int32_t rule = b_.RuleId(name);
    if (b_.IsDefined(rule)) Error("rule '" + name + "' is defined twice");
    b_.Define(rule, ParseAlternatives(name, false, 0));
    if (!AtEnd() && Peek() != '\n' && Peek() != '\r') Error("expected the end of the line");
  }

  std::vector<Sequence> ParseAlternatives(const std::string& name, bool nested, int depth) {
    std::vector<Sequence> alts;
    alts.push_back(ParseSequence(name, nested, depth));
    while (Peek() == '|') {
      ++pos_;
      SkipSpace(true);
      alts.push_back(ParseSequence(name, nested, depth));
    }
    return alts;
  }

  uint32_t ParseHex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = Peek();
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        Error("expected " + std::to_string(digits) + " hex digits");
      }
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return v;
  }

  // One (possibly escaped) character of a literal or class, as a code point.
  uint32_t ParseChar() {
    if (AtEnd()) Error("unexpected end of input");
    const char c = Peek();
    if (c == '\\') {
      ++pos_;
      const char e = Peek();
      ++pos_;
      switch (e) {
        case 'n':
          return '\n';
        case 'r':
          return '\r';
        case 't':
          return '\t';
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
        case '/':
        case '\'':
          return static_cast<uint8_t>(e);
        case 'x':
          return ParseHex(2);
        case 'u':
          return CheckCodepoint(ParseHex(4));
        case 'U':
          return CheckCodepoint(ParseHex(8));
        default:
          --pos_;
          Error(std::string("unknown escape '\\") + e + "'");
      }
    }
    const size_t len = Utf8SequenceLength(text_, pos_);
    if (len == 0) Error("invalid UTF-8");
    uint32_t cp = static_cast<uint8_t>(text_[pos_]);
    if (len > 1) {
      cp &= 0x7F >> len;
      for (size_t i = 1; i < len; ++i)
        cp = (cp << 6) | (static_cast<uint8_t>(text_[pos_ + i]) & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  uint32_t CheckCodepoint(uint32_t cp) {
    if (cp > kMaxCodepoint || (cp >= 0xD800 && cp <= 0xDFFF)) Error("invalid code point");
    return cp;
  }

  // The alternatives of `cls` as one symbol: a byte set if it is ASCII only, else a helper rule.
  Symbol ClassSymbol(const CodepointClass& cls, const std::string& name) {
    std::vector<Sequence> alts = cls.ToAlternatives(b_);
    if (alts.empty()) Error("empty character class");
    if (alts.size() == 1 && alts[0].size() == 1) return alts[0][0];
    const int32_t rule = b_.NewRule(name + "_char");
    b_.Define(rule, std::move(alts));
    return GrammarBuilder::Rule(rule);
  }

  Sequence ParseSequence(const std::string& name, bool nested, int depth) {
    Sequence seq;
    size_t last_start = 0;  // first symbol of the last element, for postfix operators
    while (!AtEnd()) {
      const char c = Peek();
      const size_t element_start = seq.size();
      if (c == '"') {
        ++pos_;
        while (Peek() != '"') {
          if (AtEnd()) Error("unterminated string literal");
          std::string bytes;
          AppendUtf8(static_cast<char32_t>(ParseChar()), bytes);
          for (const char byte : bytes) seq.push_back(b_.Byte(static_cast<uint8_t>(byte)));
        }
        ++pos_;
        if (seq.size() == element_start) {
          last_start = seq.size();
          SkipSpace(nested);
          if (IsPostfix(Peek())) Error("repetition of an empty string");
          continue;
        }
      } else if (c == '[') {
        ++pos_;
        bool negate = false;
        if (Peek() == '^') {
          negate = true;
          ++pos_;
        }
        CodepointClass cls;
        while (Peek() != ']') {
          if (AtEnd()) Error("unterminated character class");
          const uint32_t lo = ParseChar();
          uint32_t hi = lo;
          if (Peek() == '-' && Peek(1) != ']' && Peek(1) != '\0') {
            ++pos_;
            hi = ParseChar();
            if (hi < lo) Error("character range out of order");
          }
          cls.Add(lo, hi);
        }
        ++pos_;
        seq.push_back(ClassSymbol(negate ? cls.Negated() : cls, name));
      } else if (c == '.') {
        ++pos_;
        CodepointClass any;
        any.Add(0, kMaxCodepoint);
        seq.push_back(ClassSymbol(any, name));
      } else if (IsWordChar(c)) {
        seq.push_back(GrammarBuilder::Rule(b_.RuleId(ParseName())));
      } else if (c == '(') {
        if (depth >= kMaxGrammarNesting) Error("parentheses nested too deeply");
        ++pos_;
        SkipSpace(true);
        const int32_t rule = b_.NewRule(name);
        b_.Define(rule, ParseAlternatives(name, true, depth + 1));
        if (Peek() != ')') Error("expected ')'");
        ++pos_;
        seq.push_back(GrammarBuilder::Rule(rule));
      } else if (IsPostfix(c)) {
        if (seq.size() == last_start || seq.empty()) Error("repetition without an element");
        ApplyPostfix(name, last_start, seq);
        SkipSpace(nested);
        continue;
      } else {
        break;
      }
      last_start = element_start;
      SkipSpace(nested);
    }
    return seq;
  }

  static bool IsPostfix(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  uint32_t ParseCount() {
    if (Peek() < '0' || Peek() > '9') Error("expected a repetition count");
    uint64_t v = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(Peek() - '0');
      if (v > kMaxRepetition) Error("repetition count above " + std::to_string(kMaxRepetition));
      ++pos_;
    }
    return static_cast<uint32_t>(v);
  }

  void ApplyPostfix(const std::string& name, size_t last_start, Sequence& seq) {
    uint32_t min = 0;
    int64_t max = -1;
    const char c = Peek();
    ++pos_;
    if (c == '+') {
      min = 1;
    } else if (c == '?') {
      max = 1;
    } else if (c == '{') {
      SkipSpace(false);
      min = ParseCount();
      max = min;
      SkipSpace(false);
      if (Peek() == ',') {
        ++pos_;
        SkipSpace(false);
        max = Peek() == '}' ? int64_t{-1} : int64_t{ParseCount()};
        SkipSpace(false);
      }
      if (Peek() != '}') Error("expected '}'");
      ++pos_;
      if (max >= 0 && max < min) Error("repetition {m,n} with n < m");
    }
    Symbol x;
    if (seq.size() - last_start == 1) {
      x = seq.back();
    } else {
      const int32_t rule = b_.NewRule(name);
      b_.Define(rule, {Sequence(seq.begin() + static_cast<ptrdiff_t>(last_start), seq.end())});
      x = GrammarBuilder::Rule(rule);
    }
    seq.resize(last_start);
    AppendRepetition(b_, name, x, min, max, seq);
  }

  std::string_view text_;
  GrammarBuilder& b_;
  size_t pos_ = 0;
};

}  // namespace

Grammar ParseGbnf(std::string_view text, const std::string& root) {
  if (text.size() > kMaxGrammarTextBytes) {
    Fail(ErrorKind::kInvalidArgument, "grammar: text is " + std::to_string(text.size()) +
                                          " bytes, the limit is " +
                                          std::to_string(kMaxGrammarTextBytes));
  }
  GrammarBuilder builder;
  Parser(text, builder).ParseAll();
  return builder.Finish(root, "grammar");
}

}  // namespace tandem
