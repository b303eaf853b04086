#include "grammar/pushdown.h"

#include <algorithm>

namespace tandem {
namespace {

constexpr uint64_t kEmptyKey = ~uint64_t{0};

uint64_t Key(int32_t parent, int32_t pos) {
  return (uint64_t{static_cast<uint32_t>(parent)} << 32) | static_cast<uint32_t>(pos);
}

uint64_t Mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

Pushdown::Pushdown(const Grammar& grammar) : g_(grammar) {
  slots_.assign(1024, {kEmptyKey, -1});
  mask_ = slots_.size() - 1;
  InternState(StackSet{});  // kDeadState
  transitions_.assign(1024, {0, -1});
  transition_keys_.assign(1024, kEmptyKey);
}

size_t Pushdown::StateHash::operator()(const StackSet& s) const {
  uint64_t h = s.accept ? 0x9e3779b97f4a7c15ULL : 0;
  for (const int32_t t : s.tops) h = Mix(h ^ static_cast<uint32_t>(t)) + 0x632be59bd9b4e019ULL;
  return static_cast<size_t>(h);
}

int32_t Pushdown::InternState(const StackSet& set) {
  const auto it = state_ids_.find(set);
  if (it != state_ids_.end()) return it->second;
  const int32_t id = static_cast<int32_t>(states_.size());
  states_.push_back(set);
  state_ids_.emplace(set, id);
  return id;
}

Pushdown::Transition Pushdown::Next(int32_t state, uint8_t byte) {
  const uint64_t key = (static_cast<uint64_t>(state) << 8) | byte;
  const uint64_t mask = transition_keys_.size() - 1;
  uint64_t i = Mix(key) & mask;
  for (; transition_keys_[i] != kEmptyKey; i = (i + 1) & mask) {
    if (transition_keys_[i] == key) return transitions_[i];
  }
  scratch_escapes_.clear();
  Step(states_[state], byte, scratch_, &scratch_escapes_);
  Transition t{InternState(scratch_), -1};
  if (!scratch_escapes_.empty()) {
    std::sort(scratch_escapes_.begin(), scratch_escapes_.end());
    scratch_escapes_.erase(std::unique(scratch_escapes_.begin(), scratch_escapes_.end()),
                           scratch_escapes_.end());
    t.escapes = static_cast<int32_t>(escape_lists_.size());
    escape_lists_.push_back(scratch_escapes_);
  }
  transition_keys_[i] = key;
  transitions_[i] = t;
  if (++n_transitions_ * 2 > transition_keys_.size()) {
    std::vector<uint64_t> old_keys(transition_keys_.size() * 2, kEmptyKey);
    std::vector<Transition> old(transitions_.size() * 2, {0, -1});
    old_keys.swap(transition_keys_);
    old.swap(transitions_);
    const uint64_t m = transition_keys_.size() - 1;
    for (size_t j = 0; j < old_keys.size(); ++j) {
      if (old_keys[j] == kEmptyKey) continue;
      uint64_t k = Mix(old_keys[j]) & m;
      while (transition_keys_[k] != kEmptyKey) k = (k + 1) & m;
      transition_keys_[k] = old_keys[j];
      transitions_[k] = old[j];
    }
  }
  return t;
}

int32_t Pushdown::Intern(int32_t parent, int32_t pos) {
  const uint64_t key = Key(parent, pos);
  for (uint64_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
    if (slots_[i].key == key) return slots_[i].id;
    if (slots_[i].key != kEmptyKey) continue;
    const int32_t id = static_cast<int32_t>(nodes_.size());
    nodes_.push_back({parent, pos});
    visited_.push_back(0);
    slots_[i] = {key, id};
    if (nodes_.size() * 2 > slots_.size()) {
      std::vector<Slot> old(slots_.size() * 2, {kEmptyKey, -1});
      old.swap(slots_);
      mask_ = slots_.size() - 1;
      for (const Slot& s : old) {
        if (s.key == kEmptyKey) continue;
        uint64_t j = Mix(s.key) & mask_;
        while (slots_[j].key != kEmptyKey) j = (j + 1) & mask_;
        slots_[j] = s;
      }
    }
    return id;
  }
}

void Pushdown::Begin(StackSet& out) {
  out.tops.clear();
  out.accept = false;
  if (++stamp_ == 0) {
    std::fill(visited_.begin(), visited_.end(), 0);
    stamp_ = 1;
  }
}

void Pushdown::End(StackSet& out) {
  std::sort(out.tops.begin(), out.tops.end());
}

void Pushdown::PopInto(int32_t parent, int32_t rule, StackSet& out, Escapes* escapes) {
  if (parent == kRootNode) {
    out.accept = true;
    return;
  }
  if (IsUnknownNode(parent)) {
    const int32_t depth = UnknownDepth(parent);
    const int32_t ret = g_.UniqueReturn(rule);
    if (ret == kAccept) {
      out.accept = true;
    } else if (ret >= 0 && depth + 1 < kMaxUnknownDepth) {
      ExpandAt(UnknownNode(depth + 1), ret, out, escapes);
    } else if (escapes != nullptr) {
      escapes->push_back(depth);
    }
    return;
  }
  ExpandAt(nodes_[parent].parent, nodes_[parent].pos, out, escapes);
}

void Pushdown::ExpandAt(int32_t parent, int32_t pos, StackSet& out, Escapes* escapes) {
  const GrammarElement e = g_.elements[pos];
  if (e.kind == GrammarElement::kEnd) {
    PopInto(parent, e.value, out, escapes);
    return;
  }
  const int32_t n = Intern(parent, pos);
  if (visited_[n] == stamp_) return;
  visited_[n] = stamp_;
  if (e.kind == GrammarElement::kBytes) {
    out.tops.push_back(n);
    return;
  }
  const int32_t cont =
      g_.elements[pos + 1].kind == GrammarElement::kEnd ? parent : Intern(parent, pos + 1);
  for (const int32_t alt : g_.alternatives[e.value]) ExpandAt(cont, alt, out, escapes);
}

StackSet Pushdown::Initial() {
  StackSet out;
  Begin(out);
  for (const int32_t alt : g_.alternatives[g_.root]) ExpandAt(kRootNode, alt, out, nullptr);
  End(out);
  return out;
}

void Pushdown::StepNode(int32_t top, uint8_t byte, StackSet& out, Escapes* escapes) {
  if (!Matches(top, byte)) return;
  const Node nd = nodes_[top];
  ExpandAt(nd.parent, nd.pos + 1, out, escapes);
}

void Pushdown::Step(const StackSet& in, uint8_t byte, StackSet& out, Escapes* escapes) {
  Begin(out);
  for (const int32_t top : in.tops) StepNode(top, byte, out, escapes);
  End(out);
}

}  // namespace tandem
