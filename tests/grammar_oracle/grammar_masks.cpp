// Prints tandem's allowed-token masks along walks through a grammar, for the XGrammar oracle
// test (tests/node/grammar_oracle.test.mjs) and for measuring compile and mask times.
//
//   grammar_masks --tokenizer tokenizer.json (--grammar F | --json-schema F | --json-object)
//                 [--document F]... [--random-walks N --steps S --seed X] [--out F]
//                 [--print-grammar]
//
// Output JSON: {"grammar": GBNF text, "compile_ms", "walks": [{"tokens": [...], "steps":
// [{"mask": base64 of the little-endian 64-bit mask words, "count", "us"}], "complete",
// "text"}]}. A document walk follows tandem's tokenization of the file's bytes; a random walk picks
// among the allowed tokens: a stop token with probability 1/4 once complete, else with
// probability 1/2 a one-byte punctuation token (to leave strings and close brackets), else any.
#include <CLI/CLI.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "base/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json_schema.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace {

using namespace tandem;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, "cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Base64(const std::vector<uint64_t>& words) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(words.size() * 8, '\0');
  for (size_t i = 0; i < words.size(); ++i) {
    for (int b = 0; b < 8; ++b) bytes[i * 8 + b] = static_cast<char>((words[i] >> (8 * b)) & 0xFF);
  }
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// One walk: at each step the mask, then the next token (from `tokens`, or drawn at random).
// Token ids whose membership in `mask` differs from token-by-token matching (brute force).
std::vector<int32_t> BruteForceDiff(GrammarMatcher& m, const TokenBitmask& mask) {
  std::vector<int32_t> diff;
  for (int32_t id = 0; id < mask.size(); ++id) {
    if (m.CanAcceptToken(id) != mask.Test(id)) diff.push_back(id);
  }
  return diff;
}

nlohmann::json Walk(std::shared_ptr<CompiledGrammar> compiled, const std::vector<int32_t>* tokens,
                    int steps, std::mt19937_64* rng, bool masks, bool verify) {
  GrammarMatcher m(compiled);
  const TokenVocabulary& vocab = compiled->vocab();
  TokenBitmask mask(vocab.size());
  nlohmann::json walk = {{"tokens", nlohmann::json::array()}, {"steps", nlohmann::json::array()}};
  std::string text;
  const int n = tokens != nullptr ? static_cast<int>(tokens->size()) : steps;
  for (int i = 0; i < n && !m.IsTerminated(); ++i) {
    const auto t0 = Clock::now();
    m.FillNextTokenMask(mask);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    nlohmann::json step = {{"count", mask.Count()}, {"us", us}};
    if (masks) step["mask"] = Base64(mask.words());
    if (verify) step["brute_force_diff"] = BruteForceDiff(m, mask);
    walk["steps"].push_back(step);
    int32_t next;
    if (tokens != nullptr) {
      next = (*tokens)[i];
    } else {
      const std::vector<int32_t> ids = mask.Ids();
      if (ids.empty()) break;
      std::vector<int32_t> stops, others, punctuation;
      for (const int32_t id : ids) {
        (vocab.IsStop(id) ? stops : others).push_back(id);
        const std::string& p = vocab.piece(id);
        if (p.size() == 1 && std::ispunct(static_cast<unsigned char>(p[0])))
          punctuation.push_back(id);
      }
      if (!stops.empty() && (others.empty() || (*rng)() % 4 == 0)) {
        next = stops[(*rng)() % stops.size()];
      } else if (!punctuation.empty() && (*rng)() % 2 == 0) {
        next = punctuation[(*rng)() % punctuation.size()];
      } else {
        next = others[(*rng)() % others.size()];
      }
    }
    if (!m.AcceptToken(next)) {
      walk["rejected_at"] = i;
      break;
    }
    walk["tokens"].push_back(next);
    if (!vocab.IsStop(next)) text += vocab.piece(next);
  }
  walk["complete"] = m.IsComplete() || m.IsTerminated();
  walk["text"] = text;
  return walk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandem grammar masks along walks (XGrammar oracle test)"};
  std::string tokenizer_path, grammar_path, schema_path, out_path;
  std::vector<std::string> documents;
  bool json_object = false, print_grammar = false, no_masks = false, verify = false;
  int random_walks = 0, steps = 64;
  uint64_t seed = 1;
  app.add_option("--tokenizer", tokenizer_path, "tokenizer.json")->required();
  app.add_option("--grammar", grammar_path, "GBNF grammar file");
  app.add_option("--json-schema", schema_path, "JSON Schema file");
  app.add_flag("--json-object", json_object, "any JSON object");
  app.add_option("--document", documents, "follow tandem's tokenization of this file");
  app.add_option("--random-walks", random_walks, "number of random walks");
  app.add_option("--steps", steps, "tokens per random walk");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--out", out_path, "output JSON (default stdout)");
  app.add_flag("--print-grammar", print_grammar, "print the GBNF text and exit");
  app.add_flag("--no-masks", no_masks, "omit the masks (timing only)");
  app.add_flag("--verify", verify, "check every mask against token-by-token matching");
  std::string vocab_out;
  app.add_option(
      "--print-vocab", vocab_out,
      "write {tokens, stop_ids} (token texts, \"\" for tokens a grammar never produces)");
  CLI11_PARSE(app, argc, argv);
  try {
    std::string gbnf;
    if (!grammar_path.empty()) {
      gbnf = ReadFile(grammar_path);
    } else if (!schema_path.empty()) {
      gbnf = JsonSchemaTextToGbnf(ReadFile(schema_path));
    } else if (json_object) {
      gbnf = JsonObjectGbnf();
    } else {
      Fail(ErrorKind::kInvalidArgument, "give --grammar, --json-schema or --json-object");
    }
    if (print_grammar) {
      std::cout << gbnf;
      return 0;
    }
    Tokenizer tokenizer(LoadVocabFromTokenizerJson(tokenizer_path));
    auto vocab = TokenVocabulary::FromTokenizer(tokenizer);
    if (!vocab_out.empty()) {
      nlohmann::json v = {{"tokens", nlohmann::json::array()}, {"stop_ids", vocab->stop_ids()}};
      for (int32_t id = 0; id < vocab->size(); ++id) {
        v["tokens"].push_back(vocab->matchable(id) ? tokenizer.vocab().tokens[id] : "");
      }
      std::ofstream(vocab_out, std::ios::binary)
          << v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    const auto t0 = Clock::now();
    auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(gbnf), vocab);
    const double compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    nlohmann::json out = {{"grammar", gbnf},
                          {"compile_ms", compile_ms},
                          {"positions", compiled->stats().positions},
                          {"accepted_entries", compiled->stats().accepted},
                          {"dependent_entries", compiled->stats().context_dependent},
                          {"stop_ids", vocab->stop_ids()},
                          {"walks", nlohmann::json::array()}};
    for (const std::string& doc : documents) {
      const std::vector<int32_t> ids =
          tokenizer.Encode(ReadFile(doc), {.add_special = false, .parse_special = false});
      out["walks"].push_back(Walk(compiled, &ids, 0, nullptr, !no_masks, verify));
    }
    std::mt19937_64 rng(seed);
    for (int w = 0; w < random_walks; ++w) {
      out["walks"].push_back(Walk(compiled, nullptr, steps, &rng, !no_masks, verify));
    }
    const std::string text = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (out_path.empty()) {
      std::cout << text << "\n";
    } else {
      std::ofstream(out_path, std::ios::binary) << text;
    }
  } catch (const std::exception& e) {
    std::cerr << "grammar_masks: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
