#include "encode_report.h"

#include <bit>
#include <cstdio>
#include <fstream>

#include "base/error.h"

namespace tandem {

static_assert(std::endian::native == std::endian::little, "the rows are written little-endian");

void ReportEncodes(const std::vector<std::vector<float>>& out, int n_embd,
                   const std::vector<double>& ms, const std::string& path) {
  std::string tokens, times;
  for (const auto& o : out) {
    tokens += (tokens.empty() ? "" : ", ") + std::to_string(o.size() / n_embd);
  }
  for (double t : ms) times += (times.empty() ? "" : ", ") + std::to_string(t);
  std::printf("{\"tokens\": [%s], \"n_embd\": %d, \"encode_ms\": [%s]}\n", tokens.c_str(), n_embd,
              times.c_str());
  if (path.empty()) return;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  for (const auto& o : out) {
    file.write(reinterpret_cast<const char*>(o.data()),
               static_cast<std::streamsize>(o.size() * sizeof(float)));
  }
  file.close();
  if (!file) Fail(ErrorKind::kIo, "cannot write '" + path + "'");
}

}  // namespace tandem
