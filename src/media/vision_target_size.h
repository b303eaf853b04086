// The size a picture is resized to before the vision encoder sees it. Both rules return sides
// that are multiples of the encoder's unit u = patch_size * pooling_kernel (16 * 3 = 48 for
// Gemma 4): each u x u block becomes one soft token, so tokens = (width / u) * (height / u).
#pragma once

namespace tandem {

struct ImageSize {
  int width = 0;
  int height = 0;
  bool operator==(const ImageSize&) const = default;
};

// transformers' rule (Gemma 4's image processor, get_aspect_ratio_preserving_size), in the same
// double-precision arithmetic: the largest aspect-preserving size of at most `budget_tokens`
// tokens, both sides rounded down to a multiple of u. Small pictures are scaled UP to fill the
// budget. A side that rounds to 0 becomes u, and the other side then
// min(floor(long / short) * u, budget_tokens * u). transformers accepts budgets 70, 140, 280,
// 560 and 1120; this function takes any budget >= 1 and throws Error(kInvalidArgument) for a
// non-positive size or a budget too small to give one u x u block.
ImageSize BudgetTargetSize(int width, int height, int budget_tokens, int patch_size = 16,
                           int pooling_kernel = 3);

// llama.cpp's rule (its mtmd preprocessor for Gemma 4, as documented, not read from its code):
// the native size with each side rounded to the nearest multiple of u (at least u); if that has
// more than max_tokens tokens, the size scaled down to max_tokens * u^2 pixels and each side
// rounded down to a multiple of u (at least u); if it has fewer than min_tokens, scaled up to
// min_tokens * u^2 pixels and each side rounded up. llama.cpp's defaults are 40..280.
// tandem's addition: the result never has more than max_tokens tokens. Two cases would: a
// picture more than max_tokens times longer than wide (its short side stays u), and rounding
// up when min_tokens is close to max_tokens; the longer side is then cut to fit.
// Throws Error(kInvalidArgument) for a non-positive size or 1 <= min_tokens <= max_tokens
// broken.
ImageSize LlamaCppTargetSize(int width, int height, int min_tokens, int max_tokens,
                             int patch_size = 16, int pooling_kernel = 3);

}  // namespace tandem
