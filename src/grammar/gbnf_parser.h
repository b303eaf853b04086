// GBNF (llama.cpp's grammar syntax) parsed into a byte-level Grammar.
//
//   rule-name ::= alternative | alternative ...     (one rule per line; newlines allowed inside
//                                                    parentheses and after '|')
//   "literal"  [a-z0-9_]  [^"\\]  .  name  ( group )
//   postfix:   *  +  ?  {m}  {m,}  {m,n}
//   escapes in literals and classes: \n \r \t \\ \" \[ \] \- \^ \/ \xHH \uHHHH \UHHHHHHHH
//   # comment to end of line
//
// Characters are Unicode code points encoded as UTF-8; `.` is any code point. Repetitions are
// expanded into helper rules (name_N). Left recursion is rejected.
#pragma once

#include <string>
#include <string_view>

#include "grammar/grammar.h"

namespace tandem {

inline constexpr size_t kMaxGrammarTextBytes = 1 << 20;
inline constexpr int kMaxGrammarNesting = 64;     // parentheses
inline constexpr uint32_t kMaxRepetition = 4096;  // m and n in {m,n}

// Parses `text`; `root` names the start rule. Throws Error(kInvalidArgument) "grammar: line L
// column C: ..." for syntax errors, and the GrammarBuilder::Finish errors.
Grammar ParseGbnf(std::string_view text, const std::string& root = "root");

}  // namespace tandem
