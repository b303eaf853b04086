#include "convert/quantizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "convert/mmproj_quant_rules.h"
#include "convert/progress_bar.h"
#include "convert/row_encoder.h"
#include "encoders/mmproj_file.h"
#include "encoders/mmproj_keys.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tensor/dequantize.h"

namespace tandem {
namespace {

constexpr size_t kCopyChunk = size_t{8} << 20;

bool IsFloatType(TensorType t) {
  return t == TensorType::kF32 || t == TensorType::kF16 || t == TensorType::kBF16;
}

// Layer 0's query heads per KV head (scalar or per-layer head counts); 0 when a count is missing,
// malformed or zero: the rules that read it then take their smaller choice.
int LayerZeroGqa(const GgufMetadata& md, const std::string& arch) {
  const auto layer0 = [&md](const std::string& key) -> uint32_t {
    const GgufValue* v = md.Find(key);
    if (v == nullptr || v->size() == 0 || v->size() > UINT32_MAX) return 0;
    return md.GetU32PerLayer(key, static_cast<uint32_t>(v->size()))[0];
  };
  try {
    const uint32_t n_head = layer0(arch + ".attention.head_count");
    const uint32_t n_head_kv = layer0(arch + ".attention.head_count_kv");
    return n_head_kv == 0 ? 0 : static_cast<int>(n_head / n_head_kv);
  } catch (const Error&) {
    return 0;
  }
}

QuantModelDesc DescribeModel(const GgufFile& file) {
  QuantModelDesc m;
  const auto arch = file.metadata().FindString("general.architecture");
  if (arch) {
    const std::string a(*arch);
    if (const GgufValue* v = file.Find(a + ".block_count"); v && v->AsNonNegative()) {
      m.n_layer = static_cast<int>(std::min<uint64_t>(*v->AsNonNegative(), 1 << 20));
    }
    if (const GgufValue* v = file.Find(a + ".expert_count"); v && v->AsNonNegative()) {
      m.n_expert = static_cast<int>(std::min<uint64_t>(*v->AsNonNegative(), 1 << 20));
    }
    m.n_gqa = LayerZeroGqa(file.metadata(), a);
  }
  if (m.n_layer == 0) {  // no block_count: count the blocks
    for (const TensorInfo& t : file.tensors()) {
      int layer = -1;
      if (std::sscanf(t.name.c_str(), "blk.%d.", &layer) == 1)
        m.n_layer = std::max(m.n_layer, layer + 1);
    }
  }
  return m;
}

std::vector<uint64_t> Shape(const TensorInfo& t) {
  return {t.ne.begin(), t.ne.begin() + std::max<uint32_t>(t.n_dims, 1)};
}

// Row r of `t` decoded to f32; false if a value is not finite.
RowReader MakeReader(const GgufFile& file, const TensorInfo& t) {
  const uint8_t* data = file.TensorData(t);
  const uint64_t n = t.ne[0];
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(t.type), n);
  const TensorType type = t.type;
  return [data, n, row_bytes, type](uint64_t row, float* out) {
    DequantizeRow(type, data + row * row_bytes, out, static_cast<int64_t>(n));
    bool finite = true;
    for (uint64_t i = 0; i < n; ++i) finite &= std::isfinite(out[i]);
    return finite;
  };
}

}  // namespace

QuantizeSummary QuantizeGguf(const std::string& input, const std::string& output,
                             const QuantizeOptions& options) {
  const QuantPresetInfo& preset = GetQuantPresetInfo(options.preset);
  std::unique_ptr<GgufFile> owned = GgufFile::Open(input);
  // A multimodal projector follows the converter's mmproj dtype rules, not the text-model mix.
  std::unique_ptr<MmprojFile> mmproj;
  if (owned->metadata().FindString("general.architecture") == mmproj::kArchitecture) {
    mmproj = MmprojFile::FromGguf(std::move(owned));
  }
  const GgufFile* file = mmproj ? &mmproj->gguf() : owned.get();
  std::set<std::string, std::less<>> keep(options.keep_types.begin(), options.keep_types.end());
  for (const std::string& name : keep) {
    if (file->FindTensor(name) == nullptr) {
      Fail(ErrorKind::kInvalidArgument,
           input + ": --keep-type '" + name + "' names no tensor of the file");
    }
  }
  std::vector<QuantTensorDesc> descs;
  for (const TensorInfo& t : file->tensors()) descs.push_back({t.name, t.type, Shape(t)});
  const std::vector<QuantChoice> choices =
      mmproj ? ChooseMmprojQuantTypes(*mmproj, options.preset, keep)
             : ChooseQuantTypes(descs, options.preset, DescribeModel(*file), keep);

  QuantizeSummary s;
  uint64_t total_out = 0;
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorInfo& t = file->tensors()[i];
    const TensorType to = choices[i].type;
    if (to != t.type) {
      if (!GetTensorTypeTraits(t.type).dequantizable) {
        Fail(ErrorKind::kUnsupported, input + ": tensor '" + t.name + "' has type " +
                                          std::string(TensorTypeName(t.type)) +
                                          ", which tandem cannot decode");
      }
      if (!IsFloatType(t.type) && !options.allow_requantize) {
        Fail(ErrorKind::kInvalidArgument,
             input + ": tensor '" + t.name + "' is already quantized (" +
                 std::string(TensorTypeName(t.type)) +
                 "); re-quantizing loses precision, pass --allow-requantize to do it anyway");
      }
      ++s.n_converted;
    }
    s.n_fallback += choices[i].fallback ? 1 : 0;
    s.bytes_in += t.nbytes;
    s.n_elements += t.n_elements();
    total_out += RowBytes(GetTensorTypeTraits(to), t.ne[0]) * (t.n_elements() / t.ne[0]);
    ++s.type_counts[std::string(TensorTypeName(to))];
  }
  s.n_tensors = descs.size();
  s.bytes_out = total_out;

  GgufWriter w;
  w.CopyMetadata(file->metadata());
  w.SetU32("general.quantization_version", 2);
  w.SetU32("general.file_type", preset.file_type);
  for (const char* key : {"split.no", "split.count", "split.tensors.count"}) w.Remove(key);

  ThreadPool& pool = GlobalThreadPool(options.n_threads);
  ProgressBar bar("quantize " + std::string(preset.name), total_out,
                  options.progress && StderrIsTerminal());
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorInfo& t = file->tensors()[i];
    const TensorType to = choices[i].type;
    const std::vector<uint64_t> ne = descs[i].ne;
    if (to == t.type) {  // copied as is
      const std::span<const uint8_t> bytes = file->TensorBytes(t);
      w.AddTensor(t.name, t.type, ne, [bytes, &bar, name = t.name](const GgufByteSink& sink) {
        for (size_t off = 0; off < bytes.size(); off += kCopyChunk) {
          const auto chunk = bytes.subspan(off, std::min(kCopyChunk, bytes.size() - off));
          sink(chunk);
          bar.Advance(chunk.size(), name);
        }
        ReleaseMappedPages(bytes);
      });
      continue;
    }
    const RowEncodeJob job{t.name, to, t.ne[0], t.n_elements() / t.ne[0]};
    RowReader reader = MakeReader(*file, t);
    const std::span<const uint8_t> bytes = file->TensorBytes(t);
    w.AddTensor(t.name, to, ne, [job, reader, bytes, &bar, &pool](const GgufByteSink& sink) {
      EncodeRows(job, reader, sink, pool, [&bar, &job](uint64_t n) { bar.Advance(n, job.name); });
      ReleaseMappedPages(bytes);
    });
  }
  if (s.n_fallback > 0) {
    LogWarn(input + ": " + std::to_string(s.n_fallback) + " of " + std::to_string(s.n_tensors) +
            " tensors needed a fallback type (rows not a multiple of the block size)");
  }
  w.Write(output);
  bar.Finish();
  return s;
}

std::string FormatQuantizeSummary(const QuantizeSummary& s) {
  char head[160];
  const double ratio = s.bytes_in ? static_cast<double>(s.bytes_out) / s.bytes_in : 0.0;
  const double bpw = s.n_elements ? 8.0 * static_cast<double>(s.bytes_out) / s.n_elements : 0.0;
  std::snprintf(head, sizeof head, "%s -> %s (ratio %.3f, %.2f bits per weight)",
                FormatBytes(s.bytes_in).c_str(), FormatBytes(s.bytes_out).c_str(), ratio, bpw);
  std::string out = head;
  out += ";";
  for (const auto& [type, n] : s.type_counts) out += " " + type + " x" + std::to_string(n) + ",";
  out.pop_back();
  return out;
}

}  // namespace tandem
