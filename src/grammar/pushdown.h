// The pushdown core of the grammar matcher: hash-consed stacks and their byte-by-byte advance.
//
// A stack is a node id. Node (parent, pos) means "the top frame is at element `pos` (a byte set,
// or a rule reference about to expand); when its rule ends, continue with stack `parent`".
// Identical stacks are the same id, so a set of stacks is a sorted vector of ints: cheap to copy,
// compare and hash. Parents below zero are sentinels: kRootNode (the bottom of a real stack:
// popping it means the document is complete) and UnknownNode(d) (the bottom of a stack whose
// lower frames are unknown, used when precomputing token masks; d counts the frames popped).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace tandem {

inline constexpr int32_t kRootNode = -1;
inline constexpr int32_t kMaxUnknownDepth = 32;
inline constexpr int32_t UnknownNode(int32_t depth) {
  return -2 - depth;
}
inline constexpr bool IsUnknownNode(int32_t node) {
  return node <= -2;
}
inline constexpr int32_t UnknownDepth(int32_t node) {
  return -2 - node;
}

// A set of stacks whose tops are byte-set elements, plus whether the grammar may end here.
struct StackSet {
  std::vector<int32_t> tops;  // sorted, unique node ids
  bool accept = false;
  bool empty() const { return tops.empty() && !accept; }
  bool operator==(const StackSet&) const = default;
};

// Where stacks with unknown bottoms left their known frames (mask precomputation): the depth of
// the unknown frame whose rule ended with more than one possible return position.
using Escapes = std::vector<int32_t>;

class Pushdown {
 public:
  explicit Pushdown(const Grammar& grammar);
  Pushdown(const Pushdown&) = delete;
  Pushdown& operator=(const Pushdown&) = delete;

  const Grammar& grammar() const { return g_; }
  struct Node {
    int32_t parent;
    int32_t pos;
  };
  const Node& node(int32_t id) const { return nodes_[id]; }
  size_t n_nodes() const { return nodes_.size(); }
  int32_t Intern(int32_t parent, int32_t pos);

  // The stacks at the start of the grammar (the root rule expanded).
  StackSet Initial();
  // The stacks after `in` consumes `byte` (empty if none can). `escapes` (may be null) collects
  // the escape depths of stacks with unknown bottoms.
  void Step(const StackSet& in, uint8_t byte, StackSet& out, Escapes* escapes = nullptr);
  // The stacks of the single stack `node` (a byte-set top) after it consumes `byte`, added to
  // `out` (call Begin/End around a batch).
  void Begin(StackSet& out);
  void StepNode(int32_t node, uint8_t byte, StackSet& out, Escapes* escapes);
  // Adds the expansion of "stack `parent` resumes" (pops the frame `parent`).
  void PopInto(int32_t parent, int32_t rule, StackSet& out, Escapes* escapes);
  void End(StackSet& out);

  bool Matches(int32_t top, uint8_t byte) const {
    return g_.bytesets[g_.elements[nodes_[top].pos].value].Has(byte);
  }

  // Interned stack sets (states) and their cached transitions: a lazily built DFA. State
  // kDeadState is the empty set.
  static constexpr int32_t kDeadState = 0;
  int32_t InternState(const StackSet& set);
  const StackSet& state(int32_t id) const { return states_[id]; }
  size_t n_states() const { return states_.size(); }
  int32_t InitialState() { return InternState(Initial()); }
  struct Transition {
    int32_t next;     // state id
    int32_t escapes;  // index into escape lists, or -1 (mask precomputation only)
  };
  // The state after `state` consumes `byte`, cached.
  Transition Next(int32_t state, uint8_t byte);
  const Escapes& escapes(int32_t index) const { return escape_lists_[index]; }

 private:
  struct StateHash {
    size_t operator()(const StackSet& s) const;
  };
  void ExpandAt(int32_t parent, int32_t pos, StackSet& out, Escapes* escapes);

  const Grammar& g_;
  std::vector<Node> nodes_;
  struct Slot {
    uint64_t key;
    int32_t id;
  };
  std::vector<Slot> slots_;  // (parent, pos) -> id, open addressing
  uint64_t mask_ = 0;
  std::vector<uint32_t> visited_;  // [node] stamp of the batch that expanded it
  uint32_t stamp_ = 0;

  std::vector<StackSet> states_;
  std::unordered_map<StackSet, int32_t, StateHash> state_ids_;
  std::vector<Transition> transitions_;  // open addressing on (state, byte)
  std::vector<uint64_t> transition_keys_;
  size_t n_transitions_ = 0;
  std::vector<Escapes> escape_lists_;
  StackSet scratch_;
  Escapes scratch_escapes_;
};

}  // namespace tandem
