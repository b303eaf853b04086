// The grammar constraint of one slot's request: masks, draft constraint, cut and forced tokens.
#include "speculative/slot_grammar.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "base/error.h"
#include "grammar/compiled_grammar.h"
#include "tokenizer/utf8.h"

namespace tandem {

SlotGrammar::SlotGrammar(const GrammarConstraint& constraint, int n_vocab)
    : constraint_(constraint),
      n_vocab_(n_vocab),
      matcher_(constraint.grammar ? std::make_unique<GrammarMatcher>(constraint.grammar) : nullptr),
      phase_(constraint.thought_open >= 0 ? Phase::kStart : Phase::kAnswer),
      mask_(constraint.grammar ? constraint.grammar->vocab().size() : 0),
      masked_(n_vocab) {}

bool SlotGrammar::ThoughtExhausted() const {
  return phase_ == Phase::kThinking && constraint_.thought_budget >= 0 &&
         thought_tokens_ >= constraint_.thought_budget;
}

bool SlotGrammar::Step(int32_t token) {
  if (phase_ == Phase::kDone) return false;
  if (phase_ == Phase::kThinking) {
    if (token != constraint_.thought_close) {
      if (ThoughtExhausted()) return false;
      ++thought_tokens_;
    } else {
      phase_ = Phase::kAnswer;
    }
    return true;
  }
  if (token == constraint_.thought_open && (phase_ == Phase::kStart || !matcher_)) {
    phase_ = Phase::kThinking;
    return true;
  }
  phase_ = Phase::kAnswer;
  if (!matcher_) return true;
  if (!matcher_->AcceptToken(token)) return false;
  if (matcher_->IsTerminated()) phase_ = Phase::kDone;
  return true;
}

bool SlotGrammar::MaskLogits(float* logits, int n_vocab) {
  const float ninf = -std::numeric_limits<float>::infinity();
  if (ThoughtExhausted()) {
    for (int i = 0; i < n_vocab; ++i) {
      if (i != constraint_.thought_close) logits[i] = ninf;
    }
    return constraint_.thought_close < n_vocab && logits[constraint_.thought_close] != ninf;
  }
  if (phase_ == Phase::kThinking || !matcher_) return true;
  if (phase_ == Phase::kDone) return false;
  FillAllowed();
  // A word of the mask at a time: most words of a 262k vocabulary are all banned (a fill) or,
  // in free text, all allowed (nothing to write); only mixed words go bit by bit.
  const std::vector<uint64_t>& words = mask_.words();
  const int n_mask = std::min(n_vocab, static_cast<int>(mask_.size()));
  bool any = false;
  for (int base = 0; base < n_mask; base += 64) {
    const int n = std::min(64, n_mask - base);
    const uint64_t full = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    const uint64_t w = words[static_cast<size_t>(base) >> 6] & full;
    float* l = logits + base;
    if (w == 0) {
      std::fill(l, l + n, ninf);
    } else if (w == full && any) {
      continue;
    } else {
      for (int i = 0; i < n; ++i) {
        if ((w >> i) & 1) {
          any = any || l[i] != ninf;
        } else {
          l[i] = ninf;
        }
      }
    }
  }
  std::fill(logits + n_mask, logits + n_vocab, ninf);
  return any;
}

void SlotGrammar::FillAllowed() {
  matcher_->FillNextTokenMask(mask_);
  if (phase_ == Phase::kStart) {
    mask_.Set(constraint_.thought_open);
  } else if (const int32_t canonical = CanonicalForced(); canonical >= 0) {
    mask_.Clear();  // a forced string is written as the tokenizer writes it
    mask_.Set(canonical);
  }
}

bool SlotGrammar::AllowedTokens(int max, std::vector<int32_t>& ids) {
  if (ThoughtExhausted()) {
    ids = {constraint_.thought_close};
    return true;
  }
  if (phase_ == Phase::kThinking || phase_ == Phase::kDone || !matcher_) return false;
  FillAllowed();
  if (mask_.Count() > max) return false;
  ids = mask_.Ids();
  return true;
}

const float* SlotGrammar::Mask(const float* logits) {
  if ((phase_ == Phase::kThinking || !matcher_) && !ThoughtExhausted()) return logits;
  masked_.assign(logits, logits + n_vocab_);
  if (!MaskLogits(masked_.data(), n_vocab_)) {
    Fail(ErrorKind::kInternal,
         "grammar: no allowed token has a finite logit (the document is complete, or logit_bias "
         "bans every token it allows)");
  }
  // The committed state's mask is at hand (restricted to one token where a forced string is
  // pending, which is no choice either): Commit will need its choice key.
  if (phase_ == Phase::kAnswer && matcher_ && !ThoughtExhausted()) RememberChoice();
  return masked_.data();
}

void SlotGrammar::Commit(int32_t token) {
  const uint64_t key = ChoiceKey(last_token_);
  if (!Step(token)) {
    Fail(ErrorKind::kInternal,
         "grammar: emitted token " + std::to_string(token) + " is not allowed by the grammar");
  }
  if (key != 0) layout_.Record(key, token);
  last_token_ = token;
}

uint64_t SlotGrammar::ChoiceKey(int32_t prev) {
  if (phase_ != Phase::kAnswer || !matcher_ || matcher_->IsTerminated()) return 0;
  auto it = choices_.find(matcher_->state());
  if (it == choices_.end()) {
    matcher_->FillNextTokenMask(mask_);
    it = RememberChoice();
  }
  return KeyAfter(it->second, prev);
}

uint64_t SlotGrammar::KeyAfter(uint64_t choice, int32_t prev) const {
  if (choice == 0) return 0;
  // The previous token's last byte, not its id: a layout follows the structure (after a key's
  // closing quote, after ',' or ':'), so what the model chose after one key is guessed after the
  // next key too.
  const TokenVocabulary& vocab = matcher_->compiled().vocab();
  uint64_t after = 0;
  if (prev >= 0 && prev < vocab.size() && !vocab.piece(prev).empty()) {
    after = static_cast<uint8_t>(vocab.piece(prev).back()) + 1;
  }
  const uint64_t key = choice ^ ((after + 1) * 0x9e3779b97f4a7c15ull);
  return key != 0 ? key : 1;
}

std::unordered_map<int32_t, uint64_t>::iterator SlotGrammar::RememberChoice() {
  const int32_t state = matcher_->state();
  if (const auto it = choices_.find(state); it != choices_.end()) return it;
  // A cheap signature of the allowed set (collisions only cost a wrong guess, which
  // verification rejects): its size and a rotate-xor fold of its words.
  uint64_t fold = 0;
  int64_t count = 0;
  const std::vector<uint64_t>& words = mask_.words();
  for (size_t i = 0; i < words.size(); ++i) {
    fold ^= std::rotl(words[i], static_cast<int>(i % 63));
    count += std::popcount(words[i]);
  }
  uint64_t h = 0;
  if (count > 1 && CanonicalForced() < 0) {
    h = (fold ^ (static_cast<uint64_t>(count) << 40)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) | 1;
  }
  if (choices_.size() >= kCanonicalCache) choices_.clear();
  return choices_.emplace(state, h).first;
}

void SlotGrammar::Save() {
  saved_phase_ = phase_;
  saved_thought_tokens_ = thought_tokens_;
  if (matcher_) saved_checkpoint_ = matcher_->Checkpoint();
}

void SlotGrammar::Restore() {
  phase_ = saved_phase_;
  thought_tokens_ = saved_thought_tokens_;
  if (matcher_) matcher_->Rollback(saved_checkpoint_);
}

void SlotGrammar::BeginDraft() {
  Save();
}
void SlotGrammar::EndDraft() {
  Restore();
}

void SlotGrammar::Advance(int32_t token) {
  // A drafter only chooses masked tokens; one the grammar rejects ends the constrained draft
  // (CutDrafts drops it and what follows).
  if (!Step(token)) phase_ = Phase::kDone;
}

void SlotGrammar::CutDrafts(DraftResult& drafts) {
  Save();
  size_t keep = 0;
  while (keep < drafts.tokens.size() && Step(drafts.tokens[keep])) ++keep;
  Restore();
  drafts.tokens.resize(keep);
  if (drafts.q.size() > keep) drafts.q.resize(keep);
}

int32_t SlotGrammar::CanonicalForced() {
  const CompiledGrammar::Encoder& encode = matcher_->compiled().encoder();
  if (!encode) return -1;
  const int32_t state = matcher_->state();
  if (const auto it = canonical_.find(state); it != canonical_.end()) return it->second;
  // The forced bytes up to the last complete UTF-8 character (the tokenizer encodes characters).
  std::string forced = matcher_->ForcedBytes(kForcedBytes);
  forced.resize(Utf8CompletePrefixLength(forced));
  int32_t canonical = -1;
  if (!forced.empty()) {
    const std::vector<int32_t> ids = encode(forced);
    // Its last token may merge with the free text after the forced bytes: not required.
    if (ids.size() >= 2 && ids[0] >= 0 && ids[0] < mask_.size() && mask_.Test(ids[0])) {
      canonical = ids[0];
    }
  }
  if (canonical_.size() >= kCanonicalCache) canonical_.clear();
  canonical_.emplace(state, canonical);
  return canonical;
}

std::vector<int32_t> SlotGrammar::ForcedTokens() {
  if (ThoughtExhausted()) return {constraint_.thought_close};
  if (phase_ != Phase::kAnswer || !matcher_) return {};
  matcher_->FillNextTokenMask(mask_);
  if (mask_.Count() == 1) return mask_.Ids();
  // The next token of a forced string, as the tokenizer writes it (the mask allows only it).
  if (const int32_t canonical = CanonicalForced(); canonical >= 0) return {canonical};
  return {};
}

int32_t SlotGrammar::ForcedNext() {
  const std::vector<int32_t> forced = ForcedTokens();
  return forced.size() == 1 ? forced[0] : -1;
}

int SlotGrammar::ForcedRun(int max) {
  // Its own checkpoint: Save() may hold the committed state of a draft in progress.
  const Phase phase = phase_;
  const int thought_tokens = thought_tokens_;
  const size_t checkpoint = matcher_ ? matcher_->Checkpoint() : 0;
  int n = 0;
  while (n < max) {
    const int32_t t = ForcedNext();
    if (t < 0 || !Step(t)) break;
    ++n;
  }
  phase_ = phase;
  thought_tokens_ = thought_tokens;
  if (matcher_) matcher_->Rollback(checkpoint);
  return n;
}

int SlotGrammar::AppendForced(DraftResult& drafts, int n_max, bool sampled,
                              const std::function<double(int rows)>& row_cost,
                              std::vector<bool>& guessed) {
  Save();
  bool valid = true;
  for (const int32_t t : drafts.tokens) valid = valid && Step(t);
  int appended = 0;
  guessed.clear();
  while (valid && static_cast<int>(drafts.tokens.size()) < n_max) {
    const std::vector<int32_t> forced = ForcedTokens();
    int taken = 0;
    for (const int32_t t : forced) {
      if (static_cast<int>(drafts.tokens.size()) >= n_max || !Step(t)) {
        valid = false;
        break;
      }
      drafts.tokens.push_back(t);
      guessed.push_back(false);
      ++taken;
    }
    if (forced.empty()) {
      // A choice: the model's layout habit there, if it has one the grammar allows. In the
      // answer phase ForcedTokens left this state's mask in mask_: no second fill.
      const int32_t prev = drafts.tokens.empty() ? last_token_ : drafts.tokens.back();
      const uint64_t key =
          phase_ == Phase::kAnswer && matcher_ ? KeyAfter(RememberChoice()->second, prev) : 0;
      const int32_t guess = key != 0 ? layout_.Guess(key) : -1;
      const int rows = static_cast<int>(drafts.tokens.size()) + 2;  // with the last token's row
      if (guess >= 0 && layout_.Pays(row_cost(rows)) && Step(guess)) {
        drafts.tokens.push_back(guess);
        guessed.push_back(true);
        ++taken;
      }
    }
    appended += taken;
    if (taken == 0) break;
  }
  if (sampled) drafts.q.resize(drafts.tokens.size());  // forced: point masses
  Restore();
  return appended;
}

}  // namespace tandem
