// The two resamplers of the vision preprocessing (vision_preprocess.h picks one), both on 8-bit
// RGB and both returning 8-bit RGB, single-threaded and deterministic.
#pragma once

#include "media/rgb_image.h"

namespace tandem {

// Pillow's Image.resize((width, height), Image.BICUBIC) on an RGB image, reproduced to the byte:
// the separable bicubic convolution (a = -0.5, support 2) whose support widens by the scale
// factor when shrinking (the antialiasing), weights normalised per output pixel and turned into
// 22-bit fixed point, a horizontal pass rounded to 8 bits, then a vertical pass; a pass whose
// side does not change is skipped. The picture is stretched to exactly width x height. This is
// what transformers' processors do when they resize with PIL. Throws Error(kInvalidArgument) for
// a non-positive size.
RgbImage ResizeBicubicAntialiased(const RgbImage& image, int width, int height);

// llama.cpp's letterbox as its Gemma 4 preprocessing is described: the picture scaled by
// s = min(width / W, height / H) to (ceil(W * s), ceil(H * s)) (capped at width x height) with
// corner-aligned bilinear interpolation and no antialiasing, then centred on a black
// width x height canvas (offsets rounded down). Not checked against llama.cpp's bytes. A
// picture already width x height is returned as is. Throws Error(kInvalidArgument) for a
// non-positive size.
RgbImage ResizeBilinearLetterbox(const RgbImage& image, int width, int height);

}  // namespace tandem
