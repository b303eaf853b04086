// Gemma 4 audio tower (projector type gemma4a, a conformer) hyperparameters: read from an mmproj
// file's `clip.audio.*` keys with llama.cpp's exact types, plus what the tensors say (subsampling
// channels, output projection, clipped linears), plus the constants llama.cpp hard-codes for
// Gemma 4 rather than reading from the file (docs/audio.md).
#pragma once

#include <string>

namespace tandem {

class GgufWriter;
class MmprojFile;

struct Gemma4AudioConfig {
  // From the keys (docs/audio.md § Keys).
  int n_embd = 0;       // Da: clip.audio.embedding_length
  int n_ff = 0;         // FFN width: clip.audio.feed_forward_length (4·Da in every checkpoint)
  int n_layer = 0;      // clip.audio.block_count
  int n_head = 0;       // clip.audio.attention.head_count; head_dim = Da / heads
  int n_mel = 128;      // clip.audio.num_mel_bins: log-mel features per frame
  int n_embd_text = 0;  // Dt: clip.audio.projection_dim
  // clip.audio.attention.layer_norm_epsilon as stored. llama.cpp ignores it and runs 1e-6
  // (kNormEps) everywhere; the tower uses kNormEps too.
  float eps = 1e-6f;

  // Not keys: what the tensors hold (read from the file at load, chosen when generating).
  int sub_channels0 = 128;       // C0: a.conv1d.0.weight ne[3]
  int sub_channels1 = 32;        // C1: a.conv1d.1.weight ne[3]
  int n_out = 0;                 // O: a.pre_encode.out.weight ne[1]; 0 = no output projection
  bool clipped_linears = false;  // clamp bounds on the layers' linears (every real checkpoint)

  // Not in the file: fixed by llama.cpp for Gemma 4 (docs/audio.md § Constants).
  static constexpr int kSampleRate = 16000;
  static constexpr int kFftLength = 512;
  static constexpr int kWindowLength = 320;
  static constexpr int kHopLength = 160;
  static constexpr int kChunk = 12;         // attention block of queries
  static constexpr int kContextLeft = 13;   // transformers' attention_context_left (self included)
  static constexpr int kContextRight = 0;   // no key ahead of its query
  static constexpr int kRelPositions = 13;  // relative distances 12 ... 0
  static constexpr float kSoftcap = 50.0f;  // attention logits: 50·tanh(x / 50)
  static constexpr float kFfnResidual = 0.5f;  // macaron half step
  static constexpr int kConvKernel = 5;        // causal depthwise conv, left pad 4
  static constexpr float kNormEps = 1e-6f;     // every norm of the tower
  static constexpr int kChunkSeconds = 30;     // llama.cpp encodes longer input in 30 s pieces

  int head_dim() const { return n_head > 0 ? n_embd / n_head : 0; }
  // Mel bins after the two stride-2 subsampling convs: ceil(ceil(n_mel / 2) / 2).
  int sub_freq() const { return ((n_mel + 1) / 2 + 1) / 2; }
  // Width of one subsampled frame, flattened (freq, channel): the input projection's fan-in.
  int sub_width() const { return sub_freq() * sub_channels1; }
  // Width of the tower's output before the projector: O, or Da without an output projection.
  int out_width() const { return n_out > 0 ? n_out : n_embd; }

  // Reads and validates the audio keys of `file`, whose audio projector must be gemma4a, and
  // the tensor-derived fields. Throws Error naming the file and key (a missing required key, a
  // key of another type than llama.cpp reads, an inconsistent value) or the tensor.
  static Gemma4AudioConfig FromMmproj(const MmprojFile& file);
  // Writes the keys as llama.cpp's converter does: clip.has_audio_encoder,
  // clip.audio.projector_type = gemma4a and the clip.audio.* keys.
  void WriteToGguf(GgufWriter& writer) const;
  // Throws Error(kInvalidArgument) naming `source` and the field when inconsistent (sizes not
  // positive, heads not dividing Da, an odd head_dim).
  void Validate(const std::string& source) const;
};

}  // namespace tandem
