#include "multimodal/media_prompt.h"

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

// ExpandMedia with one list, of images.
void ExpandImages(const std::vector<int32_t>& tokens, std::vector<PromptMedia> images,
                  const MediaTokens& markup, EngineRequest& request) {
  std::vector<MediaList> lists(1);
  lists[0].markup = markup;
  lists[0].items = std::move(images);
  ExpandMedia(tokens, std::move(lists), request);
}

TEST(MediaPrompt, EachPlaceholderBecomesTheMarkupAndTheImagesRows) {
  const MediaTokens markup{.open = 500, .close = 501, .placeholder = 502};
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

TEST(MediaPrompt, PlaceholdersAndImagesMustAgreeInNumber) {
  const MediaTokens markup{.open = 500, .close = 501, .placeholder = 502};
  EngineRequest request;
  EXPECT_THROW(ExpandImages({2, 502}, {}, markup, request), Error);
  EXPECT_THROW(ExpandImages({2, 9}, {Rows(3, 1)}, markup, request), Error);
  EXPECT_THROW(ExpandImages({502, 502}, {Rows(3, 1)}, markup, request), Error);
}

TEST(MediaPrompt, ImagesAndAudioTakeTheirOwnPlaceholdersInPromptOrder) {
  std::vector<MediaList> lists(2);
  lists[0].markup = {.open = 500, .close = 501, .placeholder = 502};
  lists[0].items = {Rows(2, 1)};
  lists[1].markup = {.open = 600, .close = 601, .placeholder = 602};
  lists[1].items = {Rows(3, 7), Rows(1, 8)};
  lists[1].items[0].audio = lists[1].items[1].audio = true;
  lists[1].noun = "recording";
  EngineRequest request;
  ExpandMedia({2, 602, 9, 502, 602}, lists, request);
  EXPECT_EQ(request.prompt, (std::vector<int32_t>{2, 600, 602, 602, 602, 601, 9, 500, 502, 502, 501,
                                                  600, 602, 601}));
  ASSERT_EQ(request.media.size(), 3u);
  EXPECT_EQ(request.media[0].key, 7u);
  EXPECT_EQ(request.media[0].begin, 2);
  EXPECT_TRUE(request.media[0].audio);
  EXPECT_EQ(request.media[1].key, 1u);
  EXPECT_EQ(request.media[1].begin, 8);
  EXPECT_FALSE(request.media[1].audio);
  EXPECT_EQ(request.media[2].key, 8u);
  EXPECT_EQ(request.media[2].begin, 12);
  // An audio placeholder short: the error names the audio.
  lists[1].items.push_back(Rows(1, 9));
  try {
    ExpandMedia({2, 602, 9, 502, 602}, lists, request);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the prompt has 2 recording placeholders for 3 recordings");
  }
}

}  // namespace
}  // namespace tandem
