#include "grammar/integer_range.h"

#include <vector>

namespace tandem {
namespace {

std::string DigitClass(char lo, char hi) {
  std::string out;
  if (lo == hi) {
    out.push_back('"');
    out.push_back(lo);
    out.push_back('"');
  } else {
    out.push_back('[');
    out.push_back(lo);
    out.push_back('-');
    out.push_back(hi);
    out.push_back(']');
  }
  return out;
}

// Same-length digit strings from `lo` to `hi` (lo <= hi), as alternatives appended to `out`.
void SameLength(const std::string& lo, const std::string& hi, const std::string& prefix,
                std::vector<std::string>& out) {
  const size_t n = lo.size();
  if (n == 0) {
    out.push_back(prefix.empty() ? "\"\"" : prefix);
    return;
  }
  const std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
  const bool lo_min = lo_rest.find_first_not_of('0') == std::string::npos;
  const bool hi_max = hi_rest.find_first_not_of('9') == std::string::npos;
  auto join = [&](const std::string& head) { return prefix.empty() ? head : prefix + " " + head; };
  if (lo[0] == hi[0]) {
    SameLength(lo_rest, hi_rest, join(DigitClass(lo[0], lo[0])), out);
    return;
  }
  if (lo_min && hi_max) {
    std::string tail = n > 1 ? " [0-9]{" + std::to_string(n - 1) + "}" : "";
    out.push_back(join(DigitClass(lo[0], hi[0]) + tail));
    return;
  }
  char mid_lo = lo[0], mid_hi = hi[0];
  if (!lo_min) {
    SameLength(lo_rest, std::string(n - 1, '9'), join(DigitClass(lo[0], lo[0])), out);
    ++mid_lo;
  }
  if (!hi_max) --mid_hi;
  if (mid_lo <= mid_hi) {
    std::string tail = n > 1 ? " [0-9]{" + std::to_string(n - 1) + "}" : "";
    out.push_back(join(DigitClass(mid_lo, mid_hi) + tail));
  }
  if (!hi_max) SameLength(std::string(n - 1, '0'), hi_rest, join(DigitClass(hi[0], hi[0])), out);
}

// Non-negative integers in [lo, hi] (hi < 0: unbounded), appended to `out` with `sign` in front.
void NonNegative(uint64_t lo, int64_t hi, const std::string& sign, std::vector<std::string>& out) {
  const std::string lo_s = std::to_string(lo);
  const size_t max_len = hi < 0 ? lo_s.size() : std::to_string(hi).size();
  for (size_t len = lo_s.size(); len <= max_len; ++len) {
    std::string first(len, '0');
    if (len > 1) first[0] = '1';
    const std::string last(len, '9');
    const std::string a = len == lo_s.size() ? lo_s : first;
    const std::string b = hi >= 0 && len == max_len ? std::to_string(hi) : last;
    std::vector<std::string> alts;
    SameLength(a, b, "", alts);
    for (const std::string& alt : alts) out.push_back(sign.empty() ? alt : sign + " " + alt);
  }
  if (hi < 0) {
    // Any number with more digits than lo.
    out.push_back((sign.empty() ? "" : sign + " ") + "[1-9] [0-9]{" + std::to_string(lo_s.size()) +
                  ",}");
  }
}

}  // namespace

std::string IntegerRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alts;
  // Negative part: -x for x in [max(1, -hi), -lo].
  if (!lo || *lo < 0) {
    const uint64_t neg_lo = hi && *hi < 0 ? static_cast<uint64_t>(-*hi) : 1;
    const int64_t neg_hi = lo ? -*lo : -1;
    if (hi && *hi < 0) {
      NonNegative(neg_lo, neg_hi, "\"-\"", alts);
    } else if (!hi || *hi >= 0) {
      NonNegative(1, neg_hi, "\"-\"", alts);
    }
  }
  if (!hi || *hi >= 0) {
    const uint64_t pos_lo = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    NonNegative(pos_lo, hi ? *hi : -1, "", alts);
  }
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

}  // namespace tandem
