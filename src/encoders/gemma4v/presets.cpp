#include "encoders/gemma4v/presets.h"

#include "base/error.h"

namespace tandem {
namespace {

struct VisionPresetSpec {
  const char* name;
  int n_embd, n_layer, n_head, n_ff, n_embd_text, n_pos;
  bool clipped_linears, standardize;
};

// The tiny tower's Dt is the width of the tiny-* text presets (model/gemma4/presets.cpp).
constexpr int kTinyTextWidth = 128;

constexpr VisionPresetSpec kPresets[] = {
    {"e2b", 768, 16, 12, 3072, 1536, 10240, true, false},
    {"e4b", 768, 16, 12, 3072, 2560, 10240, true, false},
    {"26b-a4b", 1152, 27, 16, 4304, 2816, 10240, false, true},
    {"31b", 1152, 27, 16, 4304, 5376, 10240, false, true},
    {"tiny", 32, 2, 2, 64, kTinyTextWidth, 64, true, true},
};

// Text presets the tiny tower goes with (same tower, named after the text model).
constexpr const char* kTinyAliases[] = {"tiny-e2b", "tiny-e4b", "tiny-26b-a4b", "tiny-31b"};

}  // namespace

std::vector<std::string> Gemma4VisionPresetNames() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  for (const char* alias : kTinyAliases) names.emplace_back(alias);
  return names;
}

Gemma4VisionConfig Gemma4VisionPreset(std::string_view name) {
  std::string_view base = name;
  for (const char* alias : kTinyAliases) {
    if (name == alias) base = "tiny";
  }
  for (const auto& p : kPresets) {
    if (base != p.name) continue;
    Gemma4VisionConfig c;
    c.n_embd = p.n_embd;
    c.n_layer = p.n_layer;
    c.n_head = p.n_head;
    c.n_head_kv = p.n_head;
    c.head_dim = p.n_embd / p.n_head;
    c.n_ff = p.n_ff;
    c.n_embd_text = p.n_embd_text;
    c.n_pos = p.n_pos;
    c.clipped_linears = p.clipped_linears;
    c.standardize = p.standardize;
    c.Validate("vision preset " + std::string(name));
    return c;
  }
  std::string valid;
  for (const auto& n : Gemma4VisionPresetNames()) valid += (valid.empty() ? "" : ", ") + n;
  Fail(ErrorKind::kInvalidArgument,
       "unknown vision config '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace tandem
