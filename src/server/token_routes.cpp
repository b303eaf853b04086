// llama-server's /tokenize and /detokenize.
#include <string>
#include <vector>

#include "server/routes.h"

namespace tandem::server {

HttpResponse HandleTokenize(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  RejectUnknownFields(body, {"content", "add_special", "parse_special", "with_pieces"}, "");
  const std::string content = RequiredString(body, "content");
  const bool add_special = OptionalBool(body, "add_special").value_or(false);
  const bool parse_special = OptionalBool(body, "parse_special").value_or(true);
  const bool with_pieces = OptionalBool(body, "with_pieces").value_or(false);
  const Tokenizer& tokenizer = *context.tokenizer;
  const std::vector<int32_t> ids =
      tokenizer.Encode(content, {.add_special = add_special, .parse_special = parse_special});
  Json tokens = Json::array();
  for (int32_t id : ids) {
    if (with_pieces) {
      tokens.push_back({{"id", id}, {"piece", tokenizer.TokenToPiece(id, true)}});
    } else {
      tokens.push_back(id);
    }
  }
  return JsonResponse(200, {{"tokens", tokens}});
}

HttpResponse HandleDetokenize(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  RejectUnknownFields(body, {"tokens"}, "");
  const Json& tokens = RequiredField(body, "tokens");
  ExpectType(tokens, "array", "tokens");
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string where = ElementPath("tokens", i);
    const int64_t id = TokenIdValue(tokens[i], where);
    CheckTokenId(id, *context.tokenizer, where);
    ids.push_back(static_cast<int32_t>(id));
  }
  return JsonResponse(200, {{"content", context.tokenizer->Decode(ids, true)}});
}

}  // namespace tandem::server
