// PNG with libpng's sequential reader. libpng reports errors by longjmp to a setjmp the
// caller owns; the two functions that call setjmp (PngReadHeader, PngReadPixels) hold no C++
// object with a destructor, and everything they touch lives in the caller's frame, so a longjmp
// skips only libpng's own frames. Their failure comes back as `false` with the message in
// PngState, and the C++ caller turns it into an Error.
#include <png.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "media/exif_orientation.h"
#include "media/format_decoders.h"

namespace tandem {
namespace {

// Shared with libpng's callbacks through the error and I/O pointers. Plain data only.
struct PngState {
  const uint8_t* data;
  size_t size;
  size_t offset;
  bool truncated;
  char message[256];
};

// IHDR fields, as libpng reports them.
struct PngHeader {
  png_uint_32 width;
  png_uint_32 height;
  int bit_depth;
  int color_type;
};

void PngOnError(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof state->message, "%s", message ? message : "unknown error");
  png_longjmp(png, 1);
}

// Warnings (a bad ancillary CRC, say) do not stop decoding; libpng's default prints them.
void PngOnWarning(png_structp, png_const_charp) {}

void PngReadBytes(png_structp png, png_bytep out, size_t n) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  if (n > state->size - state->offset) {
    state->truncated = true;
    png_error(png, "unexpected end of data");
  }
  std::memcpy(out, state->data + state->offset, n);
  state->offset += n;
}

// Reads the chunks before the first IDAT. No C++ objects in this frame (see the file comment).
bool PngReadHeader(png_structp png, png_infop info, PngHeader* header) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  int interlace = 0;
  png_get_IHDR(png, info, &header->width, &header->height, &header->bit_depth, &header->color_type,
               &interlace, nullptr, nullptr);
  return true;
}

// Sets the transforms to 8-bit RGB and reads every row. No C++ objects in this frame.
bool PngReadPixels(png_structp png, png_infop info, const PngHeader* header, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  int color_type = header->color_type;
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && header->bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(png);
  }
  if (header->bit_depth == 16) png_set_strip_16(png);  // the high byte, as Pillow keeps it
  png_set_strip_alpha(png);                            // dropped, not composited
  if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
    png_set_gray_to_rgb(png);
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != size_t{header->width} * 3) {
    png_error(png, "unexpected row layout after conversion to 8-bit RGB");
  }
  png_read_image(png, rows);
  return true;
}

struct PngReadDeleter {
  png_structp png;
  png_infop info;
  ~PngReadDeleter() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

[[noreturn]] void FailPng(const PngState& state) {
  if (state.truncated) Fail(ErrorKind::kCorrupt, "truncated PNG image");
  Fail(ErrorKind::kCorrupt, std::string("corrupt PNG image: ") + state.message);
}

}  // namespace

RgbImage DecodePng(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  PngState state{bytes.data(), bytes.size(), 0, false, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, PngOnError, PngOnWarning);
  if (!png) Fail(ErrorKind::kInternal, "libpng could not create a reader");
  PngReadDeleter guard{png, nullptr};
  guard.info = png_create_info_struct(png);
  if (!guard.info) Fail(ErrorKind::kInternal, "libpng could not create a reader");
  png_set_read_fn(png, &state, PngReadBytes);
  // Only IHDR, PLTE, tRNS, eXIf, IDAT and IEND are processed: text, ICC, gamma and the rest
  // are skipped unread (nothing of them changes the pixels tandem wants, and compressed text or
  // profiles are work an attacker chooses). eXIf before the image data gives the orientation;
  // one after it is not read (the pixels come first and the file's tail is not parsed).
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
  static constexpr png_byte kExif[5] = {'e', 'X', 'I', 'f', 0};
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_AS_DEFAULT, kExif, 1);
  png_set_chunk_malloc_max(png, size_t{8} << 20);

  PngHeader header{};
  if (!PngReadHeader(png, guard.info, &header)) FailPng(state);
  CheckImageDimensions(ImageFormat::kPng, header.width, header.height, limits);

  RgbImage image;
  image.width = static_cast<int>(header.width);
  image.height = static_cast<int>(header.height);
  image.rgb.resize(size_t{header.width} * header.height * 3);
  std::vector<png_bytep> rows(header.height);
  for (png_uint_32 y = 0; y < header.height; ++y) {
    rows[y] = image.rgb.data() + size_t{y} * header.width * 3;
  }
  if (!PngReadPixels(png, guard.info, &header, rows.data())) FailPng(state);
  png_bytep exif = nullptr;
  png_uint_32 exif_size = 0;
  if (png_get_eXIf_1(png, guard.info, &exif_size, &exif) != 0 && exif != nullptr) {
    return ApplyExifOrientation(std::move(image), ReadTiffExifOrientation({exif, exif_size}));
  }
  return image;
}

}  // namespace tandem
