#include "mmproj_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tensor/dequantize.h"
#include "test_util.h"

namespace tandem::testing {

namespace fs = std::filesystem;

Gemma4VisionConfig ExpectedVisionConfig(const HfSpec& s) {
  const HfVisionSpec& v = s.vision;
  Gemma4VisionConfig c;
  c.n_embd = v.hidden;
  c.n_ff = v.ff;
  c.n_layer = v.layers;
  c.n_head = v.heads;
  c.n_head_kv = v.heads;
  c.head_dim = v.head_dim;
  c.patch_size = v.patch;
  c.pooling = v.pooling;
  c.n_pos = v.positions;
  c.n_embd_text = s.hidden;
  c.clipped_linears = v.clipped;
  c.standardize = v.standardize;
  return c;
}

Gemma4AudioConfig ExpectedAudioConfig(const HfSpec& s) {
  const HfAudioSpec& a = s.audio;
  Gemma4AudioConfig c;
  c.n_embd = a.hidden;
  c.n_ff = 4 * a.hidden;
  c.n_layer = a.layers;
  c.n_head = a.heads;
  c.n_mel = 128;
  c.n_embd_text = s.hidden;
  c.eps = 1e-6f;
  c.sub_channels0 = a.channels0;
  c.sub_channels1 = a.channels1;
  c.n_out = a.output;
  c.clipped_linears = a.clipped;
  return c;
}

ConvertOptions MmprojOptions(const std::string& hf, const std::string& text,
                             const std::string& mmproj, TensorType type) {
  ConvertOptions o;
  o.input_dir = hf;
  o.output_path = text;
  o.mmproj_path = mmproj;
  o.out_type = type;
  o.name = "test";  // as Convert() names its files
  o.progress = false;
  o.n_threads = 2;
  return o;
}

Converted ConvertWithMmproj(const HfSpec& spec, TensorType type, const std::string& tag) {
  Converted c{MakeHfCheckpoint(spec), "", "", "", {}};
  const std::string dir = ScratchDir(spec.name + "-" + tag);
  c.hf = dir + "/hf";
  c.text = dir + "/text.gguf";
  c.mmproj = dir + "/mmproj.gguf";
  WriteHfCheckpoint(c.ckpt, c.hf, 2);
  c.summary = ConvertHfToGguf(MmprojOptions(c.hf, c.text, c.mmproj, type));
  return c;
}

void ExpectCloseToReference(const std::vector<float>& got, const std::vector<double>& ref,
                            double bound) {
  ASSERT_EQ(got.size(), ref.size());
  double sq = 0, max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    sq += ref[i] * ref[i];
    max_diff = std::max(max_diff, std::abs(got[i] - ref[i]));
  }
  const double rms = std::sqrt(sq / static_cast<double>(got.size()));
  EXPECT_GT(rms, 0.1);
  EXPECT_LE(max_diff / rms, bound);
}

std::vector<float> DecodeTensor(const GgufFile& f, const TensorInfo& t) {
  std::vector<float> out(t.n_elements());
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(t.type), t.ne[0]);
  for (uint64_t r = 0; r < t.n_elements() / t.ne[0]; ++r) {
    DequantizeRow(t.type, f.TensorData(t) + r * row_bytes, out.data() + r * t.ne[0],
                  static_cast<int64_t>(t.ne[0]));
  }
  return out;
}

const HfTensor& ByMmproj(const HfCheckpoint& c, const std::string& gguf) {
  for (const HfTensor& t : c.tensors) {
    if (t.mmproj == gguf) return t;
  }
  ADD_FAILURE() << "the checkpoint has no tensor for " << gguf;
  return c.tensors[0];
}

const HfTensor& Named(const HfCheckpoint& c, const std::string& name) {
  for (const HfTensor& t : c.tensors) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return c.tensors[0];
}

HfTensor& Named(HfCheckpoint& c, const std::string& name) {
  return const_cast<HfTensor&>(Named(static_cast<const HfCheckpoint&>(c), name));
}

void ExpectMmprojError(const HfSpec& spec, const std::function<void(HfCheckpoint&)>& edit,
                       ErrorKind kind, const std::vector<std::string>& needles) {
  HfCheckpoint ckpt = MakeHfCheckpoint(spec);
  if (edit) edit(ckpt);
  const std::string dir = ScratchDir("bad");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  const std::string text = dir + "/text.gguf", mmproj = dir + "/mmproj.gguf";
  try {
    ConvertHfToGguf(MmprojOptions(dir + "/hf", text, mmproj, TensorType::kF16));
    ADD_FAILURE() << "conversion succeeded; expected an error containing '" << needles[0] << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' in: " << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(text));
  EXPECT_FALSE(fs::exists(mmproj));
}

}  // namespace tandem::testing
