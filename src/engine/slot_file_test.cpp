// Saved slots: a slot saved after a conversation and restored into a fresh engine continues
// bitwise identically (plain and with MTP), reusing the restored prefix; restores into another
// model or KV type are refused saying why; corrupt or truncated files name the file and the
// offset; a busy slot is refused; erase forgets.
#include "engine/slot_file.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "engine/engine_test_util.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

using testing_engine::Concat;
using testing_engine::Gate;
using testing_engine::Greedy;
using testing_engine::Models;
using testing_engine::Outcome;
using testing_engine::Prompt;
using testing_engine::Recorder;
using testing_engine::RunAlone;
using testing_engine::Sampled;
using testing_engine::WithMtp;

constexpr uint64_t kDigest = 0x5eed;

EngineOptions Options(TensorType type, int n_slots, uint64_t digest = kDigest) {
  EngineOptions options;
  options.n_slots = n_slots;
  // max_batch 8: the sliding layers' rings hold 32 + 8 - 1 = 39 positions, fewer than the
  // conversations here, so a saved slot carries only what the rings still hold.
  options.kv = {.type = type, .n_ctx = 128, .n_seq = 1, .max_batch = 8};
  options.model_digest = digest;
  return options;
}

std::unique_ptr<Engine> NewEngine(ThreadPool& pool, const EngineOptions& options) {
  return std::make_unique<Engine>(
      *Models().target, MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}),
      pool, options);
}

Outcome RunOne(Engine& engine, const std::vector<int32_t>& prompt, const GenerateParams& params) {
  Recorder rec(1);
  engine.Submit({prompt, params, rec.Callback(0)});
  rec.WaitFinals(1);
  return rec.Get(0);
}

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "slot_" + std::to_string(getpid()) + "_" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string RestoreError(Engine& engine, int slot, const std::string& path, ErrorKind kind) {
  try {
    engine.RestoreSlot(slot, path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "restoring " << path << " did not throw";
  return "";
}

TEST(SlotFile, RestoredSlotContinuesBitwiseAsTheOriginal) {
  ThreadPool pool(2);
  const EngineOptions options = Options(TensorType::kQ8_0, 1);
  const std::vector<int32_t> first = Prompt(20, 12);
  const std::string path = TempPath("conversation.bin");

  auto original = NewEngine(pool, options);
  const Outcome turn = RunOne(*original, first, WithMtp(Greedy(60), 3, false));
  ASSERT_EQ(turn.error, "");
  const SlotActionResult saved = original->SaveSlot(0, path);
  EXPECT_FALSE(saved.busy);
  EXPECT_EQ(saved.n_tokens, 20 + 60 - 1);  // everything committed but the last token
  EXPECT_EQ(saved.n_bytes, ReadAll(path).size());

  const std::vector<int32_t> follow = Concat(Concat(first, turn.result.tokens), {3, 4});
  const std::vector<GenerateParams> params = {Greedy(16), WithMtp(Greedy(16), 4, false),
                                              WithMtp(Sampled(16, 5), 3, false)};
  for (const GenerateParams& p : params) {
    SCOPED_TRACE(p.spec.type == SpecType::kNone ? "plain"
                 : p.sampling.greedy()          ? "mtp"
                                                : "sampled");
    const std::vector<int32_t> want = RunAlone(follow, p, options.kv).tokens;
    // A fresh engine with two slots; the file goes into slot 1.
    auto restored = NewEngine(pool, Options(TensorType::kQ8_0, 2));
    const SlotActionResult r = restored->RestoreSlot(1, path);
    EXPECT_FALSE(r.busy);
    EXPECT_EQ(r.n_tokens, saved.n_tokens);
    EXPECT_EQ(r.n_bytes, saved.n_bytes);
    EXPECT_EQ(restored->Slots()[1].n_cached, saved.n_tokens);
    const Outcome next = RunOne(*restored, follow, p);
    EXPECT_EQ(next.error, "");
    EXPECT_EQ(next.result.cached_prompt_tokens, saved.n_tokens);
    EXPECT_EQ(next.result.tokens, want);
    // The original engine's own continuation agrees.
    auto again = NewEngine(pool, options);
    again->RestoreSlot(0, path);
    EXPECT_EQ(RunOne(*again, follow, p).result.tokens, want);
  }
}

TEST(SlotFile, ARestoreIntoAnotherModelOrKvTypeIsRefusedSayingWhy) {
  ThreadPool pool(2);
  const std::string path = TempPath("refused.bin");
  auto engine = NewEngine(pool, Options(TensorType::kF16, 1));
  ASSERT_EQ(RunOne(*engine, Prompt(12, 3), Greedy(4)).error, "");
  engine->SaveSlot(0, path);

  auto other_model = NewEngine(pool, Options(TensorType::kF16, 1, kDigest + 1));
  EXPECT_NE(RestoreError(*other_model, 0, path, ErrorKind::kInvalidArgument).find("another model"),
            std::string::npos);
  auto other_type = NewEngine(pool, Options(TensorType::kQ8_0, 1));
  EXPECT_NE(RestoreError(*other_type, 0, path, ErrorKind::kInvalidArgument).find("f16"),
            std::string::npos);
  EXPECT_NE(
      RestoreError(*engine, 0, TempPath("missing.bin"), ErrorKind::kNotFound).find("missing.bin"),
      std::string::npos);
  EXPECT_THROW(engine->RestoreSlot(1, path), Error);  // no slot 1
}

TEST(SlotFile, CorruptOrTruncatedFilesNameTheFileAndOffset) {
  ThreadPool pool(2);
  const std::string path = TempPath("good.bin"), bad = TempPath("bad.bin");
  auto engine = NewEngine(pool, Options(TensorType::kF16, 1));
  ASSERT_EQ(RunOne(*engine, Prompt(12, 3), Greedy(4)).error, "");
  engine->SaveSlot(0, path);
  const std::string bytes = ReadAll(path);
  ASSERT_GT(bytes.size(), 100u);

  for (size_t cut : {size_t{0}, size_t{5}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    WriteAll(bad, bytes.substr(0, cut));
    const std::string why = RestoreError(*engine, 0, bad, ErrorKind::kCorrupt);
    EXPECT_NE(why.find(bad), std::string::npos) << why;
    EXPECT_NE(why.find("offset"), std::string::npos) << why;
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;  // a KV byte: only the checksum sees it
  WriteAll(bad, flipped);
  EXPECT_NE(RestoreError(*engine, 0, bad, ErrorKind::kCorrupt).find("checksum"), std::string::npos);
  std::string huge = bytes;
  huge[8 + 4 + 8 + 4 + 3] = '\x7f';  // n_layers' high byte
  WriteAll(bad, huge);
  EXPECT_NE(RestoreError(*engine, 0, bad, ErrorKind::kCorrupt).find("n_layers"), std::string::npos);
  // The failed restores left the slot usable.
  EXPECT_EQ(RunOne(*engine, Prompt(12, 3), Greedy(4)).error, "");
}

TEST(SlotFile, BusySlotsAreRefusedAndEraseForgets) {
  ThreadPool pool(2);
  const std::string path = TempPath("busy.bin");
  auto engine = NewEngine(pool, Options(TensorType::kF16, 1));
  Gate started;
  Recorder rec(1);
  // Slow tokens: the request is still running when the slot calls run between its steps.
  const uint64_t id = engine->Submit({Prompt(12, 3), Greedy(100), rec.Callback(0, [&](int, int n) {
                                        if (n == 1) started.Open();
                                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                        return true;
                                      })});
  started.Wait();
  EXPECT_TRUE(engine->SaveSlot(0, path).busy);
  EXPECT_TRUE(engine->EraseSlot(0).busy);
  EXPECT_TRUE(engine->Slots()[0].is_processing);
  engine->Cancel(id);
  rec.WaitFinals(1);
  const int held = engine->Slots()[0].n_cached;
  EXPECT_GT(held, 12);

  const SlotActionResult erased = engine->EraseSlot(0);
  EXPECT_FALSE(erased.busy);
  EXPECT_EQ(erased.n_tokens, held);
  EXPECT_EQ(engine->Slots()[0].n_cached, 0);
  EXPECT_EQ(RunOne(*engine, Prompt(12, 3), Greedy(4)).result.cached_prompt_tokens, 0);
}

}  // namespace
}  // namespace tandem
