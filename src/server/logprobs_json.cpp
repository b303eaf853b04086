// Logprobs as OpenAI chat, OpenAI completions and llama-server write them.
#include "server/logprobs_json.h"

#include <algorithm>
#include <string>

#include "tokenizer/utf8.h"

namespace tandem::server {
namespace {

std::string Piece(const Tokenizer& tokenizer, int32_t id) {
  return tokenizer.TokenToPiece(id, /*render_special=*/true);
}

Json Bytes(const std::string& piece) {
  Json bytes = Json::array();
  for (const char c : piece) bytes.push_back(static_cast<unsigned char>(c));
  return bytes;
}

// {id?, token, logprob, bytes}
Json Entry(const TokenLogprob& t, const Tokenizer& tokenizer, bool with_id) {
  const std::string piece = Piece(tokenizer, t.token);
  Json j = {{"token", SanitizeUtf8(piece)}, {"logprob", t.logprob}, {"bytes", Bytes(piece)}};
  if (with_id) j["id"] = t.token;
  return j;
}

size_t TopCount(const TokenLogprobs& e, int n_top) {
  return std::min(e.top.size(), static_cast<size_t>(std::max(0, n_top)));
}

Json WithTop(const TokenLogprobs& e, int n_top, const Tokenizer& tokenizer, bool with_id) {
  Json j = Entry(e.chosen, tokenizer, with_id);
  Json top = Json::array();
  for (size_t r = 0; r < TopCount(e, n_top); ++r)
    top.push_back(Entry(e.top[r], tokenizer, with_id));
  j["top_logprobs"] = std::move(top);
  return j;
}

}  // namespace

Json ChatLogprobsContent(const std::vector<TokenLogprobs>& entries, int n_top,
                         const Tokenizer& tokenizer) {
  Json content = Json::array();
  for (const TokenLogprobs& e : entries) content.push_back(WithTop(e, n_top, tokenizer, false));
  return content;
}

Json CompletionLogprobs(const std::vector<TokenLogprobs>& entries, int n_top,
                        const Tokenizer& tokenizer, size_t& text_offset) {
  Json tokens = Json::array(), logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  for (const TokenLogprobs& e : entries) {
    const std::string piece = Piece(tokenizer, e.chosen.token);
    tokens.push_back(SanitizeUtf8(piece));
    logprobs.push_back(e.chosen.logprob);
    Json alternatives = Json::object();
    for (size_t r = 0; r < TopCount(e, n_top); ++r) {
      const std::string text = SanitizeUtf8(Piece(tokenizer, e.top[r].token));
      if (!alternatives.contains(text)) alternatives[text] = e.top[r].logprob;
    }
    top.push_back(std::move(alternatives));
    offsets.push_back(text_offset);
    text_offset += piece.size();
  }
  return {{"tokens", tokens},
          {"token_logprobs", logprobs},
          {"top_logprobs", top},
          {"text_offset", offsets}};
}

Json CompletionProbabilities(const std::vector<TokenLogprobs>& entries, int n_top,
                             const Tokenizer& tokenizer) {
  Json all = Json::array();
  for (const TokenLogprobs& e : entries) all.push_back(WithTop(e, n_top, tokenizer, true));
  return all;
}

}  // namespace tandem::server
