#include "speculative/drafter_registry.h"

#include <array>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

constexpr std::array kTypes = {
#define TANDEM_DRAFTER_TYPE(type, entry) SpecType::type,
    TANDEM_DRAFTERS(TANDEM_DRAFTER_TYPE)
#undef TANDEM_DRAFTER_TYPE
};

// [i]: the entry of kTypes[i] (SpecType value i + 1: kNone is 0, the list follows).
constexpr std::array kEntries = {
#define TANDEM_DRAFTER_ENTRY(type, entry) &entry,
    TANDEM_DRAFTERS(TANDEM_DRAFTER_ENTRY)
#undef TANDEM_DRAFTER_ENTRY
};

}  // namespace

bool DrafterSources::Has(DrafterModel model) const {
  switch (model) {
    case DrafterModel::kNone:
      return true;
    case DrafterModel::kAssistant:
      return assistant != nullptr;
    case DrafterModel::kSeparate:
      return draft_model != nullptr;
  }
  return false;
}

std::span<const SpecType> DrafterTypes() {
  return kTypes;
}

const DrafterEntry& DrafterEntryOf(SpecType type) {
  const size_t i = static_cast<size_t>(type) - 1;
  if (type == SpecType::kNone || i >= kEntries.size()) {
    Fail(ErrorKind::kInternal,
         "no drafter entry for speculation type " + std::to_string(static_cast<int>(type)));
  }
  return *kEntries[i];
}

std::optional<SpecType> SpecTypeNamed(std::string_view name) {
  if (name == SpecTypeName(SpecType::kNone)) return SpecType::kNone;
  for (const SpecType type : kTypes) {
    if (name == DrafterEntryOf(type).name) return type;
  }
  return std::nullopt;
}

std::string DrafterNamesWhere(bool DrafterEntry::*flag) {
  std::vector<const char*> names;
  for (const DrafterEntry* entry : kEntries) {
    if (entry->*flag) names.push_back(entry->name);
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

SpecType AutoSpecType(DrafterModel loaded) {
  for (const SpecType type : kTypes) {
    const DrafterEntry& entry = DrafterEntryOf(type);
    if (entry.auto_pick && entry.model == loaded) return type;
  }
  return SpecType::kNone;
}

const char* SpecTypeName(SpecType type) {
  return type == SpecType::kNone ? "none" : DrafterEntryOf(type).name;
}

bool UsesNgram(SpecType type) {
  return type != SpecType::kNone && DrafterEntryOf(type).lookup;
}

SpecType WithoutLookup(SpecType type) {
  return UsesNgram(type) ? DrafterEntryOf(type).without_lookup : type;
}

bool UsesSuffix(SpecType type) {
  return type != SpecType::kNone && DrafterEntryOf(type).suffix;
}

SpecType WithoutSuffix(SpecType type) {
  return UsesSuffix(type) ? DrafterEntryOf(type).without_suffix : type;
}

}  // namespace tandem
