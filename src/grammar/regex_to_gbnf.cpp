#include "grammar/regex_to_gbnf.h"

#include <cstdio>

#include "base/error.h"
#include "grammar/codepoint_class.h"
#include "grammar/gbnf_parser.h"
#include "tokenizer/utf8.h"

namespace tandem {

const char* const kJsonCharGbnf = R"(([^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})))";

namespace {

// Characters JSON writes escaped inside a string.
CodepointClass JsonSpecials() {
  CodepointClass c;
  c.Add(0, 0x1F);
  c.Add('"');
  c.Add('\\');
  return c;
}

// The GBNF for one character of class `cls` as it appears in JSON text.
std::string ClassGbnf(const CodepointClass& cls) {
  std::vector<std::string> alts;
  const CodepointClass raw = cls.Minus(JsonSpecials());
  if (!raw.empty()) alts.push_back(raw.ToGbnf());
  if (cls.Contains('"')) alts.push_back(R"("\\\"")");
  if (cls.Contains('\\')) alts.push_back(R"("\\\\")");
  bool all_controls = true;
  for (uint32_t cp = 0; cp < 0x20; ++cp) all_controls = all_controls && cls.Contains(cp);
  if (all_controls) {
    alts.push_back(R"("\\" ["bfnrt] | "\\u00" [01] [0-9a-fA-F])");
  } else {
    for (uint32_t cp = 0; cp < 0x20; ++cp) {
      if (!cls.Contains(cp)) continue;
      char buf[16];
      std::snprintf(buf, sizeof(buf), "\"\\\\u%04X\"", cp);
      alts.push_back(buf);
    }
  }
  if (alts.empty()) Fail(ErrorKind::kUnsupported, "pattern: a class that matches nothing");
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

class RegexParser {
 public:
  explicit RegexParser(std::string_view p) : p_(p) {}

  std::string Parse() {
    std::string_view body = p_;
    const bool anchored_start = !body.empty() && body.front() == '^';
    if (anchored_start) body.remove_prefix(1);
    bool anchored_end = false;
    if (!body.empty() && body.back() == '$') {
      size_t backslashes = 0;
      for (size_t i = body.size() - 1; i > 0 && body[i - 1] == '\\'; --i) ++backslashes;
      if (backslashes % 2 == 0) {
        anchored_end = true;
        body.remove_suffix(1);
      }
    }
    p_ = body;
    std::string expr = ParseAlternation(0);
    if (pos_ < p_.size()) Error(std::string("unexpected '") + p_[pos_] + "'");
    const std::string any = std::string(kJsonCharGbnf) + "*";
    if (!anchored_start) expr = any + " " + expr;
    if (!anchored_end) expr += " " + any;
    return "(" + expr + ")";
  }

 private:
  [[noreturn]] void Error(const std::string& what) const {
    Fail(ErrorKind::kUnsupported, "pattern: " + what + " at offset " + std::to_string(pos_));
  }
  bool AtEnd() const { return pos_ >= p_.size(); }
  char Peek() const { return AtEnd() ? '\0' : p_[pos_]; }

  std::string ParseAlternation(int depth) {
    if (depth > kMaxGrammarNesting) Error("groups nested too deeply");
    std::string out = ParseConcat(depth);
    bool multi = false;
    while (Peek() == '|') {
      ++pos_;
      out += " | " + ParseConcat(depth);
      multi = true;
    }
    return multi ? "(" + out + ")" : out;
  }

  std::string ParseConcat(int depth) {
    std::string out;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      std::string atom = ParseAtom(depth);
      atom += ParseQuantifier();
      out += (out.empty() ? "" : " ") + atom;
    }
    return out.empty() ? "\"\"" : "(" + out + ")";
  }

  std::string ParseQuantifier() {
    std::string q;
    const char c = Peek();
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      q.assign(1, c);
    } else if (c == '{') {
      const size_t start = pos_;
      ++pos_;
      const uint32_t min = ParseCount();
      uint32_t max = min;
      bool unbounded = false;
      if (Peek() == ',') {
        ++pos_;
        if (Peek() == '}') {
          unbounded = true;
        } else {
          max = ParseCount();
        }
      }
      if (Peek() != '}') {
        pos_ = start;
        Error("malformed {m,n}");
      }
      ++pos_;
      if (!unbounded && max < min) Error("{m,n} with n < m");
      char buf[32];
      if (unbounded) {
        std::snprintf(buf, sizeof(buf), "{%u,}", min);
      } else if (max != min) {
        std::snprintf(buf, sizeof(buf), "{%u,%u}", min, max);
      } else {
        std::snprintf(buf, sizeof(buf), "{%u}", min);
      }
      q = buf;
    } else {
      return q;
    }
    if (Peek() == '?') ++pos_;  // lazy: the same language
    if (Peek() == '*' || Peek() == '+' || Peek() == '?' || Peek() == '{') {
      Error("a quantifier after a quantifier");
    }
    return q;
  }

  uint32_t ParseCount() {
    if (Peek() < '0' || Peek() > '9') Error("expected a count");
    uint32_t v = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      v = v * 10 + static_cast<uint32_t>(Peek() - '0');
      if (v > kMaxRepetition) Error("count above " + std::to_string(kMaxRepetition));
      ++pos_;
    }
    return v;
  }

  uint32_t ParseHex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = Peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) Error("expected a hex digit");
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return v;
  }

  uint32_t ParseLiteralChar() {
    const size_t len = Utf8SequenceLength(p_, pos_);
    if (len == 0) Error("invalid UTF-8");
    uint32_t cp = static_cast<uint8_t>(p_[pos_]);
    if (len > 1) {
      cp &= 0x7F >> len;
      for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<uint8_t>(p_[pos_ + i]) & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  // After a backslash: adds the escape's characters to `cls`.
  void ParseEscape(CodepointClass& cls) {
    if (AtEnd()) Error("trailing backslash");
    const char e = Peek();
    ++pos_;
    CodepointClass d, w, s;
    d.Add('0', '9');
    w.Add('0', '9');
    w.Add('a', 'z');
    w.Add('A', 'Z');
    w.Add('_');
    for (const uint32_t cp : {' ', '\t', '\n', '\r', '\f', '\v'}) s.Add(cp);
    auto add_all = [&](const CodepointClass& c) {
      for (const auto& [lo, hi] : c.ranges()) cls.Add(lo, hi);
    };
    switch (e) {
      case 'd':
        add_all(d);
        return;
      case 'D':
        add_all(d.Negated());
        return;
      case 'w':
        add_all(w);
        return;
      case 'W':
        add_all(w.Negated());
        return;
      case 's':
        add_all(s);
        return;
      case 'S':
        add_all(s.Negated());
        return;
      case 't':
        cls.Add('\t');
        return;
      case 'n':
        cls.Add('\n');
        return;
      case 'r':
        cls.Add('\r');
        return;
      case 'f':
        cls.Add('\f');
        return;
      case 'v':
        cls.Add('\v');
        return;
      case 'x':
        cls.Add(ParseHex(2));
        return;
      case 'u': {
        const uint32_t cp = ParseHex(4);
        if (cp >= 0xD800 && cp <= 0xDFFF) Error("a surrogate escape");
        cls.Add(cp);
        return;
      }
      default:
        break;
    }
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9')) {
      --pos_;
      Error(std::string("unsupported escape \\") + e);
    }
    --pos_;
    cls.Add(ParseLiteralChar());
  }

  std::string ParseAtom(int depth) {
    const char c = Peek();
    if (c == '(') {
      ++pos_;
      if (Peek() == '?') {
        if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
          pos_ += 2;
        } else {
          Error("lookaround and named groups");
        }
      }
      std::string inner = ParseAlternation(depth + 1);
      if (Peek() != ')') Error("expected ')'");
      ++pos_;
      return "(" + inner + ")";
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') Error("a quantifier without an element");
    if (c == '^' || c == '$') Error("an anchor inside the pattern");
    CodepointClass cls;
    if (c == '[') {
      ++pos_;
      const bool negate = Peek() == '^';
      if (negate) ++pos_;
      bool first = true;
      while (AtEnd() || Peek() != ']' || first) {
        if (AtEnd()) Error("unterminated class");
        first = false;
        CodepointClass item;
        if (Peek() == '\\') {
          ++pos_;
          ParseEscape(item);
        } else {
          item.Add(ParseLiteralChar());
        }
        if (Peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']' &&
            item.ranges().size() == 1 && item.ranges()[0].first == item.ranges()[0].second) {
          ++pos_;
          CodepointClass hi;
          if (Peek() == '\\') {
            ++pos_;
            ParseEscape(hi);
          } else {
            hi.Add(ParseLiteralChar());
          }
          if (hi.ranges().size() != 1 || hi.ranges()[0].first != hi.ranges()[0].second) {
            Error("a class escape as a range end");
          }
          const uint32_t lo_cp = item.ranges()[0].first, hi_cp = hi.ranges()[0].first;
          if (hi_cp < lo_cp) Error("range out of order");
          item.Add(lo_cp, hi_cp);
        }
        for (const auto& [lo, hi] : item.ranges()) cls.Add(lo, hi);
      }
      ++pos_;
      if (negate) cls = cls.Negated();
    } else if (c == '.') {
      ++pos_;
      CodepointClass nl;
      for (const uint32_t cp : {0x0Au, 0x0Du, 0x2028u, 0x2029u}) nl.Add(cp);
      cls = nl.Negated();
    } else if (c == '\\') {
      ++pos_;
      ParseEscape(cls);
    } else {
      cls.Add(ParseLiteralChar());
    }
    return ClassGbnf(cls);
  }

  std::string_view p_;
  size_t pos_ = 0;
};

}  // namespace

std::string RegexToGbnf(std::string_view pattern) {
  return RegexParser(pattern).Parse();
}

}  // namespace tandem
