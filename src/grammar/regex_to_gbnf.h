// A JSON Schema `pattern` (an ECMAScript regex subset) as a GBNF expression over the JSON-escaped
// characters of a string's content (between the quotes).
//
// Supported: literals, `.`, classes with ranges and negation, \d \D \w \W \s \S, escaped
// punctuation, \t \n \r \f \v \xHH \uHHHH, groups ( ) and (?: ), alternation, quantifiers * + ?
// {n} {n,} {n,m} (lazy forms match the same strings), ^ at the start and $ at the end (without
// them the pattern may match anywhere: any characters may come before or after). Characters that
// JSON must escape (" \ and controls) are written escaped. Anything else (backreferences,
// lookaround, \b, Unicode properties, flags) throws Error(kUnsupported) naming it.
#pragma once

#include <string>
#include <string_view>

namespace tandem {

std::string RegexToGbnf(std::string_view pattern);

// The GBNF expression of one JSON string character (raw or escaped), shared with the schema
// compiler.
extern const char* const kJsonCharGbnf;

}  // namespace tandem
