// WebP (lossy, lossless, with or without alpha) with libwebp's advanced decoding API, which
// returns a status instead of jumping: the header's features first, then the pixels straight
// into the RgbImage buffer. An extended file's EXIF chunk (read with libwebp's demuxer) gives
// the orientation, as for JPEG.
#include <webp/decode.h>
#include <webp/demux.h>

#include <string>

#include "base/error.h"
#include "media/exif_orientation.h"
#include "media/format_decoders.h"

namespace tandem {
namespace {

[[noreturn]] void FailWebp(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_NOT_ENOUGH_DATA:
      Fail(ErrorKind::kCorrupt, "truncated WebP image");
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      Fail(ErrorKind::kUnsupported, "WebP image uses a feature libwebp does not decode");
    case VP8_STATUS_OUT_OF_MEMORY:
      Fail(ErrorKind::kInternal, "out of memory decoding a WebP image");
    case VP8_STATUS_BITSTREAM_ERROR:
      Fail(ErrorKind::kCorrupt, "corrupt WebP image: bitstream error");
    default:
      Fail(ErrorKind::kCorrupt,
           "corrupt WebP image: libwebp status " + std::to_string(static_cast<int>(status)));
  }
}

// The orientation in the file's EXIF chunk; 1 without one.
int WebpOrientation(std::span<const uint8_t> bytes) {
  const WebPData data{bytes.data(), bytes.size()};
  WebPDemuxer* demux = WebPDemux(&data);
  if (demux == nullptr) return 1;
  int orientation = 1;
  // The chunk is read whether or not the VP8X flags announce it, as Pillow does.
  WebPChunkIterator chunk;
  if (WebPDemuxGetChunk(demux, "EXIF", 1, &chunk)) {
    orientation = ReadTiffExifOrientation({chunk.chunk.bytes, chunk.chunk.size});
    WebPDemuxReleaseChunkIterator(&chunk);
  }
  WebPDemuxDelete(demux);
  return orientation;
}

struct WebpBufferFree {
  WebPDecBuffer* buffer;
  ~WebpBufferFree() { WebPFreeDecBuffer(buffer); }
};

}  // namespace

RgbImage DecodeWebp(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) Fail(ErrorKind::kInternal, "libwebp version mismatch");
  VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &config.input);
  if (status != VP8_STATUS_OK) FailWebp(status);
  if (config.input.has_animation) {
    Fail(ErrorKind::kUnsupported, "animated WebP images are not supported");
  }
  CheckImageDimensions(ImageFormat::kWebp, config.input.width, config.input.height, limits);

  RgbImage image;
  image.width = config.input.width;
  image.height = config.input.height;
  image.rgb.resize(size_t(image.width) * image.height * 3);
  // MODE_RGB leaves alpha out without touching the colour samples (no premultiplication).
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = image.rgb.data();
  config.output.u.RGBA.stride = image.width * 3;
  config.output.u.RGBA.size = image.rgb.size();
  WebpBufferFree guard{&config.output};
  status = WebPDecode(bytes.data(), bytes.size(), &config);
  if (status != VP8_STATUS_OK) FailWebp(status);
  if (config.output.width != image.width || config.output.height != image.height) {
    Fail(ErrorKind::kCorrupt, "corrupt WebP image: decoded size differs from the header's");
  }
  return ApplyExifOrientation(std::move(image), WebpOrientation(bytes));
}

}  // namespace tandem
