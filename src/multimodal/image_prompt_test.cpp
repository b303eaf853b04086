#include "multimodal/image_prompt.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tandem {
namespace {

PromptMedia Rows(int count, uint64_t key) {
  PromptMedia m;
  m.count = count;
  m.key = key;
  m.embeddings = std::make_shared<const std::vector<float>>(count * 4, 0.5f);
  return m;
}

TEST(ImagePrompt, EachPlaceholderBecomesTheMarkupAndTheImagesRows) {
  const ImageTokens markup{.open = 500, .close = 501, .placeholder = 502};
  EngineRequest request;
  ExpandImages({2, 9, 502, 10, 502, 11}, {Rows(3, 1), Rows(2, 2)}, markup, request);
  EXPECT_EQ(request.prompt,
            (std::vector<int32_t>{2, 9, 500, 502, 502, 502, 501, 10, 500, 502, 502, 501, 11}));
  ASSERT_EQ(request.media.size(), 2u);
  EXPECT_EQ(request.media[0].begin, 3);
  EXPECT_EQ(request.media[0].count, 3);
  EXPECT_EQ(request.media[1].begin, 9);
  EXPECT_EQ(request.media[1].key, 2u);
}

TEST(ImagePrompt, PlaceholdersAndImagesMustAgreeInNumber) {
  const ImageTokens markup{.open = 500, .close = 501, .placeholder = 502};
  EngineRequest request;
  EXPECT_THROW(ExpandImages({2, 502}, {}, markup, request), Error);
  EXPECT_THROW(ExpandImages({2, 9}, {Rows(3, 1)}, markup, request), Error);
  EXPECT_THROW(ExpandImages({502, 502}, {Rows(3, 1)}, markup, request), Error);
}

}  // namespace
}  // namespace tandem
