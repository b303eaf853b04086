#include "engine/slot_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/file_digest.h"
#include "kernels/attention.h"
#include "kernels/kv_types.h"

namespace tandem {
namespace {

size_t PositionBytes(TensorType type, const KvLayerSpec& layer) {
  return kernels::KvRowBytes(type, layer.head_dim) * static_cast<size_t>(layer.n_kv_heads);
}

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// A bounds-checked reader over the file's bytes.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  template <typename T>
  T Get(const char* field) {
    T value;
    std::memcpy(&value, Take(sizeof(T), field), sizeof(T));
    return value;
  }
  const char* Take(size_t n, const char* field) {
    if (n > bytes_.size() - pos_) {
      Corrupt(field, "needs " + std::to_string(n) + " bytes, " +
                         std::to_string(bytes_.size() - pos_) + " left (truncated)");
    }
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  // A count of items of `item_bytes` each, checked against the bytes left.
  uint64_t Count(const char* field, uint64_t item_bytes, uint64_t max) {
    const size_t at = pos_;
    const uint64_t n = Get<uint32_t>(field);
    if (n > max || (item_bytes > 0 && n > (bytes_.size() - pos_) / item_bytes)) {
      pos_ = at;
      Corrupt(field, "count " + std::to_string(n) + " does not fit the file");
    }
    return n;
  }
  [[noreturn]] void Corrupt(const char* field, const std::string& why) const {
    Fail(ErrorKind::kCorrupt, name_ + ": slot file field '" + field + "' at offset " +
                                  std::to_string(pos_) + ": " + why);
  }
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  const std::string& name_;
  size_t pos_ = 0;
};

}  // namespace

SlotImage CaptureSlot(KvCache& cache, int seq, std::vector<uint64_t> keys, uint64_t model_digest) {
  if (keys.size() > static_cast<size_t>(cache.Length(seq))) {
    Fail(ErrorKind::kInternal, "CaptureSlot: more keys than cached positions");
  }
  SlotImage image;
  image.model_digest = model_digest;
  image.kv_type = cache.type();
  image.keys = std::move(keys);
  const int32_t n = image.n_positions();
  for (int l = 0; l < cache.n_layers(); ++l) {
    const KvLayerSpec& spec = cache.layer_spec(l);
    image.layers.push_back(spec);
    const int32_t oldest = std::min(cache.OldestHeld(l, seq), n);
    image.oldest.push_back(oldest);
    const size_t row = kernels::KvRowBytes(cache.type(), spec.head_dim);
    std::vector<uint8_t> k, v;
    k.reserve(static_cast<size_t>(n - oldest) * row * spec.n_kv_heads);
    v.reserve(k.capacity());
    for (int32_t pos = oldest; pos < n; ++pos) {
      for (int h = 0; h < spec.n_kv_heads; ++h) {
        const uint8_t* kr = cache.KRow(l, seq, pos, h);
        const uint8_t* vr = cache.VRow(l, seq, pos, h);
        k.insert(k.end(), kr, kr + row);
        v.insert(v.end(), vr, vr + row);
      }
    }
    image.k.push_back(std::move(k));
    image.v.push_back(std::move(v));
  }
  return image;
}

void CheckSlotImage(const SlotImage& image, const KvCache& cache, uint64_t model_digest,
                    const std::string& name) {
  const std::string what = name + ": ";
  if (image.model_digest != model_digest) {
    Fail(ErrorKind::kInvalidArgument,
         what + "saved by another model (its model digest differs from the loaded model's)");
  }
  if (image.kv_type != cache.type()) {
    Fail(ErrorKind::kInvalidArgument,
         what + "saved with KV cache type " + std::string(TensorTypeName(image.kv_type)) +
             ", this server uses " + std::string(TensorTypeName(cache.type())));
  }
  if (static_cast<int>(image.layers.size()) != cache.n_layers()) {
    Fail(ErrorKind::kInvalidArgument, what + "has " + std::to_string(image.layers.size()) +
                                          " KV layers, this model has " +
                                          std::to_string(cache.n_layers()));
  }
  for (int l = 0; l < cache.n_layers(); ++l) {
    const KvLayerSpec& a = image.layers[l];
    const KvLayerSpec& b = cache.layer_spec(l);
    if (a.n_kv_heads != b.n_kv_heads || a.head_dim != b.head_dim || a.window != b.window) {
      Fail(ErrorKind::kInvalidArgument,
           what + "KV layer " + std::to_string(l) + " has another shape than this model's");
    }
  }
  if (image.n_positions() > cache.n_ctx()) {
    Fail(ErrorKind::kInvalidArgument, what + "holds " + std::to_string(image.n_positions()) +
                                          " positions, the context is " +
                                          std::to_string(cache.n_ctx()));
  }
}

void RestoreSlot(const SlotImage& image, KvCache& cache, int seq) {
  cache.Clear(seq);
  const int32_t n = image.n_positions();
  try {
    cache.Adopt(seq, n, image.oldest);
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, e.what());
  }
  for (int l = 0; l < cache.n_layers(); ++l) {
    const KvLayerSpec& spec = cache.layer_spec(l);
    const size_t row = kernels::KvRowBytes(cache.type(), spec.head_dim);
    const size_t per_pos = row * spec.n_kv_heads;
    const int32_t from = image.oldest[l];
    for (int32_t pos = cache.OldestHeld(l, seq); pos < n; ++pos) {
      const size_t at = static_cast<size_t>(pos - from) * per_pos;
      for (int h = 0; h < spec.n_kv_heads; ++h) {
        std::memcpy(cache.KRow(l, seq, pos, h), image.k[l].data() + at + h * row, row);
        std::memcpy(cache.VRow(l, seq, pos, h), image.v[l].data() + at + h * row, row);
      }
    }
  }
}

std::string EncodeSlotImage(const SlotImage& image) {
  std::string out(kSlotFileMagic, sizeof(kSlotFileMagic));
  Put<uint32_t>(out, kSlotFileVersion);
  Put<uint64_t>(out, image.model_digest);
  Put<uint32_t>(out, static_cast<uint32_t>(image.kv_type));
  Put<uint32_t>(out, static_cast<uint32_t>(image.layers.size()));
  for (const KvLayerSpec& l : image.layers) {
    Put<uint32_t>(out, static_cast<uint32_t>(l.n_kv_heads));
    Put<uint32_t>(out, static_cast<uint32_t>(l.head_dim));
    Put<uint32_t>(out, static_cast<uint32_t>(l.window));
  }
  Put<uint32_t>(out, static_cast<uint32_t>(image.keys.size()));
  for (uint64_t key : image.keys) Put<uint64_t>(out, key);
  for (size_t l = 0; l < image.layers.size(); ++l) {
    Put<uint32_t>(out, static_cast<uint32_t>(image.oldest[l]));
    out.append(reinterpret_cast<const char*>(image.k[l].data()), image.k[l].size());
    out.append(reinterpret_cast<const char*>(image.v[l].data()), image.v[l].size());
  }
  Put<uint64_t>(out, Fnv1a64(out.data(), out.size()));
  return out;
}

SlotImage DecodeSlotImage(std::string_view bytes, const std::string& name) {
  Reader r(bytes, name);
  if (std::memcmp(r.Take(sizeof(kSlotFileMagic), "magic"), kSlotFileMagic,
                  sizeof(kSlotFileMagic)) != 0) {
    Fail(ErrorKind::kCorrupt, name + ": not a tandem slot file (bad magic at offset 0)");
  }
  const uint32_t version = r.Get<uint32_t>("version");
  if (version != kSlotFileVersion) {
    r.Corrupt("version", "version " + std::to_string(version) + ", this tandem reads " +
                             std::to_string(kSlotFileVersion));
  }
  SlotImage image;
  image.model_digest = r.Get<uint64_t>("model_digest");
  const uint32_t type = r.Get<uint32_t>("kv_type");
  image.kv_type = static_cast<TensorType>(type);
  if (!kernels::IsKvCacheType(image.kv_type)) {
    r.Corrupt("kv_type", "type " + std::to_string(type) + " is not a KV cache type");
  }
  const uint64_t n_layers = r.Count("n_layers", 12, 1 << 16);
  for (uint64_t l = 0; l < n_layers; ++l) {
    KvLayerSpec spec;
    spec.n_kv_heads = static_cast<int>(r.Get<uint32_t>("n_kv_heads"));
    spec.head_dim = static_cast<int>(r.Get<uint32_t>("head_dim"));
    spec.window = static_cast<int>(r.Get<uint32_t>("window"));
    if (spec.n_kv_heads < 1 || spec.n_kv_heads > 4096 || spec.head_dim < 1 ||
        spec.head_dim > 65536 ||
        spec.head_dim % GetTensorTypeTraits(image.kv_type).block_size != 0 || spec.window < 0) {
      r.Corrupt("layer shape", "layer " + std::to_string(l) + " has an impossible shape");
    }
    image.layers.push_back(spec);
  }
  const uint64_t n = r.Count("n_positions", 8, 1u << 30);
  image.keys.resize(n);
  if (n > 0) std::memcpy(image.keys.data(), r.Take(n * 8, "keys"), n * 8);
  for (uint64_t l = 0; l < n_layers; ++l) {
    const uint32_t oldest = r.Get<uint32_t>("oldest");
    if (oldest > n || (image.layers[l].window == 0 && oldest != 0)) {
      r.Corrupt("oldest", "layer " + std::to_string(l) + " starts at position " +
                              std::to_string(oldest) + " of " + std::to_string(n));
    }
    image.oldest.push_back(static_cast<int32_t>(oldest));
    const uint64_t size = (n - oldest) * PositionBytes(image.kv_type, image.layers[l]);
    if (size > r.left() / 2) r.Corrupt("rows", "layer " + std::to_string(l) + " is truncated");
    const auto* k = reinterpret_cast<const uint8_t*>(r.Take(size, "k rows"));
    image.k.emplace_back(k, k + size);
    const auto* v = reinterpret_cast<const uint8_t*>(r.Take(size, "v rows"));
    image.v.emplace_back(v, v + size);
  }
  const size_t body = r.pos();
  const uint64_t checksum = r.Get<uint64_t>("checksum");
  if (checksum != Fnv1a64(bytes.data(), body)) {
    Fail(ErrorKind::kCorrupt, name + ": slot file checksum at offset " + std::to_string(body) +
                                  " does not match its contents");
  }
  if (r.left() != 0) r.Corrupt("end", std::to_string(r.left()) + " bytes after the checksum");
  return image;
}

size_t WriteSlotFile(const std::string& path, const SlotImage& image) {
  const std::string bytes = EncodeSlotImage(image);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      Fail(ErrorKind::kIo, tmp + ": cannot write the slot file");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    Fail(ErrorKind::kIo, path + ": cannot rename the slot file into place");
  }
  return bytes.size();
}

SlotImage ReadSlotFile(const std::string& path, size_t* n_read) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kNotFound, path + ": no such slot file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) Fail(ErrorKind::kIo, path + ": cannot read the slot file");
  const std::string bytes = ss.str();
  if (n_read) *n_read = bytes.size();
  return DecodeSlotImage(bytes, path);
}

}  // namespace tandem
