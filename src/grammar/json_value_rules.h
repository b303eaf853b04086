// The whitespace a JsonSyntax allows between JSON tokens (json_schema.h's compiler and the
// generic value rules share it): inside brackets and before a separator, and after one.
#pragma once

#include "grammar/json_schema.h"

namespace tandem {

// GBNF expressions (inlined at every use, so each copy has one return position).
const char* BeforeSeparator(JsonSyntax syntax);
const char* AfterSeparator(JsonSyntax syntax);

}  // namespace tandem
