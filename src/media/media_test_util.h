// Test helpers: real PNG, JPEG and WebP files made with the same libraries' encoders, an EXIF
// block built by hand, and deterministic test pictures.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "media/rgb_image.h"

namespace tandem::testing_media {

// A picture with smooth gradients, sharp edges and pseudo-random noise (seeded), so resampling
// errors in any direction, channel or phase show.
RgbImage MakeTestPicture(int width, int height, uint32_t seed);

// A PNG with the given IHDR colour type and bit depth. `samples` holds the rows unpacked: one
// value per sample (0..2^depth - 1), channels interleaved (gray; gray, alpha; R, G, B; R, G, B,
// alpha; or palette index). `palette` is RGB triples for colour type 3; `trns` a tRNS chunk.
struct PngSpec {
  int width = 0;
  int height = 0;
  int color_type = 2;
  int bit_depth = 8;
  bool interlaced = false;
  std::vector<uint16_t> samples;
  std::vector<uint8_t> palette;
  std::vector<uint8_t> trns;
  std::vector<uint8_t> exif = {};  // an eXIf chunk (a TIFF structure) before the image data
};
std::vector<uint8_t> EncodePng(const PngSpec& spec);
std::vector<uint8_t> EncodePngRgb(const RgbImage& image);

// A JPEG of 1 (gray), 3 (RGB in, YCbCr stored) or 4 (CMYK stored as given, Adobe marker)
// components. `samples` is interleaved. `app1`, when not empty, is written as an APP1 segment.
struct JpegSpec {
  int width = 0;
  int height = 0;
  int components = 3;
  std::vector<uint8_t> samples;
  int quality = 95;
  bool progressive = false;
  bool many_scans = false;  // gray only: a valid progressive script of 631 scans
  std::vector<uint8_t> app1;
};
std::vector<uint8_t> EncodeJpeg(const JpegSpec& spec);
std::vector<uint8_t> EncodeJpegRgb(const RgbImage& image, int quality = 95);

// "Exif\0\0" and a TIFF structure (drop the first 6 bytes for PNG's eXIf) whose IFD0 holds one
// Orientation entry of `value` (type SHORT unless `type` says otherwise), little- or big-endian.
std::vector<uint8_t> MakeExifOrientation(int value, bool big_endian, uint16_t type = 3);

// WebP: lossless (exact, including RGB under alpha) or lossy.
std::vector<uint8_t> EncodeWebpLossless(const RgbImage& image);
std::vector<uint8_t> EncodeWebpLosslessRgba(int width, int height,
                                            const std::vector<uint8_t>& rgba);
std::vector<uint8_t> EncodeWebpLossy(const RgbImage& image, float quality);

// The WebP file with an EXIF chunk holding `exif` (made an extended file by libwebp's muxer).
std::vector<uint8_t> WithWebpExif(const std::vector<uint8_t>& webp,
                                  const std::vector<uint8_t>& exif);

// Writes bytes to a file under the test temp dir and returns its path.
std::string WriteTempFile(const std::string& name, const std::vector<uint8_t>& bytes);

// Runs `f` and expects a tandem::Error of `kind` whose message contains `part` (gtest
// failures otherwise).
void ExpectError(const std::function<void()>& f, ErrorKind kind, const std::string& part);

// Largest |a - b| over all samples; -1 when the sizes differ.
int MaxAbsDiff(const RgbImage& a, const RgbImage& b);

}  // namespace tandem::testing_media
