// The drafter registry (drafter_registry.h) against what the command line documents (--spec-type's
// help, docs/architecture.md): each drafter's name names it back, auto means chain with an
// assistant and draft with a draft model, ngram, chain and suffix-chain draft by prompt lookup,
// suffix and suffix-chain from earlier requests (sharing one index), each model is warmed up once,
// and MakeDrafters builds a drafter for exactly the entries whose model is loaded.
#include "speculative/drafter_registry.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "speculative/drafter_set.h"
#include "speculative/loaded_drafters.h"
#include "speculative/suffix_drafter.h"

namespace tandem {
namespace {

TEST(DrafterRegistry, EachNameNamesItsTypeBack) {
  std::set<std::string> names;
  for (const SpecType type : DrafterTypes()) {
    EXPECT_EQ(SpecTypeNamed(SpecTypeName(type)), type) << SpecTypeName(type);
    names.insert(SpecTypeName(type));
    EXPECT_NE(DrafterEntryOf(type).make, nullptr) << SpecTypeName(type);
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"mtp", "draft", "ngram", "chain", "suffix", "suffix-chain"}));
  EXPECT_EQ(SpecTypeNamed("none"), SpecType::kNone);
  EXPECT_EQ(SpecTypeNamed("auto"), std::nullopt);
  EXPECT_EQ(SpecTypeNamed("MTP"), std::nullopt);
  EXPECT_STREQ(SpecTypeName(SpecType::kNone), "none");
}

TEST(DrafterRegistry, MessagesNameTheEntriesWhoseFlagIsSet) {
  // Each name once, in the list's order, as the messages and help text print them.
  std::string expected_lookup;
  for (const SpecType type : DrafterTypes()) {
    if (!DrafterEntryOf(type).lookup) continue;
    expected_lookup += expected_lookup.empty() ? "" : "|";
    expected_lookup += SpecTypeName(type);
  }
  EXPECT_EQ(expected_lookup, "ngram|chain|suffix-chain");
  EXPECT_EQ(DrafterNamesWhere(&DrafterEntry::lookup), "ngram, chain or suffix-chain");
  EXPECT_EQ(DrafterNamesWhere(&DrafterEntry::suffix), "suffix or suffix-chain");
  EXPECT_EQ(DrafterNamesWhere(&DrafterEntry::auto_pick), "draft or chain");
}

TEST(DrafterRegistry, AutoAndPromptLookupAreWhatTheFlagsSay) {
  EXPECT_EQ(AutoSpecType(DrafterModel::kAssistant), SpecType::kChain);
  EXPECT_EQ(AutoSpecType(DrafterModel::kSeparate), SpecType::kDraft);
  EXPECT_EQ(AutoSpecType(DrafterModel::kNone), SpecType::kNone);
  EXPECT_EQ(DrafterEntryOf(SpecType::kMtp).model, DrafterModel::kAssistant);
  EXPECT_EQ(DrafterEntryOf(SpecType::kChain).model, DrafterModel::kAssistant);
  EXPECT_EQ(DrafterEntryOf(SpecType::kDraft).model, DrafterModel::kSeparate);
  EXPECT_EQ(DrafterEntryOf(SpecType::kNgram).model, DrafterModel::kNone);
  EXPECT_FALSE(UsesNgram(SpecType::kNone));
  for (const SpecType type : DrafterTypes()) {
    EXPECT_EQ(UsesNgram(type), type == SpecType::kNgram || type == SpecType::kChain ||
                                   type == SpecType::kSuffixChain)
        << SpecTypeName(type);
    EXPECT_EQ(UsesSuffix(type), type == SpecType::kSuffix || type == SpecType::kSuffixChain)
        << SpecTypeName(type);
  }
  EXPECT_FALSE(UsesSuffix(SpecType::kNone));
  // A request turning suffix drafting off gets what the type is without it; turning lookup off
  // on suffix-chain keeps the type (its planner skips lookup: SpecOptions::ngram).
  EXPECT_EQ(WithoutSuffix(SpecType::kSuffixChain), SpecType::kChain);
  EXPECT_EQ(WithoutSuffix(SpecType::kSuffix), SpecType::kNone);
  EXPECT_EQ(WithoutSuffix(SpecType::kChain), SpecType::kChain);
  EXPECT_EQ(WithoutSuffix(SpecType::kNone), SpecType::kNone);
  EXPECT_EQ(WithoutLookup(SpecType::kSuffixChain), SpecType::kSuffixChain);
  EXPECT_EQ(WithoutLookup(SpecType::kSuffix), SpecType::kSuffix);
  EXPECT_EQ(DrafterEntryOf(SpecType::kSuffix).model, DrafterModel::kNone);
  EXPECT_EQ(DrafterEntryOf(SpecType::kSuffixChain).model, DrafterModel::kAssistant);
  // A request turning prompt lookup off keeps chain's assistant, and ngram decodes plainly.
  EXPECT_EQ(WithoutLookup(SpecType::kChain), SpecType::kMtp);
  EXPECT_EQ(WithoutLookup(SpecType::kNgram), SpecType::kNone);
  EXPECT_EQ(WithoutLookup(SpecType::kMtp), SpecType::kMtp);
  EXPECT_EQ(WithoutLookup(SpecType::kDraft), SpecType::kDraft);
  EXPECT_EQ(WithoutLookup(SpecType::kNone), SpecType::kNone);
}

TEST(DrafterRegistry, EachModelIsWarmedUpOnce) {
  for (const SpecType type : DrafterTypes()) {
    const DrafterEntry& entry = DrafterEntryOf(type);
    SCOPED_TRACE(entry.name);
    // A drafter with a model warms it up; prompt lookup has nothing to warm.
    EXPECT_EQ(entry.warm_up, entry.model != DrafterModel::kNone);
    if (entry.warmed_by != SpecType::kNone) {
      const DrafterEntry& by = DrafterEntryOf(entry.warmed_by);
      EXPECT_TRUE(by.warm_up);
      EXPECT_EQ(by.model, entry.model);
      EXPECT_EQ(by.warmed_by, SpecType::kNone);
    }
  }
}

TEST(DrafterRegistry, ThereIsNoEntryForPlainDecoding) {
  EXPECT_THROW(DrafterEntryOf(SpecType::kNone), Error);
}

// A drafter that drafts nothing, of a given step cost.
class StubDrafter : public Drafter {
 public:
  explicit StubDrafter(double bytes) : bytes_(bytes) {}
  void Draft(const DraftRequest&, const KvCache&, DraftResult& result) override { result.Clear(); }
  double BytesPerStep() const override { return bytes_; }

 private:
  double bytes_;
};

TEST(DrafterSet, ServesEachTypeItsDrafterInTheRegistrysOrder) {
  DrafterSet set;
  EXPECT_TRUE(set.All().empty());
  auto* chain = new StubDrafter(4);
  auto* mtp = new StubDrafter(1);
  set.Set(SpecType::kChain, std::unique_ptr<Drafter>(chain));
  set.Set(SpecType::kMtp, std::unique_ptr<Drafter>(mtp));
  EXPECT_EQ(set.For(SpecType::kMtp), mtp);
  EXPECT_EQ(set.For(SpecType::kChain), chain);
  EXPECT_EQ(set.For(SpecType::kDraft), nullptr);
  EXPECT_EQ(set.For(SpecType::kNone), nullptr);
  EXPECT_EQ(set.All(), (std::vector<Drafter*>{mtp, chain}));
  std::unique_ptr<Drafter> taken = set.Take(SpecType::kMtp);
  EXPECT_EQ(taken.get(), mtp);
  EXPECT_EQ(set.For(SpecType::kMtp), nullptr);
  EXPECT_EQ(set.All(), (std::vector<Drafter*>{chain}));
  EXPECT_THROW(set.Set(SpecType::kNone, nullptr), Error);
}

struct TinyModels {
  std::unique_ptr<Gemma4Model> target, draft;
  std::unique_ptr<Gemma4Assistant> assistant;
};

const TinyModels& Models() {
  static const TinyModels* models = [] {
    const std::string dir = testing::TempDir() + "registry_" + std::to_string(getpid()) + "_";
    RandomModelOptions options;
    options.weight_type = TensorType::kQ8_0;
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "target.gguf");
    WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), options,
                               dir + "assistant.gguf");
    options.seed = 7;
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "draft.gguf");
    auto* m = new TinyModels;
    m->target = Gemma4Model::Load(dir + "target.gguf");
    m->assistant = Gemma4Assistant::Load(dir + "assistant.gguf", *m->target);
    m->draft = Gemma4Model::Load(dir + "draft.gguf");
    return m;
  }();
  return *models;
}

// The types MakeDrafters gave a drafter, in the registry's order.
std::vector<SpecType> Loaded(const DrafterSet& set) {
  std::vector<SpecType> types;
  for (const SpecType type : DrafterTypes()) {
    if (set.For(type) != nullptr) types.push_back(type);
  }
  return types;
}

TEST(MakeDrafters, BuildsOneDrafterPerEntryWhoseModelIsLoaded) {
  ThreadPool pool(1);
  const TinyModels& m = Models();
  using T = SpecType;
  EXPECT_EQ(Loaded(MakeDrafters({*m.target, nullptr, nullptr, pool})),
            (std::vector{T::kNgram, T::kSuffix}));
  EXPECT_EQ(Loaded(MakeDrafters({*m.target, nullptr, m.draft.get(), pool})),
            (std::vector{T::kDraft, T::kNgram, T::kSuffix}));
  const DrafterSet set = MakeDrafters({*m.target, m.assistant.get(), m.draft.get(), pool});
  EXPECT_EQ(Loaded(set),
            (std::vector{T::kMtp, T::kDraft, T::kNgram, T::kChain, T::kSuffix, T::kSuffixChain}));
  EXPECT_EQ(set.All(), (std::vector<Drafter*>{set.For(T::kMtp), set.For(T::kDraft),
                                              set.For(T::kNgram), set.For(T::kChain),
                                              set.For(T::kSuffix), set.For(T::kSuffixChain)}));
  // suffix and suffix-chain draft from one index (a request of either sees the other's text),
  // sized by DrafterSources::suffix_index_bytes.
  auto* suffix = dynamic_cast<SuffixDrafter*>(set.For(T::kSuffix));
  auto* suffix_chain = dynamic_cast<SuffixDrafter*>(set.For(T::kSuffixChain));
  ASSERT_NE(suffix, nullptr);
  ASSERT_NE(suffix_chain, nullptr);
  EXPECT_EQ(suffix->index(), suffix_chain->index());
  EXPECT_EQ(suffix->index()->max_bytes(), kDefaultSuffixIndexBytes);
  EXPECT_EQ(set.For(T::kSuffix)->BytesPerStep(), 0);
  EXPECT_EQ(set.For(T::kSuffixChain)->BytesPerStep(), set.For(T::kMtp)->BytesPerStep());
  const DrafterSet small = MakeDrafters({*m.target, nullptr, nullptr, pool, 12345});
  EXPECT_EQ(dynamic_cast<SuffixDrafter*>(small.For(T::kSuffix))->index()->max_bytes(), 12345u);
  // Chain extends the MTP drafter (its steps are the assistant's); lookup alone runs no model.
  EXPECT_GT(set.For(T::kMtp)->BytesPerStep(), 0);
  EXPECT_EQ(set.For(T::kChain)->BytesPerStep(), set.For(T::kMtp)->BytesPerStep());
  EXPECT_EQ(set.For(T::kNgram)->BytesPerStep(), 0);
  EXPECT_EQ(set.For(T::kDraft)->BytesPerStep(), m.draft->BytesPerToken());
}

}  // namespace
}  // namespace tandem
