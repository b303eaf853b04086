#include "convert/converter.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "convert/conversion_plan.h"
#include "convert/hf_audio_config.h"
#include "convert/hf_config.h"
#include "convert/hf_tokenizer.h"
#include "convert/hf_vision_config.h"
#include "convert/mmproj_plan.h"
#include "convert/progress_bar.h"
#include "convert/row_encoder.h"
#include "convert/safetensors_reader.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "gguf/gguf_writer.h"
#include "model/gemma4/tensors.h"
#include "tensor/float16.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

namespace fs = std::filesystem;

// Elements [first, first + n) of a float tensor as f32 into out[n]; false if one is NaN, or
// infinite unless `allow_infinity`.
bool ReadElements(const SafetensorsTensor& t, uint64_t first, uint64_t n, float* out,
                  bool allow_infinity = false) {
  const uint8_t* p = t.bytes.data() + first * SafetensorsDtypeBytes(t.dtype);
  if (t.dtype == SafetensorsDtype::kF32) {
    std::memcpy(out, p, n * sizeof(float));
  } else {
    const bool bf16 = t.dtype == SafetensorsDtype::kBF16;
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = bf16 ? Bf16ToFp32(h) : Fp16ToFp32(h);
    }
  }
  bool ok = true;
  for (uint64_t i = 0; i < n; ++i)
    ok &= allow_infinity ? !std::isnan(out[i]) : std::isfinite(out[i]);
  return ok;
}

// ln(1 + e^x) in double precision, rounded once to float; written as x + ln(1 + e^-x) for
// positive x so that large values do not overflow.
float Softplus(float x) {
  const double v = x;
  return static_cast<float>(v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)));
}

// Row r of the GGUF tensor, read from its checkpoint source(s).
RowReader MakeRowReader(const PlannedTensor& p) {
  const uint64_t n = p.ne[0];
  if (p.source == PlannedTensor::Source::kExpertHalves) {
    // {D, 2F, E}: rows [e * 2F, e * 2F + F) are expert e's gate rows, the next F its up rows.
    const uint64_t f = p.ne[1] / 2;
    const SafetensorsTensor* gate = p.inputs[0];
    const SafetensorsTensor* up = p.inputs[1];
    return [gate, up, n, f](uint64_t row, float* out) {
      const uint64_t e = row / (2 * f), j = row % (2 * f);
      const SafetensorsTensor& src = j < f ? *gate : *up;
      return ReadElements(src, (e * f + j % f) * n, n, out);
    };
  }
  const SafetensorsTensor* t = p.inputs[0];
  if (p.source == PlannedTensor::Source::kPatchKernel) {
    // {p, p, 3, D}: row (o·3 + c)·p + i holds kernel[o][c][i][0..p), which is column
    // (i·p + j)·3 + c of the linear's row o (patches flattened row, column, channel).
    return [t, n](uint64_t row, float* out) {
      const uint64_t i = row % n, c = (row / n) % 3, o = row / (3 * n);
      bool ok = true;
      for (uint64_t j = 0; j < n; ++j)
        ok &= ReadElements(*t, o * 3 * n * n + (i * n + j) * 3 + c, 1, out + j);
      return ok;
    };
  }
  if (p.source == PlannedTensor::Source::kSoftplus) {
    return [t, n](uint64_t row, float* out) {
      const bool ok = ReadElements(*t, row * n, n, out);
      for (uint64_t i = 0; i < n; ++i) out[i] = Softplus(out[i]);
      return ok;
    };
  }
  const bool inf = p.allow_infinity;
  return [t, n, inf](uint64_t row, float* out) { return ReadElements(*t, row * n, n, out, inf); };
}

// masked_embedding.token_ordering (I64 or I32) as I32 token ids, each checked against the vocab.
std::vector<uint8_t> OrderingBytes(const SafetensorsTensor& t, int n_vocab) {
  const uint64_t n = t.n_elements();
  std::vector<uint8_t> out(n * sizeof(int32_t));
  for (uint64_t i = 0; i < n; ++i) {
    int64_t id = 0;
    if (t.dtype == SafetensorsDtype::kI64) {
      std::memcpy(&id, t.bytes.data() + 8 * i, 8);
    } else {
      int32_t v;
      std::memcpy(&v, t.bytes.data() + 4 * i, 4);
      id = v;
    }
    if (id < 0 || id >= n_vocab) {
      Fail(ErrorKind::kCorrupt, t.file + ": tensor '" + t.name + "' entry " + std::to_string(i) +
                                    " = " + std::to_string(id) + " is not a token id in [0, " +
                                    std::to_string(n_vocab) + ")");
    }
    const auto v = static_cast<int32_t>(id);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

uint64_t RowCount(const std::vector<uint64_t>& ne) {
  uint64_t rows = 1;
  for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
  return rows;
}

uint64_t PlannedBytes(const PlannedTensor& p) {
  if (p.source == PlannedTensor::Source::kTokenOrdering) return p.ne[0] * sizeof(int32_t);
  return RowBytes(GetTensorTypeTraits(p.type), p.ne[0]) * RowCount(p.ne);
}

// generation_config.json `suppress_tokens` (ids never to be sampled), if the checkpoint has the
// file and the field; empty otherwise. Throws Error(kCorrupt) for a malformed file or list.
std::vector<int32_t> LoadSuppressTokens(const std::string& dir, int n_vocab) {
  const fs::path path = fs::path(dir) / "generation_config.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    Fail(ErrorKind::kCorrupt, path.string() + ": not a JSON object");
  }
  const auto it = j.find("suppress_tokens");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_array()) Fail(ErrorKind::kCorrupt, path.string() + ": suppress_tokens is not a list");
  std::vector<int32_t> ids;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= n_vocab) {
      Fail(ErrorKind::kCorrupt, path.string() + ": suppress_tokens entry " + v.dump() +
                                    " is not a token id in [0, " + std::to_string(n_vocab) + ")");
    }
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return ids;
}

void WriteMetadata(const ConversionPlan& plan, const HfTokenizer& tokenizer,
                   const ConvertOptions& options, const std::string& name, GgufWriter& w) {
  const HfModelConfig& hf = plan.hf;
  const Gemma4Config& c = hf.config;
  const std::string& arch = hf.gguf_arch;
  w.SetString("general.architecture", arch);
  w.SetString("general.type", "model");
  w.SetString("general.name", name);
  w.SetU32("general.file_type", ConvertFileType(options.out_type));
  w.SetU32("general.quantization_version", 2);
  c.WriteToGguf(w, arch);
  auto per_layer = [&](const std::string& key, int Gemma4LayerConfig::*field) {
    std::vector<int32_t> v;
    for (const Gemma4LayerConfig& l : c.layers) v.push_back(l.*field);
    w.Set(arch + "." + key, GgufValue::Array(std::span<const int32_t>(v)));
  };
  if (hf.head_count_kv_as_array)
    per_layer("attention.head_count_kv", &Gemma4LayerConfig::n_head_kv);
  if (hf.feed_forward_length_as_array) per_layer("feed_forward_length", &Gemma4LayerConfig::n_ff);
  if (hf.kind == HfModelKind::kAssistant) {
    w.SetU32(arch + ".embedding_length_out", hf.backbone_hidden_size);
    w.SetU32(arch + ".nextn_predict_layers", c.n_layer);
    if (hf.use_ordered_embeddings) {
      w.SetU32(arch + ".num_centroids", hf.num_centroids);
      w.SetU32(arch + ".centroid_intermediate_top_k", hf.centroid_top_k);
    }
  }
  AddHfTokenizerToGguf(tokenizer, w);
}

// Adds `tensors` to `w`, streamed from the checkpoint when the file is written. `hf` gives the
// generated tensors (rope_freqs) their values.
void AddTensors(const std::vector<PlannedTensor>& tensors, const HfModelConfig& hf, GgufWriter& w,
                ProgressBar& bar, ThreadPool& pool) {
  const Gemma4Config& c = hf.config;
  for (const PlannedTensor& p : tensors) {
    switch (p.source) {
      case PlannedTensor::Source::kRopeFreqs: {
        const std::vector<float> f = Gemma4RopeFreqs(c, hf.rope_partial_factor_full);
        std::vector<uint8_t> bytes(f.size() * sizeof(float));
        std::memcpy(bytes.data(), f.data(), bytes.size());
        w.AddTensor(p.name, TensorType::kF32, p.ne, std::move(bytes));
        break;
      }
      case PlannedTensor::Source::kTokenOrdering: {
        const SafetensorsTensor* t = p.inputs[0];
        const int n_vocab = c.n_vocab;
        w.AddTensor(p.name, TensorType::kI32, p.ne,
                    [t, n_vocab, &bar, name = p.name](const GgufByteSink& sink) {
                      const std::vector<uint8_t> bytes = OrderingBytes(*t, n_vocab);
                      sink(bytes);
                      bar.Advance(bytes.size(), name);
                    });
        break;
      }
      case PlannedTensor::Source::kRows:
      case PlannedTensor::Source::kExpertHalves:
      case PlannedTensor::Source::kPatchKernel:
      case PlannedTensor::Source::kSoftplus: {
        const RowEncodeJob job{p.name, p.type, p.ne[0], RowCount(p.ne)};
        RowReader reader = MakeRowReader(p);
        std::vector<const SafetensorsTensor*> inputs = p.inputs;
        w.AddTensor(p.name, p.type, p.ne,
                    [job, reader, inputs, &bar, &pool](const GgufByteSink& sink) {
                      EncodeRows(job, reader, sink, pool,
                                 [&bar, &job](uint64_t bytes) { bar.Advance(bytes, job.name); });
                      for (const SafetensorsTensor* t : inputs) ReleaseMappedPages(t->bytes);
                    });
        break;
      }
    }
  }
}

}  // namespace

uint32_t ConvertFileType(TensorType out_type) {
  switch (out_type) {
    case TensorType::kF32:
      return 0;
    case TensorType::kF16:
      return 1;
    case TensorType::kQ8_0:
      return 7;
    case TensorType::kBF16:
      return 32;
    default:
      Fail(ErrorKind::kInvalidArgument, "convert writes f32, f16, bf16 or q8_0 weights, not " +
                                            std::string(TensorTypeName(out_type)));
  }
}

ConvertSummary ConvertHfToGguf(const ConvertOptions& options) {
  const std::string& dir = options.input_dir;
  ConvertFileType(options.out_type);  // validates the type before any work
  if (options.output_path.empty()) Fail(ErrorKind::kInvalidArgument, "convert: no output path");
  const bool mmproj = !options.mmproj_path.empty();
  if (mmproj && fs::path(options.mmproj_path).lexically_normal() ==
                    fs::path(options.output_path).lexically_normal()) {
    Fail(ErrorKind::kInvalidArgument,
         "convert: --mmproj " + options.mmproj_path + " is the text model's output path too");
  }
  if (options.clip_use_gelu && !mmproj) {
    Fail(ErrorKind::kInvalidArgument, "convert: --clip-use-gelu needs --mmproj");
  }
  const fs::path config_path = fs::path(dir) / "config.json";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    Fail(ErrorKind::kNotFound, dir + ": not a directory (expected a Hugging Face checkpoint)");
  }
  if (!fs::exists(config_path, ec)) Fail(ErrorKind::kNotFound, dir + ": no config.json");
  const HfModelConfig hf = LoadHfConfig(config_path.string());
  const auto checkpoint = SafetensorsCheckpoint::Open(dir);
  const HfTokenizer tokenizer =
      LoadHfTokenizer(dir, hf.bos_token_id, hf.eos_token_id, hf.pad_token_id);
  const ConversionPlan plan = PlanConversion(hf, static_cast<int>(tokenizer.vocab.size()),
                                             *checkpoint, options.out_type, dir);
  // The projector is planned before anything is written, so a bad tower leaves no file.
  std::optional<MmprojPlan> mm_plan;
  if (mmproj) {
    mm_plan = PlanMmprojConversion(LoadHfVisionConfig(dir), LoadHfAudioConfig(dir), *checkpoint,
                                   options.out_type, dir);
    if (options.clip_use_gelu) mm_plan->vision.use_gelu = true;
  }

  std::string name = options.name;
  if (name.empty()) {
    fs::path p = fs::path(dir).lexically_normal();
    name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  }
  GgufWriter w;
  WriteMetadata(plan, tokenizer, options, name, w);
  AddSuppressTokensToGguf(LoadSuppressTokens(dir, static_cast<int>(tokenizer.vocab.size())), w);
  uint64_t total = 0, mm_total = 0;
  for (const PlannedTensor& p : plan.tensors) total += PlannedBytes(p);
  if (mm_plan) {
    for (const PlannedTensor& p : mm_plan->tensors) mm_total += PlannedBytes(p);
  }
  ThreadPool& pool = GlobalThreadPool(options.n_threads);
  ProgressBar bar("convert", total + mm_total, options.progress && StderrIsTerminal());
  AddTensors(plan.tensors, plan.hf, w, bar, pool);
  if (plan.n_multimodal > 0 && !mm_plan) {
    LogInfo(dir + ": skipped " + std::to_string(plan.n_multimodal) +
            " vision/audio tensors (a text-only GGUF; --mmproj FILE writes the projector)");
  }
  w.Write(options.output_path);

  if (mm_plan) {
    // One file for both towers, keys and tensors in WriteRandomMmproj's order: general, vision,
    // audio.
    GgufWriter mw;
    WriteGemma4VisionMmprojKeys(mm_plan->vision, options.out_type, name, mw);
    if (mm_plan->audio) mm_plan->audio->WriteToGguf(mw);
    AddTensors(mm_plan->tensors, plan.hf, mw, bar, pool);
    mw.Write(options.mmproj_path);
  }
  bar.Finish();

  ConvertSummary s;
  s.hf_architecture = hf.hf_architecture;
  s.gguf_arch = hf.gguf_arch;
  s.n_tensors = plan.tensors.size();
  s.n_multimodal = plan.n_multimodal;
  s.n_dropped = plan.dropped.size();
  s.n_shards = checkpoint->shard_count();
  s.tensor_bytes = total;
  if (mm_plan) {
    s.n_mmproj_tensors = mm_plan->tensors.size();
    s.n_mmproj_audio_tensors = mm_plan->n_audio_tensors;
    s.mmproj_bytes = mm_total;
  }
  return s;
}

}  // namespace tandem
