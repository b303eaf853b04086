// What tandem-encode-image and tandem-encode-audio print and write: one JSON line
// {"tokens": [...], "n_embd": D, "encode_ms": [...]} and the soft tokens of every item, in order,
// as little-endian f32 (the parity drivers read both).
#pragma once

#include <string>
#include <vector>

namespace tandem {

// `out[i]` holds item i's rows of `n_embd`; `ms` the timings; nothing is written when `path` is
// empty. Throws Error(kIo) when the file cannot be written.
void ReportEncodes(const std::vector<std::vector<float>>& out, int n_embd,
                   const std::vector<double>& ms, const std::string& path);

}  // namespace tandem
