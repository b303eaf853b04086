// The decimal integers in a range as a GBNF expression: canonical JSON integers (no leading
// zeros, no "-0"), exactly those in [lo, hi] (an absent bound is unbounded).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tandem {

std::string IntegerRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace tandem
