// Which image container a byte string holds, told by its magic bytes, and whether a media type
// claimed for it (a data URL's, an API field's) agrees.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tandem {

enum class ImageFormat { kPng, kJpeg, kWebp };

// "PNG", "JPEG", "WebP": for messages.
const char* ImageFormatName(ImageFormat format);

// The canonical media type: "image/png", "image/jpeg", "image/webp".
const char* ImageFormatMediaType(ImageFormat format);

// PNG (the 8-byte signature), JPEG (FF D8 FF) or WebP ("RIFF" <size> "WEBP"). Anything else,
// including too few bytes to tell, throws Error(kInvalidArgument) "not a PNG, JPEG or WebP image".
ImageFormat SniffImageFormat(std::span<const uint8_t> bytes);

// The format a media type names, or nullopt. Case-insensitive, parameters after ';' ignored;
// "image/jpg" (common, though not registered) is taken as JPEG.
std::optional<ImageFormat> ImageFormatForMediaType(std::string_view mime);

// Throws unless `mime` names the format the bytes were sniffed as:
//  - an image type tandem does not decode (image/gif, ...): Error(kUnsupported);
//  - a type that is not an image type, or an empty one: Error(kInvalidArgument);
//  - a supported type that disagrees with the bytes: Error(kInvalidArgument)
//    "media type image/png does not match the JPEG data".
void CheckClaimedMediaType(const std::string& mime, ImageFormat sniffed);

}  // namespace tandem
