// A saved slot: what one slot's KV cache holds, with the prompt keys of its positions (token ids,
// media content keys: PromptKeys), so a restored slot serves later prompts' prefixes exactly as
// the original did. The file format is in docs/deploy.md § Saved slots. Reading never trusts the
// file: every count is checked against the bytes left, a failure names the file and the offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kv/kv_cache.h"

namespace tandem {

inline constexpr char kSlotFileMagic[8] = {'T', 'N', 'D', 'M', 'S', 'L', 'O', 'T'};
inline constexpr uint32_t kSlotFileVersion = 1;

struct SlotImage {
  uint64_t model_digest = 0;  // EngineOptions::model_digest of the engine that saved it
  TensorType kv_type = TensorType::kF16;
  std::vector<KvLayerSpec> layers;
  std::vector<uint64_t> keys;  // PromptKeys of positions [0, n)
  // Per layer: the first saved position, and the K and V rows of positions [oldest, n), each
  // position's heads in order (n_kv_heads * KvRowBytes(kv_type, head_dim) bytes per position).
  std::vector<int32_t> oldest;
  std::vector<std::vector<uint8_t>> k, v;

  int n_positions() const { return static_cast<int>(keys.size()); }
};

// The image of `seq`'s first keys.size() positions (keys.size() <= cache.Length(seq)).
SlotImage CaptureSlot(KvCache& cache, int seq, std::vector<uint64_t> keys, uint64_t model_digest);

// Throws Error(kInvalidArgument) saying why `image` (read from `name`) cannot be restored into
// `cache`: another model (digest), another KV cache type, other layer shapes, or more positions
// than the context.
void CheckSlotImage(const SlotImage& image, const KvCache& cache, uint64_t model_digest,
                    const std::string& name);
// Replaces what `seq` holds with a checked image.
void RestoreSlot(const SlotImage& image, KvCache& cache, int seq);

std::string EncodeSlotImage(const SlotImage& image);
// Throws Error(kCorrupt) naming `name`, the field and the offset for bytes that are not a slot
// file of this version (truncated, bad counts, checksum mismatch).
SlotImage DecodeSlotImage(std::string_view bytes, const std::string& name);

// Writes atomically (a temporary file in the same directory, then rename); returns the bytes
// written. Throws Error(kIo) naming the file.
size_t WriteSlotFile(const std::string& path, const SlotImage& image);
// Throws Error(kNotFound) for a missing file, kIo, or DecodeSlotImage's errors; `n_read` gets
// the file's size.
SlotImage ReadSlotFile(const std::string& path, size_t* n_read);

}  // namespace tandem
