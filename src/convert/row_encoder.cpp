#include "convert/row_encoder.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "tensor/quantize.h"

namespace tandem {

uint64_t EncodedBytes(const RowEncodeJob& job) {
  return RowBytes(GetTensorTypeTraits(job.type), job.row_len) * job.n_rows;
}

void EncodeRows(const RowEncodeJob& job, const RowReader& read, const GgufByteSink& sink,
                ThreadPool& pool, const std::function<void(uint64_t bytes)>& progress) {
  const TensorTypeTraits& traits = GetTensorTypeTraits(job.type);
  if (job.row_len == 0 || job.row_len % traits.block_size != 0) {
    Fail(ErrorKind::kInvalidArgument, "tensor '" + job.name + "': row length " +
                                          std::to_string(job.row_len) + " is not a multiple of " +
                                          std::string(traits.name) + "'s block size " +
                                          std::to_string(traits.block_size));
  }
  if (job.type != TensorType::kF32 && !CanQuantize(job.type)) {
    Fail(ErrorKind::kUnsupported,
         "tensor '" + job.name + "': cannot encode type " + std::string(traits.name));
  }
  const size_t row_bytes = RowBytes(traits, job.row_len);
  const uint64_t chunk_rows =
      std::max<uint64_t>(1, (uint64_t{8} << 20) / (job.row_len * sizeof(float)));
  const auto n = static_cast<int64_t>(job.row_len);
  std::vector<uint8_t> out;  // [rows of this chunk][row_bytes]
  for (uint64_t r0 = 0; r0 < job.n_rows; r0 += chunk_rows) {
    const uint64_t nr = std::min(chunk_rows, job.n_rows - r0);
    out.resize(nr * row_bytes);
    std::atomic<uint64_t> first_bad{UINT64_MAX};
    pool.ParallelForRange(nr, [&](size_t begin, size_t end, int) {
      std::vector<float> row(job.row_len);  // [row_len]
      for (size_t r = begin; r < end; ++r) {
        if (!read(r0 + r, row.data())) {
          uint64_t seen = first_bad.load();
          while (r0 + r < seen && !first_bad.compare_exchange_weak(seen, r0 + r)) {
          }
          continue;
        }
        QuantizeRow(job.type, row.data(), out.data() + r * row_bytes, n);
      }
    });
    if (first_bad.load() != UINT64_MAX) {
      Fail(ErrorKind::kCorrupt, "tensor '" + job.name + "': row " +
                                    std::to_string(first_bad.load()) +
                                    " holds a non-finite value (NaN or infinity)");
    }
    sink(out);
    progress(out.size());
  }
}

}  // namespace tandem
