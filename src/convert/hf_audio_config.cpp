#include "convert/hf_audio_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "convert/hf_json_fields.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

constexpr int kDefaultMelBins =
    128;  // llama.cpp's converter default when input_feat_size is absent
// transformers clamps to ±gradient_clipping before several norms; llama.cpp and tandem do not,
// which changes nothing at this value (only infinities).
constexpr double kGradientClipping = 1e10;

// Refuses `key` when present with a value other than `fixed`, the one llama.cpp runs for Gemma 4.
void RequireFixed(const HfJsonFields& f, const char* key, double fixed, const std::string& source) {
  if (const std::optional<double> v = f.OptNumber(key); v && *v != fixed) {
    Fail(ErrorKind::kUnsupported, source + ": " + f.Name(key) + " is " + f.Find(key)->dump() +
                                      "; the mmproj file cannot carry it (llama.cpp runs " +
                                      Json(fixed).dump() + ")");
  }
}

}  // namespace

std::optional<Gemma4AudioConfig> ParseHfAudioConfig(std::string_view json_text,
                                                    const std::string& source) {
  const Json root = ParseHfJsonObject(json_text, source);
  const HfJsonFields top(root, "", source);
  const std::optional<HfJsonFields> ac = top.Object("audio_config");
  if (!ac) return std::nullopt;
  const std::optional<HfJsonFields> tc = top.Object("text_config");
  if (!tc) Fail(ErrorKind::kCorrupt, source + ": an audio_config needs a text_config");

  const std::string act = ac->OptString("hidden_act").value_or("silu");
  if (act != "silu") {
    Fail(ErrorKind::kUnsupported,
         source + ": " + ac->Name("hidden_act") + " '" + act + "' is not supported (silu only)");
  }
  RequireFixed(*ac, "conv_kernel_size", Gemma4AudioConfig::kConvKernel, source);
  RequireFixed(*ac, "attention_chunk_size", Gemma4AudioConfig::kChunk, source);
  RequireFixed(*ac, "attention_context_left", Gemma4AudioConfig::kContextLeft, source);
  RequireFixed(*ac, "attention_context_right", Gemma4AudioConfig::kContextRight, source);
  RequireFixed(*ac, "residual_weight", Gemma4AudioConfig::kFfnResidual, source);
  RequireFixed(*ac, "attention_logit_cap", Gemma4AudioConfig::kSoftcap, source);
  RequireFixed(*ac, "gradient_clipping", kGradientClipping, source);

  Gemma4AudioConfig c;
  c.n_embd = ac->Int("hidden_size", 1024);
  if (c.n_embd > (1 << 24)) ac->Bad("hidden_size", "is too large");
  c.n_ff = 4 * c.n_embd;
  c.n_layer = ac->Int("num_hidden_layers", 12);
  c.n_head = ac->Int("num_attention_heads", 8);
  c.n_mel = ac->Int("input_feat_size", kDefaultMelBins);
  c.eps = static_cast<float>(ac->Number("rms_norm_eps", 1e-6));
  c.clipped_linears = ac->Bool("use_clipped_linears", true);
  c.n_out = ac->Int("output_proj_dims", 1536);
  if (c.n_out <= 0) ac->Bad("output_proj_dims", "must be positive");
  c.sub_channels0 = 128;
  c.sub_channels1 = 32;
  if (const Json* ch = ac->Find("subsampling_conv_channels")) {
    if (!ch->is_array() || ch->size() != 2 || !(*ch)[0].is_number_integer() ||
        !(*ch)[1].is_number_integer() || (*ch)[0].get<int64_t>() <= 0 ||
        (*ch)[1].get<int64_t>() <= 0 || (*ch)[0].get<int64_t>() > (1 << 20) ||
        (*ch)[1].get<int64_t>() > (1 << 20)) {
      ac->Bad("subsampling_conv_channels", "must be a list of 2 positive integers");
    }
    c.sub_channels0 = (*ch)[0].get<int>();
    c.sub_channels1 = (*ch)[1].get<int>();
  }
  c.n_embd_text = tc->RequiredInt("hidden_size");
  c.Validate(source + " (audio_config)");
  return c;
}

std::optional<Gemma4AudioConfig> LoadHfAudioConfig(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  return ParseHfAudioConfig(ReadHfTextFile(path), path);
}

}  // namespace tandem
