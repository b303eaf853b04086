// libFuzzer: bytes -> a saved slot file (DecodeSlotImage). Any input must decode or throw
// tandem::Error, never crash; what decodes re-encodes to the same bytes and, when small, is
// checked against and restored into a KV cache of its own shapes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "engine/slot_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const tandem::SlotImage image = tandem::DecodeSlotImage(bytes, "fuzz.bin");
    if (tandem::EncodeSlotImage(image) != bytes) __builtin_trap();
    if (image.layers.size() > 8 || image.n_positions() > 256) return 0;
    size_t heads = 0;
    for (const tandem::KvLayerSpec& l : image.layers) heads += size_t(l.n_kv_heads) * l.head_dim;
    if (heads > 4096) return 0;
    tandem::KvCache cache(image.layers, {.type = image.kv_type,
                                         .n_ctx = image.n_positions() + 1,
                                         .n_seq = 1,
                                         .max_batch = 8});
    tandem::CheckSlotImage(image, cache, image.model_digest, "fuzz.bin");
    tandem::RestoreSlot(image, cache, 0);
  } catch (const tandem::Error&) {
  }
  return 0;
}
