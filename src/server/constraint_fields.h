// Structured output: the request fields that constrain what the model writes, read into
// GenerationRequest::constraint (a ConstraintSource: what was asked, not grammar text), and the
// compiled constraint the engine runs (CompileConstraint, through the server's GrammarCache).
//
//   OpenAI     response_format {type: "text" | "json_object" |
//                               "json_schema", json_schema: {name, schema, strict}}
//   Responses  text.format {type: "text" | "json_object" |
//                           "json_schema", name, schema, strict}
//   llama.cpp  grammar (GBNF text), json_schema (a schema object)
//   vLLM       structured_outputs {json (a schema object or its text), json_object: true,
//                                  disable_any_whitespace}; its other members (regex, choice,
//                                  grammar, structural_tag, whitespace_pattern, ...) are a 400
//   both APIs  forced tool use (GenerationRequest::tool_call_required): a grammar over the Gemma
//              4 tool-call syntax for the request's tools (grammar/tool_call_grammar.h)
//
// At most one constraint per request (a second one is a 400 naming both fields). A schema that
// does not compile is a 400 naming the field, the keyword and its JSON path; a GBNF grammar that
// does not parse a 400 naming the field, the line and the column. The fields are read with the
// rest of the body; the constraint is compiled when the request starts, before its prompt is
// built or its media decoded.
#pragma once

#include <memory>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar_cache.h"
#include "server/generation_request.h"
#include "server/json_fields.h"

namespace tandem::server {

// vLLM's structured_outputs (OpenAI chat and completions). Read first: its
// disable_any_whitespace sets request.json_one_line (true: JsonSyntax::kJsonOneLine, false: the
// default syntax, whatever the server's --json-one-line) for every JSON constraint of the
// request; it changes nothing for a GBNF grammar or a forced tool call (no JSON whitespace).
void ParseStructuredOutputs(const Json& body, GenerationRequest& request);
// response_format (OpenAI chat and completions).
void ParseResponseFormat(const Json& body, GenerationRequest& request);
// The Responses API's text.format (`text` is the body's "text" object; its other members are the
// caller's). Its unknown members are a 400 naming them.
void ParseTextFormat(const Json& text, GenerationRequest& request);
// llama-server's grammar and json_schema (absent, null or "" leave the request unconstrained).
void ParseGrammarFields(const Json& body, GenerationRequest& request);

// The request's constraint compiled through `grammars` (null when the request has none; the
// engine's GrammarConstraint is made from it with the thinking settings by BuildGenerateParams).
// Throws Error(kInvalidArgument) naming the field, also when there is a constraint and no cache
// (a server that compiles no grammars).
std::shared_ptr<CompiledGrammar> CompileConstraint(const GenerationRequest& request,
                                                   GrammarCache* grammars);

}  // namespace tandem::server
