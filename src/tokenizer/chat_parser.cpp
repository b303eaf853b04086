// Incremental parser of Gemma 4 generated text: content, thought channel and tool calls.
#include "tokenizer/chat_parser.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "tokenizer/chat_format.h"

namespace tandem {
namespace {

using nlohmann::ordered_json;
namespace m = chat_marker;

// Deepest `{`/`[` nesting accepted in tool-call arguments.
constexpr int kMaxDepth = 64;

// Markers that matter in content and reasoning. They all start with '<' and contain no other
// '<', so two occurrences never overlap and only a suffix starting at the last '<' can be the
// beginning of one.
constexpr std::array<std::string_view, 8> kTextMarkers = {
    m::kChannelOpen,       m::kChannelClose, m::kToolCallOpen, m::kToolCallClose,
    m::kToolResponseClose, m::kEos,          m::kTurnClose,    m::kToolResponseOpen};

// Markers that end the text of an open tool call: its close, or (unterminated) a new call or
// the end of generation.
constexpr std::array<std::string_view, 5> kCallMarkers = {
    m::kToolCallClose, m::kToolCallOpen, m::kEos, m::kTurnClose, m::kToolResponseOpen};

constexpr size_t kMaxMarkerSize = 16;  // longest of the markers above (`<|tool_response>`)

// After `<|channel>`: the channel name the model writes before its reasoning.
constexpr std::string_view kThoughtHeader = "thought\n";
constexpr std::string_view kEmptyThought = "thought<channel|>";

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Earliest marker of `markers` in `text` at or after `from`: (position, marker), or npos.
template <size_t N>
std::pair<size_t, std::string_view> FindMarker(std::string_view text,
                                               const std::array<std::string_view, N>& markers,
                                               size_t from = 0) {
  std::pair<size_t, std::string_view> best{std::string_view::npos, {}};
  for (std::string_view marker : markers) {
    size_t pos = text.find(marker, from);
    if (pos < best.first) best = {pos, marker};
  }
  return best;
}

// Length of the suffix of `text` that is a proper prefix of a text marker (0 if none).
size_t MarkerPrefixLength(std::string_view text) {
  size_t lt = text.rfind('<');
  if (lt == std::string_view::npos) return 0;
  std::string_view tail = text.substr(lt);
  for (std::string_view marker : kTextMarkers) {
    if (tail.size() < marker.size() && StartsWith(marker, tail)) return tail.size();
  }
  return 0;
}

// Length of an incomplete UTF-8 sequence at the end of `text` (0 if it ends on a boundary).
size_t IncompleteUtf8Length(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    auto byte = static_cast<unsigned char>(text[text.size() - back]);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = (byte & 0xE0) == 0xC0   ? 2
                  : (byte & 0xF0) == 0xE0 ? 3
                  : (byte & 0xF8) == 0xF0 ? 4
                                          : 1;
    return need > back ? back : 0;
  }
  return 0;
}

std::string AtOffset(size_t offset) {
  return " at byte " + std::to_string(offset);
}

// Recursive-descent reader of Gemma 4 argument syntax into JSON. Lenient where the meaning is
// clear (quoted or bare keys, JSON strings, bare words as strings, trailing commas, whitespace).
class ArgumentReader {
 public:
  explicit ArgumentReader(std::string_view text) : s_(text) {}

  // Reads `{…}` at the current position.
  bool ReadObject(ordered_json& out, int depth) {
    if (depth > kMaxDepth) return Fail("arguments nested deeper than 64 levels");
    if (!Take('{')) return Fail("expected '{'");
    out = ordered_json::object();
    while (true) {
      SkipSpace();
      if (Take('}')) return true;
      std::string key;
      if (!ReadKey(key)) return false;
      SkipSpace();
      if (!Take(':')) return Fail("expected ':' after key '" + key + "'");
      ordered_json value;
      if (!ReadValue(value, depth)) return false;
      out[key] = std::move(value);
      SkipSpace();
      if (Take('}')) return true;
      if (!Take(',')) return Fail("expected ',' or '}'");
    }
  }

  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }
  bool AtEnd() const { return i_ == s_.size(); }
  size_t position() const { return i_; }
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message) + " at argument byte " + std::to_string(i_);
    return false;
  }
  bool Take(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool TakeQuote() {
    if (!StartsWith(s_.substr(i_), m::kQuote)) return false;
    i_ += m::kQuote.size();
    return true;
  }

  // `<|"|>raw text<|"|>` (no escapes inside).
  bool ReadGemmaString(std::string& out) {
    size_t end = s_.find(m::kQuote, i_);
    if (end == std::string_view::npos) return Fail("unterminated <|\"|> string");
    out.assign(s_.substr(i_, end - i_));
    i_ = end + m::kQuote.size();
    return true;
  }

  // `"json text"` with backslash escapes.
  bool ReadJsonString(std::string& out) {
    size_t start = i_;
    for (size_t j = i_ + 1; j < s_.size(); ++j) {
      if (s_[j] == '\\') {
        ++j;
      } else if (s_[j] == '"') {
        auto parsed = ordered_json::parse(s_.substr(start, j + 1 - start), nullptr, false);
        if (!parsed.is_string()) return Fail("invalid quoted string");
        out = parsed.get<std::string>();
        i_ = j + 1;
        return true;
      }
    }
    return Fail("unterminated quoted string");
  }

  bool ReadKey(std::string& key) {
    if (TakeQuote()) return ReadGemmaString(key);
    if (i_ < s_.size() && s_[i_] == '"') return ReadJsonString(key);
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ':') {
      char c = s_[i_];
      if (c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || IsSpace(c)) break;
      ++i_;
    }
    if (i_ == start) return Fail("expected a key");
    key.assign(s_.substr(start, i_ - start));
    return true;
  }

  bool ReadValue(ordered_json& out, int depth) {
    SkipSpace();
    if (i_ == s_.size()) return Fail("missing value");
    if (TakeQuote()) {
      std::string text;
      if (!ReadGemmaString(text)) return false;
      out = std::move(text);
      return true;
    }
    char c = s_[i_];
    if (c == '{') return ReadObject(out, depth + 1);
    if (c == '[') return ReadArray(out, depth + 1);
    if (c == '"') {
      std::string text;
      if (!ReadJsonString(text)) return false;
      out = std::move(text);
      return true;
    }
    return ReadBare(out);
  }

  bool ReadArray(ordered_json& out, int depth) {
    if (depth > kMaxDepth) return Fail("arguments nested deeper than 64 levels");
    Take('[');
    out = ordered_json::array();
    while (true) {
      SkipSpace();
      if (Take(']')) return true;
      ordered_json value;
      if (!ReadValue(value, depth)) return false;
      out.push_back(std::move(value));
      SkipSpace();
      if (Take(']')) return true;
      if (!Take(',')) return Fail("expected ',' or ']'");
    }
  }

  // A bare word up to `,` `}` `]`: true/false/null, a JSON number, else the word as a string.
  bool ReadBare(ordered_json& out) {
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' &&
           !StartsWith(s_.substr(i_), m::kQuote)) {
      ++i_;
    }
    std::string_view word = s_.substr(start, i_ - start);
    while (!word.empty() && IsSpace(word.back())) word.remove_suffix(1);
    if (word.empty()) return Fail("missing value");
    if (word == "true" || word == "false") {
      out = word == "true";
    } else if (word == "null" || word == "None") {
      out = nullptr;
    } else if (IsJsonNumber(word)) {
      out = ordered_json::parse(word, nullptr, false);
      // Beyond a double's range (found by fuzz_chat_output): the word as a string, since the
      // discarded value would be written as "<discarded>", which is not JSON.
      if (out.is_discarded()) out = std::string(word);
    } else {
      out = std::string(word);
    }
    return true;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  static bool IsJsonNumber(std::string_view w) {
    size_t i = 0;
    auto digits = [&] {
      size_t start = i;
      while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
      return i > start;
    };
    if (i < w.size() && w[i] == '-') ++i;
    if (i < w.size() && w[i] == '0') {
      ++i;
    } else if (!digits()) {
      return false;
    }
    if (i < w.size() && w[i] == '.') {
      ++i;
      if (!digits()) return false;
    }
    if (i < w.size() && (w[i] == 'e' || w[i] == 'E')) {
      ++i;
      if (i < w.size() && (w[i] == '+' || w[i] == '-')) ++i;
      if (!digits()) return false;
    }
    return i == w.size();
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

void AppendPart(ParsedDelta& delta, ChatPart part) {
  if (part.kind != ChatPartKind::kToolCall && !delta.parts.empty() &&
      delta.parts.back().kind == part.kind) {
    delta.parts.back().text += part.text;
  } else {
    delta.parts.push_back(std::move(part));
  }
}

}  // namespace

std::string ParsedDelta::Content() const {
  std::string out;
  for (const ChatPart& part : parts) {
    if (part.kind == ChatPartKind::kContent) out += part.text;
  }
  return out;
}

std::string ParsedDelta::Reasoning() const {
  std::string out;
  for (const ChatPart& part : parts) {
    if (part.kind == ChatPartKind::kReasoning) out += part.text;
  }
  return out;
}

std::vector<ToolCall> ParsedDelta::ToolCalls() const {
  std::vector<ToolCall> out;
  for (const ChatPart& part : parts) {
    if (part.kind == ChatPartKind::kToolCall) out.push_back(part.tool_call);
  }
  return out;
}

std::optional<ToolCall> ParseToolCallText(std::string_view text, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<ToolCall> {
    if (error != nullptr) *error = std::move(message);
    return std::nullopt;
  };
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  if (!StartsWith(text, "call:")) return fail("expected 'call:'");
  text.remove_prefix(5);
  size_t brace = text.find('{');
  if (brace == std::string_view::npos) return fail("expected '{' after the function name");
  std::string_view name = text.substr(0, brace);
  while (!name.empty() && IsSpace(name.front())) name.remove_prefix(1);
  while (!name.empty() && IsSpace(name.back())) name.remove_suffix(1);
  if (name.empty()) return fail("missing function name");
  for (char c : name) {
    if (IsSpace(c) || static_cast<unsigned char>(c) < 0x20 || c == '<' || c == '>') {
      return fail("invalid function name '" + std::string(name) + "'");
    }
  }
  ArgumentReader reader(text.substr(brace));
  ordered_json args;
  if (!reader.ReadObject(args, 0)) return fail(reader.error());
  reader.SkipSpace();
  if (!reader.AtEnd()) return fail("unexpected text after the arguments");
  ToolCall call;
  call.name = std::string(name);
  call.arguments = args.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  return call;
}

ParsedDelta ChatOutputParser::Feed(std::string_view text) {
  if (finished_) Fail(ErrorKind::kInvalidArgument, "ChatOutputParser: Feed after Finish");
  pending_.append(text);
  ParsedDelta delta;
  Process(false, delta);
  return delta;
}

ParsedDelta ChatOutputParser::Finish() {
  if (finished_) Fail(ErrorKind::kInvalidArgument, "ChatOutputParser: Finish called twice");
  ParsedDelta delta;
  Process(true, delta);
  if (state_ == State::kReasoning) {
    delta.warnings.push_back("unterminated thought channel" + AtOffset(block_start_) +
                             ": the text after <|channel> was returned as reasoning");
  }
  finished_ = true;
  return delta;
}

void ChatOutputParser::EmitText(ChatPartKind kind, std::string_view text, ParsedDelta& delta) {
  if (text.empty()) return;
  AppendPart(delta, ChatPart{kind, std::string(text), {}});
}

void ChatOutputParser::Consume(size_t n) {
  pending_.erase(0, n);
  consumed_ += n;
}

void ChatOutputParser::OnMarker(std::string_view marker, size_t offset, ParsedDelta& delta) {
  const bool in_reasoning = state_ == State::kReasoning;
  const ChatPartKind kind = in_reasoning ? ChatPartKind::kReasoning : ChatPartKind::kContent;
  if (marker == m::kEos || marker == m::kTurnClose || marker == m::kToolResponseOpen) return;
  if (marker == m::kToolCallOpen) {
    if (in_reasoning) {
      delta.warnings.push_back("tool call inside the thought channel" + AtOffset(offset) +
                               ": the channel was closed before it");
    }
    state_ = State::kToolCall;
    block_start_ = offset;
    call_scanned_ = 0;
    return;
  }
  if (marker == m::kChannelOpen && !in_reasoning) {
    state_ = State::kChannelHeader;
    block_start_ = offset;
    return;
  }
  if (marker == m::kChannelClose && in_reasoning) {
    state_ = State::kContent;
    return;
  }
  // A marker that opens or closes nothing here: keep it as text.
  EmitText(kind, marker, delta);
  delta.warnings.push_back("stray " + std::string(marker) + AtOffset(offset) + " kept as " +
                           (in_reasoning ? "reasoning" : "content"));
}

void ChatOutputParser::Process(bool final, ParsedDelta& delta) {
  while (true) {
    switch (state_) {
      case State::kContent:
      case State::kReasoning: {
        const ChatPartKind kind =
            state_ == State::kReasoning ? ChatPartKind::kReasoning : ChatPartKind::kContent;
        auto [pos, marker] = FindMarker(pending_, kTextMarkers);
        if (pos == std::string::npos) {
          size_t keep = 0;
          if (!final) {
            keep = MarkerPrefixLength(pending_);
            if (keep == 0) keep = IncompleteUtf8Length(pending_);
          }
          EmitText(kind, std::string_view(pending_).substr(0, pending_.size() - keep), delta);
          Consume(pending_.size() - keep);
          return;
        }
        EmitText(kind, std::string_view(pending_).substr(0, pos), delta);
        const size_t offset = consumed_ + pos;
        Consume(pos + marker.size());
        OnMarker(marker, offset, delta);
        break;
      }
      case State::kChannelHeader: {
        if (StartsWith(pending_, kThoughtHeader)) {
          Consume(kThoughtHeader.size());
        } else if (StartsWith(pending_, kEmptyThought)) {
          Consume(m::kThoughtChannel.size());
        } else if (!final &&
                   (StartsWith(kThoughtHeader, pending_) || StartsWith(kEmptyThought, pending_))) {
          return;  // could still become the header
        }
        state_ = State::kReasoning;
        break;
      }
      case State::kToolCall: {
        const size_t from = call_scanned_;
        auto [pos, marker] = FindMarker(pending_, kCallMarkers, from);
        if (pos == std::string::npos && !final) {
          call_scanned_ = pending_.size() < kMaxMarkerSize ? 0 : pending_.size() - kMaxMarkerSize;
          return;
        }
        std::string_view body = std::string_view(pending_).substr(0, pos);
        if (marker == m::kToolCallClose) {
          std::string error;
          if (auto call = ParseToolCallText(body, &error)) {
            AppendPart(delta, ChatPart{ChatPartKind::kToolCall, {}, std::move(*call)});
          } else {
            EmitText(
                ChatPartKind::kContent,
                std::string(m::kToolCallOpen) + std::string(body) + std::string(m::kToolCallClose),
                delta);
            delta.warnings.push_back("malformed tool call" + AtOffset(block_start_) + " (" + error +
                                     ") returned as content");
          }
          Consume(pos + marker.size());
        } else {
          // Unterminated: the stream ended, or a new call or the end of generation came first.
          EmitText(ChatPartKind::kContent, std::string(m::kToolCallOpen) + std::string(body),
                   delta);
          delta.warnings.push_back("unterminated tool call" + AtOffset(block_start_) +
                                   " returned as content");
          Consume(body.size());  // a following marker is handled in the content state
        }
        state_ = State::kContent;
        break;
      }
    }
  }
}

ParsedDelta ParseChatOutput(std::string_view text) {
  ChatOutputParser parser;
  ParsedDelta all = parser.Feed(text);
  ParsedDelta rest = parser.Finish();
  for (ChatPart& part : rest.parts) AppendPart(all, std::move(part));
  for (std::string& warning : rest.warnings) all.warnings.push_back(std::move(warning));
  return all;
}

}  // namespace tandem
