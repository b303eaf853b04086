// The chat page's files (src/server/web/), embedded at build time by embed_web_assets.cmake.
#pragma once

#include <cstddef>
#include <string_view>

namespace tandem::server {

struct WebAsset {
  const char* name;          // file name in src/server/web/, e.g. "index.html"
  const char* content_type;  // from the extension
  std::string_view body;
};

extern const WebAsset kWebAssets[];
extern const size_t kWebAssetCount;

}  // namespace tandem::server
