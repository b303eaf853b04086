#include "encoders/gemma4a/presets.h"

#include "base/error.h"

namespace tandem {
namespace {

struct AudioPresetSpec {
  const char* name;
  int n_embd, n_layer, n_head, n_mel, sub_channels0, sub_channels1, n_out, n_embd_text;
};

// The tiny tower's Dt is the width of the tiny-* text presets (model/gemma4/presets.cpp). Its
// first subsampling width stays 128: transformers sizes the input projection from it.
constexpr int kTinyTextWidth = 128;

constexpr AudioPresetSpec kPresets[] = {
    {"e2b", 1024, 12, 8, 128, 128, 32, 1536, 1536},
    {"e4b", 1024, 12, 8, 128, 128, 32, 1536, 2560},
    {"tiny", 32, 2, 2, 128, 128, 4, 48, kTinyTextWidth},
};

constexpr const char* kTinyAliases[] = {"tiny-e2b", "tiny-e4b"};
constexpr const char* kNoAudio[] = {"26b-a4b", "31b", "tiny-26b-a4b", "tiny-31b"};

}  // namespace

std::vector<std::string> Gemma4AudioPresetNames() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  for (const char* alias : kTinyAliases) names.emplace_back(alias);
  return names;
}

bool HasGemma4AudioPreset(std::string_view name) {
  for (const std::string& n : Gemma4AudioPresetNames()) {
    if (n == name) return true;
  }
  return false;
}

Gemma4AudioConfig Gemma4AudioPreset(std::string_view name) {
  std::string_view base = name;
  for (const char* alias : kTinyAliases) {
    if (name == alias) base = "tiny";
  }
  for (const auto& p : kPresets) {
    if (base != p.name) continue;
    Gemma4AudioConfig c;
    c.n_embd = p.n_embd;
    c.n_ff = 4 * p.n_embd;
    c.n_layer = p.n_layer;
    c.n_head = p.n_head;
    c.n_mel = p.n_mel;
    c.sub_channels0 = p.sub_channels0;
    c.sub_channels1 = p.sub_channels1;
    c.n_out = p.n_out;
    c.n_embd_text = p.n_embd_text;
    c.clipped_linears = true;
    c.Validate("audio preset " + std::string(name));
    return c;
  }
  for (const char* n : kNoAudio) {
    if (name == n) {
      Fail(ErrorKind::kInvalidArgument,
           "config '" + std::string(name) + "' has no audio tower (only e2b and e4b have one)");
    }
  }
  std::string valid;
  for (const auto& n : Gemma4AudioPresetNames()) valid += (valid.empty() ? "" : ", ") + n;
  Fail(ErrorKind::kInvalidArgument,
       "unknown audio config '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace tandem
