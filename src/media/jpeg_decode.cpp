// JPEG with libjpeg-turbo. libjpeg reports a fatal error through the error manager's
// error_exit, which must not return; ours longjmps back to the setjmp in JpegReadHeader or
// JpegReadPixels. Those two hold no C++ object with a destructor and touch only memory owned by
// the caller's frame, so the jump skips only libjpeg's frames; the caller turns `false` into an
// Error. Nothing is printed: warnings come to JpegOnMessage, which decides what is fatal.
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstring>
#include <string>
#include <vector>

#include <jpeglib.h>
// after jpeglib.h: which messages exist depends on its configuration
#include <jerror.h>

#include "base/error.h"
#include "media/exif_orientation.h"
#include "media/format_decoders.h"

namespace tandem {
namespace {

// A progressive JPEG may hold any number of scans, each a pass over the whole picture: a few
// hundred bytes can ask for minutes of work. Real encoders write about ten.
constexpr int kMaxScans = 500;

// libjpeg hands back `pub` as cinfo->err; the rest rides behind it. Plain data only.
struct JpegErrorState {
  jpeg_error_mgr pub;
  jmp_buf jump;
  bool truncated;
  char message[JMSG_LENGTH_MAX];
};

JpegErrorState* StateOf(j_common_ptr cinfo) {
  return reinterpret_cast<JpegErrorState*>(cinfo->err);
}

[[noreturn]] void JpegJumpWithMessage(j_common_ptr cinfo) {
  JpegErrorState* state = StateOf(cinfo);
  (*cinfo->err->format_message)(cinfo, state->message);
  std::longjmp(state->jump, 1);
}

void JpegOnFatal(j_common_ptr cinfo) {
  JpegJumpWithMessage(cinfo);
}

// Level -1 is a warning about the data, >= 0 a trace message. Running out of data (libjpeg
// would fill the rest with grey) and entropy-coded data that does not decode (it would fill
// with garbage) are fatal; harmless oddities (stray bytes between markers, an unknown JFIF
// revision, a bad ICC marker) are not.
void JpegOnMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
      StateOf(cinfo)->truncated = true;
      JpegJumpWithMessage(cinfo);
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_HIT_MARKER:
    case JWRN_MUST_RESYNC:
      JpegJumpWithMessage(cinfo);
    default:
      cinfo->err->num_warnings++;
  }
}

void JpegPrintNothing(j_common_ptr) {}

void JpegOnProgress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans) {
    JpegErrorState* state = StateOf(cinfo);
    std::snprintf(state->message, sizeof state->message, "more than %d scans", kMaxScans);
    std::longjmp(state->jump, 1);
  }
}

struct JpegHeader {
  JDIMENSION width;
  JDIMENSION height;
  J_COLOR_SPACE color_space;
  int components;
};

// Creates the decompressor and reads the markers up to the first scan. No C++ objects in this
// frame (see the file comment).
bool JpegReadHeader(j_decompress_ptr cinfo, JpegErrorState* err, jpeg_progress_mgr* progress,
                    const uint8_t* data, size_t size, JpegHeader* header) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  cinfo->progress = progress;
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xffff);  // EXIF
  jpeg_read_header(cinfo, TRUE);
  header->width = cinfo->image_width;
  header->height = cinfo->image_height;
  header->color_space = cinfo->jpeg_color_space;
  header->components = cinfo->num_components;
  return true;
}

// Decodes every scanline into `rgb` (width * 3 bytes a row). With `cmyk_row` (width * 4 bytes)
// the data are read as CMYK and converted: libjpeg has no CMYK-to-RGB conversion. Adobe's
// encoders store CMYK inverted (255 = no ink), Pillow assumes they always do, and so does this:
// R = C'K'/255 rounded, where C' and K' are the stored values. No C++ objects in this frame.
bool JpegReadPixels(j_decompress_ptr cinfo, JpegErrorState* err, uint8_t* rgb, uint8_t* cmyk_row) {
  if (setjmp(err->jump)) return false;
  cinfo->out_color_space = cmyk_row ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(cinfo);
  const int components = cmyk_row ? 4 : 3;
  if (cinfo->output_components != components || cinfo->output_width != cinfo->image_width ||
      cinfo->output_height != cinfo->image_height) {
    std::snprintf(err->message, sizeof err->message, "unexpected output layout");
    std::longjmp(err->jump, 1);
  }
  const size_t stride = size_t{cinfo->output_width} * 3;
  while (cinfo->output_scanline < cinfo->output_height) {
    uint8_t* out = rgb + cinfo->output_scanline * stride;
    JSAMPROW row = cmyk_row ? cmyk_row : out;
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) {
      std::snprintf(err->message, sizeof err->message, "no scanline returned");
      std::longjmp(err->jump, 1);
    }
    if (cmyk_row) {
      for (JDIMENSION x = 0; x < cinfo->output_width; ++x) {
        const uint8_t* cmyk = cmyk_row + x * 4;
        for (int c = 0; c < 3; ++c)
          out[x * 3 + c] = static_cast<uint8_t>((cmyk[c] * cmyk[3] + 127) / 255);
      }
    }
  }
  return true;
}

struct JpegDestroyer {
  jpeg_decompress_struct* cinfo;
  ~JpegDestroyer() { jpeg_destroy_decompress(cinfo); }
};

[[noreturn]] void FailJpeg(const JpegErrorState& err) {
  if (err.truncated) Fail(ErrorKind::kCorrupt, "truncated JPEG image");
  Fail(ErrorKind::kCorrupt, std::string("corrupt JPEG image: ") + err.message);
}

// The first APP1 segment that carries EXIF ("Exif\0\0" and a TIFF structure), or empty.
std::span<const uint8_t> ExifSegment(const jpeg_decompress_struct& cinfo) {
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 &&
        std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      return {m->data, m->data_length};
    }
  }
  return {};
}

}  // namespace

RgbImage DecodeJpeg(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  jpeg_decompress_struct cinfo{};
  JpegErrorState err{};
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = JpegOnFatal;
  err.pub.emit_message = JpegOnMessage;
  err.pub.output_message = JpegPrintNothing;
  jpeg_progress_mgr progress{};
  progress.progress_monitor = JpegOnProgress;
  JpegDestroyer guard{&cinfo};

  JpegHeader header{};
  if (!JpegReadHeader(&cinfo, &err, &progress, bytes.data(), bytes.size(), &header)) {
    FailJpeg(err);
  }
  CheckImageDimensions(ImageFormat::kJpeg, header.width, header.height, limits);
  bool cmyk;
  if ((header.color_space == JCS_GRAYSCALE && header.components == 1) ||
      ((header.color_space == JCS_YCbCr || header.color_space == JCS_RGB) &&
       header.components == 3)) {
    cmyk = false;
  } else if ((header.color_space == JCS_CMYK || header.color_space == JCS_YCCK) &&
             header.components == 4) {
    cmyk = true;
  } else {
    Fail(ErrorKind::kUnsupported, "JPEG image with " + std::to_string(header.components) +
                                      " colour components of an unknown colour space");
  }
  const int orientation = ReadExifOrientation(ExifSegment(cinfo));

  RgbImage image;
  image.width = static_cast<int>(header.width);
  image.height = static_cast<int>(header.height);
  image.rgb.resize(size_t{header.width} * header.height * 3);
  std::vector<uint8_t> cmyk_row(cmyk ? size_t{header.width} * 4 : 0);
  if (!JpegReadPixels(&cinfo, &err, image.rgb.data(), cmyk ? cmyk_row.data() : nullptr)) {
    FailJpeg(err);
  }
  return ApplyExifOrientation(std::move(image), orientation);
}

}  // namespace tandem
