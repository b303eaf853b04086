#include "kv/kv_cache.h"

#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"

namespace tandem {
namespace {

KvCache MakeCache(TensorType type = TensorType::kF32) {
  // Layer 0: sliding window 4; layer 1: full attention.
  return KvCache({{1, 32, 4}, {2, 64, 0}}, {.type = type, .n_ctx = 32, .n_seq = 2, .max_batch = 3});
}

TEST(KvCache, SlidingRingHoldsWindowPlusBatch) {
  KvCache cache = MakeCache();
  EXPECT_EQ(cache.View(0, 0).n_slots, 4 + 3 - 1);
  EXPECT_EQ(cache.View(1, 0).n_slots, 32);
  EXPECT_EQ(cache.bytes(), 2u * 2 * (6 * 1 * 32 * 4 + 32 * 2 * 64 * 4));
}

TEST(KvCache, StoredRangeFollowsAppendAndTruncate) {
  KvCache cache = MakeCache();
  cache.Append(0, 3);
  cache.Append(0, 3);
  cache.Append(0, 3);  // length 9: the sliding ring (6 slots) keeps positions 3..8
  EXPECT_EQ(cache.Length(0), 9);
  EXPECT_EQ(cache.View(0, 0).stored.begin, 3);
  EXPECT_EQ(cache.View(0, 0).stored.end, 9);
  EXPECT_EQ(cache.View(1, 0).stored.begin, 0);
  cache.Truncate(0, 7);  // rolled back: 7, 8 were written over positions 1, 2 only
  EXPECT_EQ(cache.View(0, 0).stored.begin, 3);
  EXPECT_EQ(cache.View(0, 0).stored.end, 7);
  EXPECT_EQ(cache.Length(1), 0);  // sequences are independent
  cache.Clear(0);
  EXPECT_EQ(cache.View(0, 0).stored.begin, 0);
  EXPECT_EQ(cache.View(0, 0).stored.end, 0);
}

TEST(KvCache, AdoptMarksTheSavedRowsHeld) {
  KvCache cache = MakeCache();
  cache.Adopt(1, 7, {3, 0});  // sliding rows from 3 on (a rolled-back original), full from 0
  EXPECT_EQ(cache.Length(1), 7);
  EXPECT_EQ(cache.OldestHeld(0, 1), 3);
  EXPECT_EQ(cache.OldestHeld(1, 1), 0);
  EXPECT_EQ(cache.View(0, 1).stored.begin, 3);
  EXPECT_FALSE(cache.CanTruncateTo(1, 5));  // a query at 5 needs position 2
  EXPECT_TRUE(cache.CanTruncateTo(1, 6));
  cache.Adopt(1, 20, {0, 0});  // older rows than a ring keeps: it keeps its size of them
  EXPECT_EQ(cache.OldestHeld(0, 1), 14);
  EXPECT_THROW(cache.Adopt(1, 33, {0, 0}), Error);   // past the context
  EXPECT_THROW(cache.Adopt(1, 7, {0, 1}), Error);    // a full layer holds everything
  EXPECT_THROW(cache.Adopt(1, 7, {0}), Error);       // one entry per layer
  EXPECT_THROW(cache.Adopt(1, 30, {29, 0}), Error);  // would pass the context
  cache.Adopt(1, 0, {0, 0});
  EXPECT_EQ(cache.View(0, 1).stored.begin, 0);
}

TEST(KvCache, RowsOfDifferentPositionsSequencesAndHeadsDoNotAlias) {
  KvCache cache = MakeCache();
  cache.Append(0, 2);
  cache.Append(1, 2);
  EXPECT_NE(cache.KRow(1, 0, 0, 0), cache.KRow(1, 0, 0, 1));
  EXPECT_NE(cache.KRow(1, 0, 0, 0), cache.KRow(1, 0, 1, 0));
  EXPECT_NE(cache.KRow(1, 0, 0, 0), cache.KRow(1, 1, 0, 0));
  EXPECT_NE(cache.KRow(1, 0, 0, 0), cache.VRow(1, 0, 0, 0));
  EXPECT_EQ(cache.KRow(0, 0, 0, 0), cache.KRow(0, 0, 6, 0));  // ring slot reuse
  float value = 3.5f;
  std::memcpy(cache.KRow(1, 1, 1, 1), &value, sizeof value);
  kernels::KvView view = cache.View(1, 1);
  float read;
  std::memcpy(&read, view.KRow(1, 1), sizeof read);
  EXPECT_EQ(read, 3.5f);
}

TEST(KvCache, CopyPositionMovesEveryLayersRowsAndNothingElse) {
  KvCache cache = MakeCache();
  cache.Append(0, 3);
  cache.Append(0, 3);  // positions 0..5; the sliding ring's 6 slots hold them all
  cache.Append(1, 3);
  auto put = [&](int seq, int32_t pos, float value) {
    for (int l = 0; l < 2; ++l) {
      for (int h = 0; h < cache.layer_spec(l).n_kv_heads; ++h) {
        std::memcpy(cache.KRow(l, seq, pos, h), &value, sizeof value);
        const float v = -value;
        std::memcpy(cache.VRow(l, seq, pos, h), &v, sizeof v);
      }
    }
  };
  auto k_at = [&](int l, int seq, int32_t pos, int h) {
    float read;
    std::memcpy(&read, cache.KRow(l, seq, pos, h), sizeof read);
    return read;
  };
  for (int32_t p = 0; p < 6; ++p) put(0, p, 10.0f + p);
  put(1, 2, 99.0f);
  cache.CopyPosition(0, 5, 3);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < cache.layer_spec(l).n_kv_heads; ++h) {
      EXPECT_EQ(k_at(l, 0, 3, h), 15.0f);
      EXPECT_EQ(k_at(l, 0, 4, h), 14.0f);
      float v;
      std::memcpy(&v, cache.VRow(l, 0, 3, h), sizeof v);
      EXPECT_EQ(v, -15.0f);
    }
  }
  EXPECT_EQ(k_at(1, 1, 2, 0), 99.0f);  // another sequence is untouched
  EXPECT_THROW(cache.CopyPosition(0, 3, 3), Error);
  EXPECT_THROW(cache.CopyPosition(0, 6, 3), Error);  // not committed
  EXPECT_THROW(cache.CopyPosition(0, 5, 1), Error);  // further apart than one forward's rows
}

TEST(KvCache, ErrorsAreClear) {
  KvCache cache = MakeCache();
  EXPECT_THROW(cache.Append(0, 4), Error);  // more than max_batch
  for (int i = 0; i < 10; ++i) cache.Append(0, 3);
  try {
    cache.Append(0, 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("context overflow"), std::string::npos);
  }
  EXPECT_THROW(cache.Truncate(0, 31), Error);
  EXPECT_THROW(KvCache({{1, 32, 0}}, {.type = TensorType::kQ4_K}), Error);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

TEST(KvCache, CanTruncateOnlyWhileTheWindowIsHeld) {
  KvCache cache({{1, 32, 4}}, {.type = TensorType::kF32, .n_ctx = 64, .n_seq = 1, .max_batch = 3});
  for (int i = 0; i < 6; ++i) cache.Append(0, 3);  // length 18; the 6-slot ring holds 12..17
  EXPECT_TRUE(cache.CanTruncateTo(0, 18));
  EXPECT_TRUE(cache.CanTruncateTo(0, 15));   // a query at 15 needs 12..14
  EXPECT_FALSE(cache.CanTruncateTo(0, 14));  // needs 11, overwritten
  EXPECT_FALSE(cache.CanTruncateTo(0, 19));  // beyond the sequence
  EXPECT_TRUE(cache.CanTruncateTo(0, 0));    // nothing needed
}

}  // namespace
}  // namespace tandem
