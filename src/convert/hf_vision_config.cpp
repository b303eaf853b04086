#include "convert/hf_vision_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "convert/hf_json_fields.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

constexpr char kVisionArchitecture[] = "Gemma4ForConditionalGeneration";
constexpr double kRopeTheta = 100.0;  // fixed by llama.cpp and tandem's encoder (not in the file)

// image_mean / image_std: three numbers, or absent.
void ReadTriple(const HfJsonFields& f, const char* key, std::array<float, 3>& out) {
  const Json* v = f.Find(key);
  if (v == nullptr) return;
  if (!v->is_array() || v->size() != 3) f.Bad(key, "must be a list of 3 numbers");
  for (size_t i = 0; i < 3; ++i) {
    if (!(*v)[i].is_number()) f.Bad(key, "must be a list of 3 numbers");
    out[i] = (*v)[i].get<float>();
  }
}

}  // namespace

HfVisionConfig ParseHfVisionConfig(std::string_view json_text, const std::string& source) {
  const Json root = ParseHfJsonObject(json_text, source);
  const HfJsonFields top(root, "", source);
  bool known = false;
  if (const Json* archs = top.Find("architectures"); archs != nullptr && archs->is_array()) {
    for (const Json& a : *archs) known |= a == kVisionArchitecture;
  }
  if (!known) {
    const Json* archs = top.Find("architectures");
    Fail(ErrorKind::kUnsupported, source + ": architectures " +
                                      (archs ? archs->dump() : std::string("(missing)")) +
                                      " has no gemma4v vision tower; only " + kVisionArchitecture +
                                      " checkpoints convert to an mmproj file");
  }
  const std::optional<HfJsonFields> vc = top.Object("vision_config");
  if (!vc) {
    Fail(ErrorKind::kNotFound, source +
                                   ": no vision_config (a text-only checkpoint); there is no "
                                   "vision tower to write an mmproj file from");
  }
  const std::optional<HfJsonFields> tc = top.Object("text_config");
  if (!tc) Fail(ErrorKind::kCorrupt, source + ": " + kVisionArchitecture + " needs a text_config");

  const std::string activation = vc->OptString("hidden_activation").value_or("gelu_pytorch_tanh");
  if (activation != "gelu_pytorch_tanh") {
    Fail(ErrorKind::kUnsupported, source + ": " + vc->Name("hidden_activation") + " '" +
                                      activation + "' is not supported (gelu_pytorch_tanh only)");
  }
  if (vc->Bool("attention_bias", false)) {
    Fail(ErrorKind::kUnsupported,
         source + ": " + vc->Name("attention_bias") + " is true; the gemma4v tower has no biases");
  }
  if (auto rope = vc->Object("rope_parameters")) {
    const std::string type = rope->OptString("rope_type").value_or("default");
    const double theta = rope->Number("rope_theta", kRopeTheta);
    if (type != "default" || theta != kRopeTheta) {
      Fail(ErrorKind::kUnsupported, source + ": " + vc->Name("rope_parameters") +
                                        " must be the default RoPE with rope_theta 100 (the "
                                        "mmproj file cannot carry another)");
    }
  }

  HfVisionConfig out;
  Gemma4VisionConfig& c = out.config;
  c.n_embd = vc->Int("hidden_size", 768);
  c.n_ff = vc->Int("intermediate_size", 3072);
  c.n_layer = vc->Int("num_hidden_layers", 16);
  c.n_head = vc->Int("num_attention_heads", 12);
  c.n_head_kv = vc->Int("num_key_value_heads", 12);
  c.head_dim = vc->Int("head_dim", 64);
  c.eps = static_cast<float>(vc->Number("rms_norm_eps", 1e-6));
  c.patch_size = vc->Int("patch_size", 16);
  c.pooling = vc->Int("pooling_kernel_size", 3);
  c.n_pos = vc->Int("position_embedding_size", 10240);
  c.clipped_linears = vc->Bool("use_clipped_linears", false);
  c.standardize = vc->Bool("standardize", false);
  c.n_embd_text = tc->RequiredInt("hidden_size");
  c.Validate(source);
  return out;
}

HfVisionConfig LoadHfVisionConfig(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string config_path = (fs::path(dir) / "config.json").string();
  HfVisionConfig hf = ParseHfVisionConfig(ReadHfTextFile(config_path), config_path);
  std::error_code ec;
  for (const char* file : {"preprocessor_config.json", "processor_config.json"}) {
    const std::string path = (fs::path(dir) / file).string();
    if (!fs::exists(path, ec)) continue;
    const Json root = ParseHfJsonObject(ReadHfTextFile(path), path);
    const HfJsonFields top(root, "", path);
    const std::optional<HfJsonFields> nested = top.Object("image_processor");
    const HfJsonFields& f = nested ? *nested : top;
    ReadTriple(f, "image_mean", hf.config.image_mean);
    ReadTriple(f, "image_std", hf.config.image_std);
    break;
  }
  return hf;
}

}  // namespace tandem
