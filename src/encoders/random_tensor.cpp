#include "encoders/random_tensor.h"

#include <algorithm>
#include <cstring>

#include "base/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace tandem {

void AddRandomTensor(GgufWriter& w, const std::string& name, TensorType type,
                     const std::vector<uint64_t>& ne, int64_t piece, RandomPiece fill) {
  w.AddTensor(name, type, ne, [ne, piece, type, fill](const GgufByteSink& sink) {
    uint64_t total = 1;
    for (uint64_t n : ne) total *= n;
    const uint64_t pieces = total / static_cast<uint64_t>(piece);
    const size_t piece_bytes = RowBytes(GetTensorTypeTraits(type), piece);
    const uint64_t chunk = std::max<uint64_t>(1, (8u << 20) / (piece * sizeof(float)));
    std::vector<uint8_t> out;
    for (uint64_t r0 = 0; r0 < pieces; r0 += chunk) {
      const uint64_t nr = std::min(chunk, pieces - r0);
      out.resize(nr * piece_bytes);
      GlobalThreadPool().ParallelForRange(nr, [&](size_t b, size_t e, int) {
        std::vector<float> values(piece);
        for (size_t r = b; r < e; ++r) {
          fill(r0 + r, piece, values.data());
          if (type == TensorType::kF32) {
            std::memcpy(out.data() + r * piece_bytes, values.data(), piece_bytes);
          } else {
            QuantizeRow(type, values.data(), out.data() + r * piece_bytes, piece);
          }
        }
      });
      sink(out);
    }
  });
}

}  // namespace tandem
