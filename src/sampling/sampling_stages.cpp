// The sampler chain's stages: logit bias, penalties, top-k, top-p, min-p, softmax.
#include "sampling/sampling_stages.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "sampling/vector_exp.h"
#include "sampling/vocab_scan.h"

namespace tandem::sampling {
namespace {

void CheckToken(int32_t token, size_t n_vocab, const char* what) {
  if (token < 0 || static_cast<size_t>(token) >= n_vocab) {
    Fail(ErrorKind::kInvalidArgument,
         std::string("sampling: ") + what + " token " + std::to_string(token) +
             " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
  }
}

float MaxLogit(const CandidateList& list) {
  if (list.sorted) return list.items.front().logit;
  if (list.max_known) return list.max_logit;
  float max = -INFINITY;
  for (const Candidate& c : list.items) max = std::max(max, c.logit);
  return max;
}

// Puts the `count` best candidates (Before order) first, sorted; the rest follow in
// unspecified order.
void SortBest(CandidateList& list, size_t count) {
  auto& items = list.items;
  if (count < items.size()) {
    std::nth_element(items.begin(), items.begin() + count, items.end(), Before);
  }
  std::sort(items.begin(), items.begin() + count, Before);
  if (count == items.size()) list.sorted = true;
}

// exps[i] = e^((items[i].logit - max) / t) for every candidate, in list order, in a buffer of
// the calling thread's (vector_exp.h: a full vocabulary's exps were most of the chain's time).
std::span<const float> ShiftedExps(const std::vector<Candidate>& items, float max, float t) {
  thread_local std::vector<float> exps;
  if (exps.size() < items.size()) exps.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) exps[i] = items[i].logit - max;
  ExpRow(exps.data(), items.size(), 0.0f, t, exps.data());
  return {exps.data(), items.size()};
}

// Top-p over an unsorted list in linear time, without sorting the vocabulary: candidates are
// bucketed by their distance below the max logit (1/128 nat per bucket; the last bucket takes
// everything further), bucket masses sum(exp(logit - max)) are accumulated (each bucket in list
// order, then buckets in order) to find the bucket where the cumulative mass reaches p * total,
// and only that bucket is sorted. Returns the prefix length; items[0, result) then hold the
// nucleus (better buckets in unspecified but deterministic order, then the boundary bucket's
// best in Before order) and the rest follow.
size_t SelectNucleus(std::vector<Candidate>& items, float max, float p) {
  constexpr int kBuckets = 4096;
  constexpr float kBucketsPerNat = 128.0f;
  // A candidate's distance below the max in buckets, and its bucket.
  const auto distance = [max](const Candidate& c) { return (max - c.logit) * kBucketsPerNat; };
  const auto bucket = [&](const Candidate& c) {
    return static_cast<int>(std::min(distance(c), kBuckets - 1.0f));
  };
  std::vector<double> mass(kBuckets, 0.0);
  const std::span<const float> exps = ShiftedExps(items, max, 1.0f);
  for (size_t i = 0; i < items.size(); ++i) mass[bucket(items[i])] += exps[i];
  double total = 0.0;
  for (double m : mass) total += m;
  const double target = static_cast<double>(p) * total;
  double cumulative = 0.0;
  int edge = 0;
  for (; edge < kBuckets - 1 && cumulative + mass[edge] < target; ++edge) cumulative += mass[edge];
  // Both predicates are true for few or for most items, so the partitions branch predictably.
  // For a distance x >= 0, bucket < edge is x < edge and bucket <= edge is x < edge + 1 (the
  // last bucket takes everything): the same partitions without a conversion per item.
  const auto first = edge == 0
                         ? items.begin()
                         : std::partition(items.begin(), items.end(), [&](const Candidate& c) {
                             return distance(c) < static_cast<float>(edge);
                           });
  const auto last = edge == kBuckets - 1
                        ? items.end()
                        : std::partition(first, items.end(), [&](const Candidate& c) {
                            return distance(c) < static_cast<float>(edge + 1);
                          });
  std::sort(first, last, Before);
  for (auto it = first; it != last; ++it) {
    cumulative += Exp(it->logit - max);
    if (cumulative >= target) return static_cast<size_t>(it - items.begin()) + 1;
  }
  return static_cast<size_t>(last - items.begin());  // rounding kept the target out of reach
}

size_t KeepAtLeast(int32_t min_keep) {
  return static_cast<size_t>(std::max(1, min_keep));
}

}  // namespace

void ApplyLogitBias(std::span<float> logits, std::span<const LogitBias> bias) {
  for (const LogitBias& entry : bias) {
    CheckToken(entry.token, logits.size(), "logit_bias");
    logits[entry.token] += entry.bias;
  }
}

void ApplyPenalties(std::span<float> logits, std::span<const int32_t> history,
                    const SamplingParams& params, std::vector<int32_t>& scratch) {
  const bool neutral = params.repeat_penalty == 1.0f && params.presence_penalty == 0.0f &&
                       params.frequency_penalty == 0.0f;
  if (neutral || params.repeat_last_n == 0 || history.empty()) return;
  size_t window = history.size();
  if (params.repeat_last_n > 0)
    window = std::min(window, static_cast<size_t>(params.repeat_last_n));
  scratch.assign(history.end() - window, history.end());
  for (int32_t token : scratch) CheckToken(token, logits.size(), "history");
  std::sort(scratch.begin(), scratch.end());
  for (size_t i = 0; i < scratch.size();) {
    const int32_t token = scratch[i];
    size_t end = i;
    while (end < scratch.size() && scratch[end] == token) ++end;
    const float count = static_cast<float>(end - i);
    float& logit = logits[token];
    logit = logit <= 0.0f ? logit * params.repeat_penalty : logit / params.repeat_penalty;
    logit -= count * params.frequency_penalty + params.presence_penalty;
    i = end;
  }
}

void CheckLogits(std::span<const float> logits) {
  if (AllBelowInfinity(logits)) return;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] < INFINITY)) {
      Fail(ErrorKind::kInvalidArgument, "sampling: logit of token " + std::to_string(i) + " is " +
                                            (std::isnan(logits[i]) ? "nan" : "+inf"));
    }
  }
}

void CollectCandidates(std::span<const float> logits, CandidateList& out) {
  out.items.clear();
  out.items.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] != -INFINITY) out.items.push_back({logits[i], static_cast<int32_t>(i)});
  }
  out.sorted = false;
  // (-inf, the banned tokens' logit, is the maximum only of an empty list.)
  out.max_known = true;
  out.max_logit = MaxIgnoringNan(logits);
}

void SelectTopK(std::span<const float> logits, int32_t k, CandidateList& out) {
  if (k <= 0 || static_cast<size_t>(k) >= logits.size()) {
    CollectCandidates(logits, out);
    TopK(out, k);
    return;
  }
  // Max-heap under Before: the front is the worst of the k kept so far. Ids arrive in
  // increasing order, so an equal logit never displaces a kept token (lower id wins ties).
  auto& heap = out.items;
  heap.clear();
  heap.reserve(k);
  const size_t n = logits.size();
  for (size_t i = 0; i < n; ++i) {
    // Once the heap is full, a block whose largest value does not beat the worst kept token
    // holds none that would enter: skip it whole.
    if (heap.size() == static_cast<size_t>(k) && BlockNotAboveAt(logits, i, heap.front().logit)) {
      i += kScanBlock - 1;
      continue;
    }
    const float v = logits[i];
    if (v == -INFINITY) continue;
    if (heap.size() < static_cast<size_t>(k)) {
      heap.push_back({v, static_cast<int32_t>(i)});
      std::push_heap(heap.begin(), heap.end(), Before);
    } else if (v > heap.front().logit) {
      std::pop_heap(heap.begin(), heap.end(), Before);
      heap.back() = {v, static_cast<int32_t>(i)};
      std::push_heap(heap.begin(), heap.end(), Before);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), Before);
  out.sorted = true;
  out.max_known = false;  // (a sorted list's max is its front; a recorded one would be stale)
}

void TopK(CandidateList& list, int32_t k) {
  auto& items = list.items;
  if (k <= 0 || static_cast<size_t>(k) >= items.size()) return;
  std::nth_element(items.begin(), items.begin() + k, items.end(), Before);
  items.resize(k);
  std::sort(items.begin(), items.end(), Before);
  list.sorted = true;
}

void TopP(CandidateList& list, float p, int32_t min_keep) {
  auto& items = list.items;
  if (p >= 1.0f || items.empty()) return;
  const float max = MaxLogit(list);
  const size_t keep_min = std::min(items.size(), KeepAtLeast(min_keep));
  size_t keep = items.size();
  if (list.sorted) {
    const std::span<const float> exps = ShiftedExps(items, max, 1.0f);
    double total = 0.0;  // softmax denominator, summed in list order
    for (float e : exps) total += e;
    const double target = static_cast<double>(p) * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < items.size(); ++i) {
      cumulative += exps[i];
      if (cumulative >= target) {
        keep = i + 1;
        break;
      }
    }
  } else {
    keep = SelectNucleus(items, max, p);
    if (keep < keep_min) {
      std::nth_element(items.begin() + keep, items.begin() + keep_min, items.end(), Before);
    }
  }
  items.resize(std::max(keep, keep_min));
}

void MinP(CandidateList& list, float min_p, int32_t min_keep) {
  auto& items = list.items;
  if (min_p <= 0.0f || items.empty()) return;
  const float threshold = MaxLogit(list) + std::log(min_p);
  const size_t keep_min = std::min(items.size(), KeepAtLeast(min_keep));
  if (!list.sorted) {
    size_t passing = 0;
    for (const Candidate& c : items) passing += c.logit >= threshold;
    if (passing >= keep_min) {
      // Stable in-place filter: the list keeps its order, so later sums stay in a fixed order.
      auto end = std::remove_if(items.begin(), items.end(),
                                [threshold](const Candidate& c) { return c.logit < threshold; });
      items.erase(end, items.end());
      return;
    }
    SortBest(list, keep_min);
    items.resize(keep_min);
    list.sorted = true;
    return;
  }
  size_t keep = keep_min;
  while (keep < items.size() && items[keep].logit >= threshold) ++keep;
  items.resize(keep);
}

void WriteSoftmax(const CandidateList& list, float temperature, std::span<float> probs) {
  std::fill(probs.begin(), probs.end(), 0.0f);
  // (logit - max) / t <= 0 never overflows, even for a tiny t (where logit / t would).
  const float max = MaxLogit(list);
  const std::span<const float> exps = ShiftedExps(list.items, max, temperature);
  double total = 0.0;
  for (size_t i = 0; i < list.items.size(); ++i) {
    probs[list.items[i].id] = exps[i];
    total += exps[i];
  }
  const double inverse = 1.0 / total;  // (a multiply per token instead of a divide)
  for (const Candidate& c : list.items) probs[c.id] = static_cast<float>(probs[c.id] * inverse);
}

}  // namespace tandem::sampling
