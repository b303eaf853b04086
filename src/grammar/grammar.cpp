#include "grammar/grammar.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "base/error.h"

namespace tandem {

int ByteSet::Count() const {
  int n = 0;
  for (const uint64_t w : bits) n += std::popcount(w);
  return n;
}

int32_t GrammarBuilder::RuleId(const std::string& name) {
  if (const auto it = index_.find(name); it != index_.end()) return it->second;
  if (names_.size() >= kMaxGrammarRules) {
    Fail(ErrorKind::kInvalidArgument,
         "grammar: more than " + std::to_string(kMaxGrammarRules) + " rules");
  }
  index_.emplace(name, static_cast<int32_t>(names_.size()));
  names_.push_back(name);
  rules_.emplace_back();
  defined_.push_back(false);
  return static_cast<int32_t>(names_.size() - 1);
}

int32_t GrammarBuilder::NewRule(const std::string& base) {
  for (size_t k = names_.size();; ++k) {
    const std::string name = base + "_" + std::to_string(k);
    if (index_.count(name) == 0) return RuleId(name);
  }
}

void GrammarBuilder::Define(int32_t rule, std::vector<Sequence> alternatives) {
  if (defined_[rule]) {
    Fail(ErrorKind::kInvalidArgument, "grammar: rule '" + names_[rule] + "' is defined twice");
  }
  for (const Sequence& s : alternatives) n_symbols_ += s.size() + 1;
  if (n_symbols_ > kMaxGrammarElements) {
    Fail(ErrorKind::kInvalidArgument, "grammar: more than " + std::to_string(kMaxGrammarElements) +
                                          " elements after expanding repetitions");
  }
  rules_[rule] = std::move(alternatives);
  defined_[rule] = true;
}

GrammarBuilder::Symbol GrammarBuilder::Bytes(const ByteSet& set) {
  for (size_t i = 0; i < bytesets_.size(); ++i) {
    if (bytesets_[i] == set) return {false, static_cast<int32_t>(i)};
  }
  bytesets_.push_back(set);
  return {false, static_cast<int32_t>(bytesets_.size() - 1)};
}

GrammarBuilder::Symbol GrammarBuilder::Byte(uint8_t b) {
  ByteSet set;
  set.Add(b);
  return Bytes(set);
}

namespace {

// Fails if some rule can reach itself without consuming a byte (left recursion), which a
// pushdown matcher cannot expand.
void CheckNoLeftRecursion(const std::vector<std::vector<GrammarBuilder::Sequence>>& rules,
                          const std::vector<std::string>& names, const std::string& what) {
  const size_t n = rules.size();
  // Nullable rules by a worklist, linear in the grammar's size: an alternative becomes nullable
  // when its last symbol that is not known nullable does; one holding a byte set never does.
  std::vector<bool> nullable(n, false);
  std::vector<std::pair<int32_t, size_t>> alts;  // (rule, symbols not yet known nullable)
  std::vector<std::vector<size_t>> uses(n);      // [rule] alternatives it occurs in, per occurrence
  std::vector<int32_t> work;
  const auto became_nullable = [&](int32_t r) {
    if (!nullable[r]) {
      nullable[r] = true;
      work.push_back(r);
    }
  };
  for (size_t r = 0; r < n; ++r) {
    for (const auto& seq : rules[r]) {
      const bool has_bytes =
          std::any_of(seq.begin(), seq.end(), [](const auto& s) { return !s.is_rule; });
      if (has_bytes) continue;
      if (seq.empty()) became_nullable(static_cast<int32_t>(r));
      for (const auto& s : seq) uses[s.value].push_back(alts.size());
      alts.push_back({static_cast<int32_t>(r), seq.size()});
    }
  }
  while (!work.empty()) {
    const int32_t r = work.back();
    work.pop_back();
    for (const size_t a : uses[r]) {
      if (--alts[a].second == 0) became_nullable(alts[a].first);
    }
  }
  std::vector<std::vector<int32_t>> starts(n);  // rules that can begin rule r
  for (size_t r = 0; r < n; ++r) {
    for (const auto& seq : rules[r]) {
      for (const auto& s : seq) {
        if (!s.is_rule) break;
        starts[r].push_back(s.value);
        if (!nullable[s.value]) break;
      }
    }
  }
  std::vector<uint8_t> color(n, 0);  // 0 new, 1 on the DFS path, 2 done
  std::vector<std::pair<int32_t, size_t>> stack;
  for (size_t r0 = 0; r0 < n; ++r0) {
    if (color[r0] != 0) continue;
    stack.push_back({static_cast<int32_t>(r0), 0});
    color[r0] = 1;
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      if (next == starts[r].size()) {
        color[r] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t s = starts[r][next++];
      if (color[s] == 1) {
        Fail(ErrorKind::kInvalidArgument, what + ": rule '" + names[s] +
                                              "' is left-recursive (it can reach itself through '" +
                                              names[r] + "' without matching a byte)");
      }
      if (color[s] == 0) {
        color[s] = 1;
        stack.push_back({s, 0});
      }
    }
  }
}

}  // namespace

Grammar GrammarBuilder::Finish(const std::string& root_name, const std::string& what) {
  Grammar g;
  const auto root_it = std::find(names_.begin(), names_.end(), root_name);
  if (root_it == names_.end() || !defined_[root_it - names_.begin()]) {
    Fail(ErrorKind::kInvalidArgument, what + ": no rule named '" + root_name + "'");
  }
  for (size_t r = 0; r < names_.size(); ++r) {
    if (!defined_[r]) {
      Fail(ErrorKind::kInvalidArgument,
           what + ": rule '" + names_[r] + "' is used but not defined");
    }
  }
  CheckNoLeftRecursion(rules_, names_, what);
  g.root = static_cast<int32_t>(root_it - names_.begin());
  g.rule_names = names_;
  g.bytesets = bytesets_;
  g.alternatives.resize(names_.size());
  for (size_t r = 0; r < rules_.size(); ++r) {
    for (const Sequence& seq : rules_[r]) {
      g.alternatives[r].push_back(static_cast<int32_t>(g.elements.size()));
      for (const Symbol& s : seq) {
        g.elements.push_back({s.is_rule ? GrammarElement::kRule : GrammarElement::kBytes, s.value});
      }
      g.elements.push_back({GrammarElement::kEnd, static_cast<int32_t>(r)});
    }
  }
  // Return positions: c+1 for a non-tail call at c; a tail call inherits the caller's returns.
  // Only whether a rule has exactly one matters (Grammar::UniqueReturn), so each rule's state
  // moves at most twice (none -> one -> several) and a worklist over tail calls is linear.
  constexpr int32_t kNoneYet = -3;
  g.unique_return.assign(names_.size(), kNoneYet);
  std::vector<std::vector<int32_t>> tail_callees(names_.size());
  std::vector<int32_t> work;
  const auto add_return = [&](int32_t rule, int32_t ret) {
    int32_t& state = g.unique_return[rule];
    if (state == ret || state == kNoUniqueReturn) return;
    state = state == kNoneYet ? ret : kNoUniqueReturn;
    work.push_back(rule);
  };
  add_return(g.root, kAccept);
  for (int32_t pos = static_cast<int32_t>(g.elements.size()) - 1, r = -1; pos >= 0; --pos) {
    const GrammarElement& e = g.elements[pos];
    if (e.kind == GrammarElement::kEnd) {
      r = e.value;
    } else if (e.kind == GrammarElement::kRule) {
      if (g.elements[pos + 1].kind != GrammarElement::kEnd) {
        add_return(e.value, pos + 1);
      } else if (e.value != r) {
        tail_callees[r].push_back(e.value);
      }
    }
  }
  while (!work.empty()) {
    const int32_t caller = work.back();
    work.pop_back();
    for (const int32_t callee : tail_callees[caller]) {
      add_return(callee, g.unique_return[caller]);
    }
  }
  for (int32_t& state : g.unique_return) {
    if (state == kNoneYet) state = kNoUniqueReturn;  // unreachable: never pops
  }
  return g;
}

namespace {

void AppendEscapedByte(int b, std::string& out) {
  if (b >= 0x21 && b < 0x7f && b != '\\' && b != ']' && b != '-' && b != '^' && b != '"') {
    out.push_back(static_cast<char>(b));
    return;
  }
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02X", b);
  out.append(buf);
}

void AppendByteSet(const ByteSet& set, std::string& out) {
  out.push_back('[');
  for (int b = 0; b < 256;) {
    if (!set.Has(static_cast<uint8_t>(b))) {
      ++b;
      continue;
    }
    int e = b;
    while (e + 1 < 256 && set.Has(static_cast<uint8_t>(e + 1))) ++e;
    AppendEscapedByte(b, out);
    if (e > b) {
      out.push_back('-');
      AppendEscapedByte(e, out);
    }
    b = e + 1;
  }
  out.push_back(']');
}

}  // namespace

std::string Grammar::ToString() const {
  std::string out;
  for (int32_t r = 0; r < n_rules(); ++r) {
    out.append(rule_names[r]);
    out.append(" ::=");
    for (size_t a = 0; a < alternatives[r].size(); ++a) {
      if (a > 0) out += " |";
      for (int32_t pos = alternatives[r][a]; elements[pos].kind != GrammarElement::kEnd; ++pos) {
        out += ' ';
        if (elements[pos].kind == GrammarElement::kRule) {
          out.append(rule_names[elements[pos].value]);
        } else {
          AppendByteSet(bytesets[elements[pos].value], out);
        }
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace tandem
