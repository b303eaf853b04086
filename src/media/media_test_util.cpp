#include "media/media_test_util.h"

#include <gtest/gtest.h>
#include <png.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <jpeglib.h>

namespace tandem::testing_media {
namespace {

void AppendToVector(png_structp png, png_bytep data, size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}

void FlushNothing(png_structp) {}

// All libpng calls of the writer; only plain data in this frame (libpng longjmps on error).
bool WritePng(png_structp png, png_infop info, const PngSpec* spec, png_bytepp rows,
              std::vector<uint8_t>* out) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, out, AppendToVector, FlushNothing);
  png_set_IHDR(png, info, spec->width, spec->height, spec->bit_depth, spec->color_type,
               spec->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!spec->palette.empty()) {
    png_color colors[256];
    int n = static_cast<int>(spec->palette.size() / 3);
    for (int i = 0; i < n; ++i) {
      colors[i].red = spec->palette[i * 3];
      colors[i].green = spec->palette[i * 3 + 1];
      colors[i].blue = spec->palette[i * 3 + 2];
    }
    png_set_PLTE(png, info, colors, n);
  }
  if (!spec->trns.empty()) {
    png_color_16 trans_color{};
    png_set_tRNS(png, info, spec->trns.data(), static_cast<int>(spec->trns.size()), &trans_color);
  }
  if (!spec->exif.empty()) {
    png_set_eXIf_1(png, info, static_cast<png_uint_32>(spec->exif.size()),
                   const_cast<png_bytep>(spec->exif.data()));
  }
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

int ChannelsOf(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY:
    case PNG_COLOR_TYPE_PALETTE:
      return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return 2;
    case PNG_COLOR_TYPE_RGB:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

RgbImage MakeTestPicture(int width, int height, uint32_t seed) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.resize(static_cast<size_t>(width) * height * 3);
  uint32_t state = seed * 2654435761u + 1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      state = state * 1664525u + 1013904223u;
      uint8_t* p = image.Pixel(x, y);
      const int noise = static_cast<int>(state >> 24) % 64 - 32;
      const bool edge = ((x / 7) + (y / 5)) % 2 == 0;
      p[0] = static_cast<uint8_t>(std::clamp(x * 255 / std::max(width - 1, 1) + noise, 0, 255));
      p[1] = static_cast<uint8_t>(std::clamp(y * 255 / std::max(height - 1, 1) - noise, 0, 255));
      p[2] = static_cast<uint8_t>(edge ? 230 : 20);
    }
  }
  return image;
}

std::vector<uint8_t> EncodePng(const PngSpec& spec) {
  const int channels = ChannelsOf(spec.color_type);
  const size_t row_samples = static_cast<size_t>(spec.width) * channels;
  // Pack the samples at the bit depth, big-endian, rows byte-aligned.
  const size_t row_bytes = (row_samples * spec.bit_depth + 7) / 8;
  std::vector<uint8_t> packed(row_bytes * spec.height, 0);
  for (int y = 0; y < spec.height; ++y) {
    uint8_t* row = packed.data() + row_bytes * y;
    for (size_t i = 0; i < row_samples; ++i) {
      const uint16_t v = spec.samples.at(y * row_samples + i);
      if (spec.bit_depth == 16) {
        row[i * 2] = static_cast<uint8_t>(v >> 8);
        row[i * 2 + 1] = static_cast<uint8_t>(v);
      } else if (spec.bit_depth == 8) {
        row[i] = static_cast<uint8_t>(v);
      } else {
        const size_t bit = i * spec.bit_depth;
        row[bit / 8] |= static_cast<uint8_t>(v << (8 - spec.bit_depth - bit % 8));
      }
    }
  }
  std::vector<png_bytep> rows(spec.height);
  for (int y = 0; y < spec.height; ++y) rows[y] = packed.data() + row_bytes * y;
  std::vector<uint8_t> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  const bool ok = WritePng(png, info, &spec, rows.data(), &out);
  png_destroy_write_struct(&png, &info);
  if (!ok) throw std::runtime_error("test PNG encoder failed");
  return out;
}

std::vector<uint8_t> EncodePngRgb(const RgbImage& image) {
  PngSpec spec;
  spec.width = image.width;
  spec.height = image.height;
  spec.samples.assign(image.rgb.begin(), image.rgb.end());
  return EncodePng(spec);
}

std::vector<uint8_t> EncodeJpeg(const JpegSpec& spec) {
  // The default error manager exits the process on error: acceptable in a test encoder fed
  // only well-formed parameters.
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = spec.width;
  cinfo.image_height = spec.height;
  cinfo.input_components = spec.components;
  cinfo.in_color_space =
      spec.components == 1 ? JCS_GRAYSCALE : (spec.components == 3 ? JCS_RGB : JCS_CMYK);
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, spec.quality, TRUE);
  if (spec.progressive) jpeg_simple_progression(&cinfo);
  // DC, then each AC coefficient alone, first at bit 9 and refined one bit per scan.
  std::vector<jpeg_scan_info> scans;
  if (spec.many_scans) {
    scans.push_back({1, {0, 0, 0, 0}, 0, 0, 0, 0});
    for (int k = 1; k < 64; ++k) {
      scans.push_back({1, {0, 0, 0, 0}, k, k, 0, 9});
      for (int a = 9; a >= 1; --a) scans.push_back({1, {0, 0, 0, 0}, k, k, a, a - 1});
    }
    cinfo.scan_info = scans.data();
    cinfo.num_scans = static_cast<int>(scans.size());
  }
  jpeg_start_compress(&cinfo, TRUE);
  if (!spec.app1.empty()) {
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, spec.app1.data(),
                      static_cast<unsigned int>(spec.app1.size()));
  }
  const size_t stride = static_cast<size_t>(spec.width) * spec.components;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(spec.samples.data()) + cinfo.next_scanline * stride;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<uint8_t> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

std::vector<uint8_t> EncodeJpegRgb(const RgbImage& image, int quality) {
  JpegSpec spec;
  spec.width = image.width;
  spec.height = image.height;
  spec.samples = image.rgb;
  spec.quality = quality;
  return EncodeJpeg(spec);
}

std::vector<uint8_t> MakeExifOrientation(int value, bool big_endian, uint16_t type) {
  std::vector<uint8_t> out = {'E', 'x', 'i', 'f', 0, 0};
  auto put16 = [&](uint16_t v) {
    if (big_endian) {
      out.push_back(static_cast<uint8_t>(v >> 8));
      out.push_back(static_cast<uint8_t>(v));
    } else {
      out.push_back(static_cast<uint8_t>(v));
      out.push_back(static_cast<uint8_t>(v >> 8));
    }
  };
  auto put32 = [&](uint32_t v) {
    if (big_endian) {
      put16(static_cast<uint16_t>(v >> 16));
      put16(static_cast<uint16_t>(v));
    } else {
      put16(static_cast<uint16_t>(v));
      put16(static_cast<uint16_t>(v >> 16));
    }
  };
  out.push_back(big_endian ? 'M' : 'I');
  out.push_back(big_endian ? 'M' : 'I');
  put16(42);
  put32(8);       // IFD0 right after the header
  put16(1);       // one entry
  put16(0x0112);  // Orientation
  put16(type);
  put32(1);  // one value
  if (type == 3) {
    put16(static_cast<uint16_t>(value));  // left-justified in the 4-byte value field
    put16(0);
  } else {
    put32(static_cast<uint32_t>(value));
  }
  put32(0);  // no IFD1
  return out;
}

std::vector<uint8_t> EncodeWebpLossless(const RgbImage& image) {
  uint8_t* output = nullptr;
  size_t size =
      WebPEncodeLosslessRGB(image.rgb.data(), image.width, image.height, image.width * 3, &output);
  if (size == 0) throw std::runtime_error("test WebP encoder failed");
  std::vector<uint8_t> out(output, output + size);
  WebPFree(output);
  return out;
}

std::vector<uint8_t> EncodeWebpLosslessRgba(int width, int height,
                                            const std::vector<uint8_t>& rgba) {
  WebPConfig config;
  WebPPicture picture;
  if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) {
    throw std::runtime_error("libwebp version mismatch");
  }
  config.lossless = 1;
  config.exact = 1;  // keep RGB under transparent pixels
  picture.use_argb = 1;
  picture.width = width;
  picture.height = height;
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  bool ok =
      WebPPictureImportRGBA(&picture, rgba.data(), width * 4) && WebPEncode(&config, &picture);
  WebPPictureFree(&picture);
  std::vector<uint8_t> out(writer.mem, writer.mem + writer.size);
  WebPMemoryWriterClear(&writer);
  if (!ok) throw std::runtime_error("test WebP encoder failed");
  return out;
}

std::vector<uint8_t> EncodeWebpLossy(const RgbImage& image, float quality) {
  uint8_t* output = nullptr;
  size_t size =
      WebPEncodeRGB(image.rgb.data(), image.width, image.height, image.width * 3, quality, &output);
  if (size == 0) throw std::runtime_error("test WebP encoder failed");
  std::vector<uint8_t> out(output, output + size);
  WebPFree(output);
  return out;
}

std::vector<uint8_t> WithWebpExif(const std::vector<uint8_t>& webp,
                                  const std::vector<uint8_t>& exif) {
  const WebPData image{webp.data(), webp.size()}, chunk{exif.data(), exif.size()};
  WebPMux* mux = WebPMuxCreate(&image, 1);
  WebPData out{nullptr, 0};
  const bool ok = mux != nullptr && WebPMuxSetChunk(mux, "EXIF", &chunk, 1) == WEBP_MUX_OK &&
                  WebPMuxAssemble(mux, &out) == WEBP_MUX_OK;
  WebPMuxDelete(mux);
  if (!ok) throw std::runtime_error("test WebP muxer failed");
  std::vector<uint8_t> bytes(out.bytes, out.bytes + out.size);
  WebPDataClear(&out);
  return bytes;
}

std::string WriteTempFile(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return path;
}

void ExpectError(const std::function<void()>& f, ErrorKind kind, const std::string& part) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(ErrorKindName(e.kind()), std::string(ErrorKindName(kind))) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message '" << e.what() << "' lacks '" << part << "'";
    return;
  }
  ADD_FAILURE() << "expected an Error containing '" << part << "'";
}

int MaxAbsDiff(const RgbImage& a, const RgbImage& b) {
  if (a.width != b.width || a.height != b.height || a.rgb.size() != b.rgb.size()) return -1;
  int worst = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) worst = std::max(worst, std::abs(a.rgb[i] - b.rgb[i]));
  return worst;
}

}  // namespace tandem::testing_media
