// GGUF v3 writer (docs/formats.md § Writing a GGUF): header, KVs, tensor infos with packed offsets,
// zero padding to the alignment after the infos and after every tensor, written via a temp file.
#include "gguf/gguf_writer.h"

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

namespace tandem {
namespace {

constexpr uint32_t kGgufWriteVersion = 3;

uint64_t AlignUp(uint64_t x, uint64_t alignment) {
  return x + (alignment - x % alignment) % alignment;
}

template <typename T>
void Append(std::vector<uint8_t>& out, T v) {
  const auto* b = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), b, b + sizeof(T));
}

void AppendString(std::vector<uint8_t>& out, std::string_view s) {
  Append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void WriteAll(std::FILE* out, const std::string& path, const void* data, size_t n) {
  if (n != 0 && std::fwrite(data, 1, n, out) != n) {
    Fail(ErrorKind::kIo, path + ": write failed: " + std::strerror(errno));
  }
}

void WriteZeros(std::FILE* out, const std::string& path, uint64_t n) {
  static constexpr uint8_t kZeros[256] = {};
  while (n > 0) {
    size_t chunk = n < sizeof(kZeros) ? static_cast<size_t>(n) : sizeof(kZeros);
    WriteAll(out, path, kZeros, chunk);
    n -= chunk;
  }
}

}  // namespace

void GgufWriter::CopyMetadata(const GgufMetadata& source) {
  for (const GgufKv& kv : source.entries()) metadata_.Set(kv.key, kv.value);
}

GgufWriter::Tensor GgufWriter::MakeTensor(std::string_view name, TensorType type,
                                          std::span<const uint64_t> ne) const {
  std::string label = "GgufWriter: tensor '" + GgufEscape(name) + "'";
  if (name.empty() || name.size() > kGgufMaxTensorName) {
    Fail(ErrorKind::kInvalidArgument,
         label + ": name must be 1.." + std::to_string(kGgufMaxTensorName) + " bytes");
  }
  if (tensor_index_.count(name) != 0) Fail(ErrorKind::kInvalidArgument, label + ": duplicate name");
  if (ne.size() > kGgufMaxDims) {
    Fail(ErrorKind::kInvalidArgument, label + ": " + std::to_string(ne.size()) +
                                          " dimensions, the limit is " +
                                          std::to_string(kGgufMaxDims));
  }
  const TensorTypeTraits& traits = GetTensorTypeTraits(type);
  Tensor t{std::string(name), type, static_cast<uint32_t>(ne.size()), {1, 1, 1, 1}, 0, nullptr};
  uint64_t n_elements = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    t.ne[d] = ne[d];
    if (__builtin_mul_overflow(n_elements, ne[d], &n_elements) ||
        n_elements > static_cast<uint64_t>(INT64_MAX)) {
      Fail(ErrorKind::kInvalidArgument, label + ": element count overflows int64");
    }
  }
  if (t.ne[0] % traits.block_size != 0) {
    Fail(ErrorKind::kInvalidArgument, label + ": ne[0] = " + std::to_string(t.ne[0]) +
                                          " is not a multiple of the " + std::string(traits.name) +
                                          " block size " + std::to_string(traits.block_size));
  }
  if (__builtin_mul_overflow(n_elements / traits.block_size, uint64_t{traits.block_bytes},
                             &t.nbytes)) {
    Fail(ErrorKind::kInvalidArgument, label + ": byte size overflows uint64");
  }
  return t;
}

void GgufWriter::Add(Tensor t) {
  tensor_index_.emplace(t.name, tensors_.size());
  tensors_.push_back(std::move(t));
}

void GgufWriter::AddTensor(std::string_view name, TensorType type, std::span<const uint64_t> ne,
                           std::vector<uint8_t> bytes) {
  Tensor t = MakeTensor(name, type, ne);
  if (bytes.size() != t.nbytes) {
    Fail(ErrorKind::kInvalidArgument,
         "GgufWriter: tensor '" + GgufEscape(name) + "' has " + std::to_string(bytes.size()) +
             " bytes, its shape and type need " + std::to_string(t.nbytes));
  }
  auto shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  t.producer = [shared](const GgufByteSink& sink) { sink(*shared); };
  Add(std::move(t));
}

void GgufWriter::AddTensor(std::string_view name, TensorType type, std::span<const uint64_t> ne,
                           GgufTensorProducer producer) {
  Tensor t = MakeTensor(name, type, ne);
  t.producer = std::move(producer);
  Add(std::move(t));
}

void GgufWriter::AddTensorFrom(const GgufFile& file, const TensorInfo& info) {
  Tensor t =
      MakeTensor(info.name, info.type, std::span<const uint64_t>(info.ne.data(), info.n_dims));
  const GgufFile* f = &file;
  TensorInfo copy = info;
  t.producer = [f, copy](const GgufByteSink& sink) { sink(f->TensorBytes(copy)); };
  Add(std::move(t));
}

uint32_t GgufWriter::Alignment() const {
  const GgufValue* v = metadata_.Find("general.alignment");
  if (v == nullptr) return kGgufDefaultAlignment;
  uint32_t a = metadata_.GetU32("general.alignment");
  if (!std::has_single_bit(a)) {
    Fail(ErrorKind::kInvalidArgument,
         "GgufWriter: general.alignment " + std::to_string(a) + " is not a power of two");
  }
  return a;
}

std::vector<uint8_t> GgufWriter::EncodeHeader(uint32_t alignment) const {
  std::vector<uint8_t> out;
  out.reserve(4096);
  for (char c : std::string_view("GGUF")) out.push_back(static_cast<uint8_t>(c));
  Append<uint32_t>(out, kGgufWriteVersion);
  Append<uint64_t>(out, tensors_.size());
  Append<uint64_t>(out, metadata_.size());
  for (const GgufKv& kv : metadata_.entries()) {
    AppendString(out, kv.key);
    Append<uint32_t>(out, static_cast<uint32_t>(kv.value.type()));
    kv.value.AppendEncoded(out);
  }
  uint64_t offset = 0;  // relative to the data section; llama.cpp requires this exact packing
  for (const Tensor& t : tensors_) {
    AppendString(out, t.name);
    Append<uint32_t>(out, t.n_dims);
    for (uint32_t d = 0; d < t.n_dims; ++d) Append<uint64_t>(out, t.ne[d]);
    Append<uint32_t>(out, static_cast<uint32_t>(t.type));
    Append<uint64_t>(out, offset);
    offset += AlignUp(t.nbytes, alignment);
  }
  out.resize(AlignUp(out.size(), alignment), 0);
  return out;
}

void GgufWriter::WriteTo(std::FILE* out, const std::string& tmp_path, uint32_t alignment) const {
  std::vector<uint8_t> header = EncodeHeader(alignment);
  WriteAll(out, tmp_path, header.data(), header.size());
  for (const Tensor& t : tensors_) {
    uint64_t written = 0;
    GgufByteSink sink = [&](std::span<const uint8_t> chunk) {
      if (chunk.size() > t.nbytes - written) {
        Fail(ErrorKind::kInvalidArgument, "GgufWriter: tensor '" + t.name +
                                              "' producer wrote more than " +
                                              std::to_string(t.nbytes) + " bytes");
      }
      WriteAll(out, tmp_path, chunk.data(), chunk.size());
      written += chunk.size();
    };
    t.producer(sink);
    if (written != t.nbytes) {
      Fail(ErrorKind::kInvalidArgument, "GgufWriter: tensor '" + t.name + "' producer wrote " +
                                            std::to_string(written) + " of " +
                                            std::to_string(t.nbytes) + " bytes");
    }
    WriteZeros(out, tmp_path, AlignUp(t.nbytes, alignment) - t.nbytes);
  }
  if (std::fflush(out) != 0 || ::fsync(fileno(out)) != 0) {
    Fail(ErrorKind::kIo, tmp_path + ": flush failed: " + std::strerror(errno));
  }
}

void GgufWriter::Write(const std::string& path) const {
  uint32_t alignment = Alignment();
  std::string tmp_path = path + ".tmp";
  std::FILE* out = std::fopen(tmp_path.c_str(), "wb");
  if (out == nullptr) Fail(ErrorKind::kIo, tmp_path + ": cannot create: " + std::strerror(errno));
  try {
    WriteTo(out, tmp_path, alignment);
  } catch (...) {
    std::fclose(out);
    std::remove(tmp_path.c_str());
    throw;
  }
  if (std::fclose(out) != 0) {
    int err = errno;
    std::remove(tmp_path.c_str());
    Fail(ErrorKind::kIo, tmp_path + ": close failed: " + std::strerror(err));
  }
  if (std::rename(tmp_path.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp_path.c_str());
    Fail(ErrorKind::kIo, "cannot rename " + tmp_path + " to " + path + ": " + std::strerror(err));
  }
}

}  // namespace tandem
