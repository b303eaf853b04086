// The metadata keys of llama.cpp's multimodal projector ("mmproj") GGUF files that tandem reads
// and writes (docs/vision.md § The mmproj file). One list, shared by the reader and the writer.
#pragma once

namespace tandem::mmproj {

inline constexpr char kArchitecture[] = "clip";  // general.architecture of every mmproj file
inline constexpr char kFileType[] = "mmproj";    // general.type

inline constexpr char kHasVision[] = "clip.has_vision_encoder";  // bool, absent = false
inline constexpr char kHasAudio[] = "clip.has_audio_encoder";    // bool, absent = false
// One projector type for the whole file; llama.cpp reads it first and falls back to the
// per-modality keys below (which Gemma 4's converter writes instead).
inline constexpr char kProjectorType[] = "clip.projector_type";
inline constexpr char kVisionProjectorType[] = "clip.vision.projector_type";
inline constexpr char kAudioProjectorType[] = "clip.audio.projector_type";

// Vision encoder hyperparameters: u32 unless noted.
inline constexpr char kVisionProjectionDim[] = "clip.vision.projection_dim";
inline constexpr char kVisionImageSize[] = "clip.vision.image_size";
inline constexpr char kVisionPatchSize[] = "clip.vision.patch_size";
inline constexpr char kVisionEmbeddingLength[] = "clip.vision.embedding_length";
inline constexpr char kVisionFeedForwardLength[] = "clip.vision.feed_forward_length";
inline constexpr char kVisionBlockCount[] = "clip.vision.block_count";
inline constexpr char kVisionHeadCount[] = "clip.vision.attention.head_count";
inline constexpr char kVisionHeadCountKv[] = "clip.vision.attention.head_count_kv";  // optional
inline constexpr char kVisionHeadDim[] = "clip.vision.attention.head_dim";           // optional
inline constexpr char kVisionLayerNormEps[] = "clip.vision.attention.layer_norm_epsilon";  // f32
inline constexpr char kVisionImageMean[] = "clip.vision.image_mean";  // array[f32], >= 3
inline constexpr char kVisionImageStd[] = "clip.vision.image_std";    // array[f32], >= 3
inline constexpr char kVisionScaleFactor[] = "clip.vision.projector.scale_factor";  // optional
// FFN activation flags (bool, optional). Absent: llama.cpp's vision FFN uses GELU-quick.
inline constexpr char kUseGelu[] = "clip.use_gelu";
inline constexpr char kUseSilu[] = "clip.use_silu";

// Audio encoder hyperparameters: u32 unless noted; all required by llama.cpp for an audio
// encoder (docs/audio.md § Keys).
inline constexpr char kAudioProjectionDim[] = "clip.audio.projection_dim";
inline constexpr char kAudioEmbeddingLength[] = "clip.audio.embedding_length";
inline constexpr char kAudioFeedForwardLength[] = "clip.audio.feed_forward_length";
inline constexpr char kAudioBlockCount[] = "clip.audio.block_count";
inline constexpr char kAudioHeadCount[] = "clip.audio.attention.head_count";
inline constexpr char kAudioLayerNormEps[] = "clip.audio.attention.layer_norm_epsilon";  // f32
inline constexpr char kAudioNumMelBins[] = "clip.audio.num_mel_bins";

}  // namespace tandem::mmproj
