// multipart/form-data parsing against bodies real encoders wrote: curl -F, Python's urllib3 and
// the openai npm package (checked-in seeds of fuzz_multipart, made by
// tests/fuzz/make_multipart_corpus.sh from the inputs expected here), urllib3 again at test time
// on random binary content when /usr/bin/python3 has it, and hand-written edge cases.
#include "server/multipart_form.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem::server {
namespace {

// The audio make_multipart_corpus.sh sends: CRLF, "--", NUL and 0xff inside.
const std::string kClip("RIFF\x24\x00\x00\x00WAVE\r\n--\r\n\x00\xff\r\n", 22);

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path CorpusDir() {
  return std::filesystem::path(TANDEM_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_multipart";
}

// A corpus file: the Content-Type value, "\n", the body.
struct Form {
  std::string content_type;
  std::string body;
  std::vector<FormField> fields;  // views into `body`: keep the Form alive
};

std::unique_ptr<Form> ParseFile(const std::string& name) {
  auto form = std::make_unique<Form>();
  const std::string bytes = ReadFile(CorpusDir() / name);
  const size_t eol = bytes.find('\n');
  EXPECT_NE(eol, std::string::npos) << name;
  form->content_type = bytes.substr(0, eol);
  form->body = bytes.substr(eol + 1);
  form->fields = ParseMultipartForm(form->content_type, form->body);
  return form;
}

struct Expected {
  std::string name;
  std::optional<std::string> filename;
  std::string content_type;
  std::string bytes;
};

void ExpectFields(const std::vector<FormField>& got, const std::vector<Expected>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(what + " part " + std::to_string(i));
    EXPECT_EQ(got[i].index, i);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].filename, want[i].filename);
    EXPECT_EQ(got[i].content_type, want[i].content_type);
    EXPECT_EQ(std::string(got[i].bytes), want[i].bytes);
  }
}

// The message of the Error `parse` throws ("" and a failure when it throws none).
template <typename F>
std::string ErrorOf(F parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::string ErrorOf(const std::string& content_type, const std::string& body,
                    const MultipartLimits& limits = {}) {
  return ErrorOf([&] { ParseMultipartForm(content_type, body, limits); });
}

constexpr const char* kType = "multipart/form-data; boundary=XyZ";

std::string Part(const std::string& headers, const std::string& content) {
  return "--XyZ\r\n" + headers + "\r\n" + content + "\r\n";
}

std::string Field(const std::string& name, const std::string& value) {
  return Part("Content-Disposition: form-data; name=\"" + name + "\"\r\n", value);
}

TEST(MultipartForm, CurlBody) {
  const auto form = ParseFile("curl.form");
  ExpectFields(form->fields,
               {{"file", "clip.wav", "audio/wav", kClip},
                {"model", std::nullopt, "", "whisper-1"},
                {"prompt", std::nullopt, "", "Say \"hi\""},
                {"timestamp_granularities[]", std::nullopt, "", "segment"},
                {"response_format", std::nullopt, "", "verbose_json"},
                // curl writes a quote in a filename as %22; it is kept as sent.
                {"extra", "q%22u.wav", "application/octet-stream", kClip}},
               "curl -F");
}

TEST(MultipartForm, Urllib3Body) {
  const auto form = ParseFile("urllib3.form");
  ExpectFields(form->fields,
               {{"file",
                 "gr\xC3\xBC\xC3\x9F"
                 "e %221%22.mp3",
                 "audio/mpeg", kClip},
                {"model", std::nullopt, "", "whisper-1"},
                {"language", std::nullopt, "", "de"},
                {"prompt", std::nullopt, "",
                 "Gr\xC3\xBC\xC3\x9F"
                 "e\r\nzwei Zeilen"},
                {"timestamp_granularities[]", std::nullopt, "", "segment"}},
               "urllib3");
}

TEST(MultipartForm, OpenAiPackageBodies) {
  // A File goes through Node's FormData, which writes a value's "\n" as CRLF.
  auto form = ParseFile("openai_form_data.form");
  ExpectFields(form->fields,
               {{"file", "clip.wav", "audio/wav", kClip},
                {"model", std::nullopt, "", "whisper-1"},
                {"language", std::nullopt, "", "en"},
                {"temperature", std::nullopt, "", "0.2"},
                {"response_format", std::nullopt, "", "verbose_json"},
                {"timestamp_granularities[]", std::nullopt, "", "segment"},
                {"prompt", std::nullopt, "", "Hi \"there\"\r\nnew line"}},
               "openai FormData");
  // A stream goes through the package's own encoder: the value's "\n" stays.
  form = ParseFile("openai_streaming.form");
  ExpectFields(form->fields,
               {{"file", "clip.wav", "application/octet-stream", kClip},
                {"model", std::nullopt, "", "whisper-1"},
                {"prompt", std::nullopt, "", "a\nb"},
                {"response_format", std::nullopt, "", "srt"}},
               "openai stream");
  form = ParseFile("openai_translation.form");
  ExpectFields(form->fields,
               {{"file", "clip.mp3", "application/octet-stream", kClip},
                {"model", std::nullopt, "", "whisper-1"},
                {"response_format", std::nullopt, "", "text"},
                {"temperature", std::nullopt, "", "0"}},
               "openai translation");
}

TEST(MultipartForm, HandWrittenSeeds) {
  // Quoted boundary with spaces and punctuation, preamble, transport padding, unquoted
  // parameters in any order and case, an ignored header, a delimiter's text inside content
  // (mid-line, and after a CRLF but cut short), an empty part, an epilogue.
  const auto form = ParseFile("edge_quoted_boundary.form");
  ExpectFields(form->fields,
               {{"file", "x.wav", "", "data --a (b):c=d? mid-line\r\n--a (b):c=d\r\n"},
                {"empty", std::nullopt, "", ""}},
               "edge");
  EXPECT_NE(ErrorOf([] { ParseFile("bad_bare_lf.form"); }).find("bare LF"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseFile("bad_no_close.form"); }).find("part 0 at byte 5"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseFile("bad_no_disposition.form"); }).find("no Content-Disposition"),
            std::string::npos);
}

TEST(MultipartForm, ViewsPointIntoTheBody) {
  const std::string body = Field("a", "one") + Field("b", "") + "--XyZ--";
  const std::vector<FormField> f = ParseMultipartForm(kType, body);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].bytes.data(), body.data() + f[0].offset);
  EXPECT_EQ(body.substr(f[0].offset, 3), "one");
  EXPECT_EQ(f[1].bytes.size(), 0u);
  EXPECT_EQ(f[1].bytes.data(), body.data() + f[1].offset);
  // No content at all: the CRLF after the headers opens the delimiter (RFC 2046's grammar).
  const std::string bare =
      "--XyZ\r\nContent-Disposition: form-data; name=c\r\n\r\n" + Field("d", "x") + "--XyZ--";
  const std::vector<FormField> g = ParseMultipartForm(kType, bare);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "c");
  EXPECT_EQ(g[0].bytes, "");
  EXPECT_EQ(g[0].offset, 47u);  // where the delimiter starts
  EXPECT_EQ(g[1].name, "d");
  EXPECT_EQ(g[1].bytes, "x");
}

// urllib3 at test time: random binary content (dense in CR, LF and '-') and odd names.
TEST(MultipartForm, Urllib3RandomBodies) {
  if (std::system("/usr/bin/python3 -c 'import urllib3' 2>/dev/null") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 with urllib3 (Debian python3-urllib3) is not installed";
  }
  std::mt19937 rng(7);
  const char alphabet[] =
      "\r\n-\0\xff"
      "ab";
  for (int round = 0; round < 4; ++round) {
    std::string content(size_t(1000 + round * 3000), '\0');
    for (char& c : content) c = alphabet[rng() % (sizeof alphabet - 1)];
    const std::string dir = ::testing::TempDir();
    const std::string in = dir + "/tandem_multipart_in.bin";
    const std::string out = dir + "/tandem_multipart_out.form";
    std::ofstream(in, std::ios::binary) << content;
    const std::string script =
        "import sys\n"
        "from urllib3 import encode_multipart_formdata\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "body, ct = encode_multipart_formdata([\n"
        "    ('file', ('a b.wav', data, 'audio/wav')), ('x[]', '1'), ('x[]', '\\u00e9'),\n"
        "    ('blob', ('', data[:7], 'application/octet-stream')), ('empty', '')])\n"
        "open(sys.argv[2], 'wb').write(ct.encode() + b'\\n' + body)\n";
    const std::string py = dir + "/tandem_multipart.py";
    std::ofstream(py) << script;
    ASSERT_EQ(std::system(("/usr/bin/python3 " + py + " " + in + " " + out).c_str()), 0);
    const std::string bytes = ReadFile(out);
    const size_t eol = bytes.find('\n');
    const std::string body = bytes.substr(eol + 1);
    ExpectFields(ParseMultipartForm(bytes.substr(0, eol), body),
                 {{"file", "a b.wav", "audio/wav", content},
                  {"x[]", std::nullopt, "", "1"},
                  {"x[]", std::nullopt, "", "\xC3\xA9"},
                  {"blob", "", "application/octet-stream", content.substr(0, 7)},
                  {"empty", std::nullopt, "", ""}},
                 "urllib3 round " + std::to_string(round));
  }
}

TEST(MultipartForm, BoundaryFromContentType) {
  EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(MultipartBoundary("MULTIPART/FORM-DATA;BOUNDARY=\"a b\";charset=x"), "a b");
  EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=\"q\\x\""), "qx");
  EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=" + std::string(70, 'z')),
            std::string(70, 'z'));
  EXPECT_NE(ErrorOf([] { MultipartBoundary(""); }).find("no Content-Type"), std::string::npos);
  EXPECT_NE(
      ErrorOf([] { MultipartBoundary("application/json"); }).find("expected multipart/form-data"),
      std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/mixed; boundary=a");
            }).find("expected multipart/form-data"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { MultipartBoundary("multipart/form-data"); }).find("without a boundary"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/form-data; boundary=a; boundary=b");
            }).find("twice"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([] { MultipartBoundary("multipart/form-data; boundary=\"\""); }).find("1 to 70"),
      std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/form-data; boundary=" + std::string(71, 'z'));
            }).find("a boundary of 71 characters"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/form-data; boundary=a\"b");
            }).find("does not allow"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/form-data; boundary=\"ab \"");
            }).find("ends with a space"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([] { MultipartBoundary("multipart/form-data; boundary=\"ab"); }).find("does not end"),
      std::string::npos);
  EXPECT_NE(ErrorOf([] { MultipartBoundary("multipart/form-data; boundary"); }).find("no value"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              MultipartBoundary("multipart/form-data x; boundary=a");
            }).find("expected multipart/form-data"),
            std::string::npos);
}

TEST(MultipartForm, FramingErrorsNameTheirPlace) {
  EXPECT_TRUE(ParseMultipartForm(kType, "--XyZ--").empty());
  EXPECT_TRUE(ParseMultipartForm(kType, "preamble\r\n--XyZ--\r\n").empty());
  EXPECT_NE(ErrorOf(kType, "").find("no delimiter --XyZ"), std::string::npos);
  EXPECT_NE(ErrorOf(kType, "--XyY\r\n").find("no delimiter"), std::string::npos);
  // A delimiter not at the start of a line is no delimiter.
  EXPECT_NE(ErrorOf(kType, "x--XyZ--").find("no delimiter"), std::string::npos);
  EXPECT_NE(ErrorOf(kType, "--XyZ")
                .find("delimiter at byte 0: the body ends without the "
                      "closing delimiter --XyZ--"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kType, Field("a", "1") + "--XyZ  ").find("delimiter at byte 54"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kType, "--XyZz\r\n").find("followed by 'z"), std::string::npos);
  EXPECT_NE(ErrorOf(kType, "--XyZ\n").find("a bare LF"), std::string::npos);
  EXPECT_NE(ErrorOf(kType, Field("a", "1").substr(0, 40)).find("the body ends inside the part's"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kType, Field("a", "1")).find("part 0 at byte 7: the body ends inside this"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kType, Field("a", "1") + Field("b", "2"))
                .find("part 1 at byte 61: the body ends inside"),
            std::string::npos);
}

TEST(MultipartForm, HeaderErrors) {
  const auto error = [](const std::string& headers) {
    return ErrorOf(kType, Part(headers, "v") + "--XyZ--");
  };
  EXPECT_NE(error("").find("part 0 at byte 7: no Content-Disposition"), std::string::npos);
  EXPECT_NE(error("Content-Type: text/plain\r\n").find("no Content-Disposition"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition form-data\r\n").find("header line at byte 7: no ':'"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a\r\nX-A: b\r\n c\r\n").find("folded"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a\nX: y\r\n").find("control character"),
            std::string::npos);
  EXPECT_NE(error(": x\r\nContent-Disposition: form-data; name=a\r\n").find("header name"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: attachment; name=a\r\n").find("expected form-data"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data\r\n").find("no name parameter"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; filename=\"a\"\r\n").find("no name parameter"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\"\"\r\n").find("empty field name"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a; NAME=b\r\n").find("two name"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a; filename=b; filename=c\r\n")
                .find("two filename"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\"a\r\n").find("does not end"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a b\r\n").find("expected ';'"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a\r\n"
                  "Content-Disposition: form-data; name=b\r\n")
                .find("Content-Disposition given twice"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a\r\nContent-Type: a\r\n"
                  "Content-Type: b\r\n")
                .find("Content-Type given twice"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=a\r\n"
                  "Content-Transfer-Encoding: base64\r\n")
                .find("Content-Transfer-Encoding 'base64' is not supported"),
            std::string::npos);
  // What is accepted around those: 7bit/8bit, filename* ignored, a trailing ';', spaces.
  const std::string ok = Part(
      "Content-Disposition:form-data ;name = \"a\\\\b\" ;filename*=UTF-8''x; \r\n"
      "content-transfer-encoding: 8BIT\r\ncontent-type:  text/plain; charset=utf-8 \r\n",
      "v");
  const std::vector<FormField> f = ParseMultipartForm(kType, ok + "--XyZ--");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].name, "a\\b");
  EXPECT_FALSE(f[0].filename);
  EXPECT_EQ(f[0].content_type, "text/plain; charset=utf-8");
}

TEST(MultipartForm, Limits) {
  MultipartLimits limits;
  limits.max_parts = 2;
  const std::string two = Field("a", "1") + Field("b", "2");
  EXPECT_EQ(ParseMultipartForm(kType, two + "--XyZ--", limits).size(), 2u);
  EXPECT_NE(ErrorOf(kType, two + Field("c", "3") + "--XyZ--", limits)
                .find("more than 2 parts (part 2 at byte 115)"),
            std::string::npos);

  limits = {};
  limits.max_name_bytes = 4;
  EXPECT_EQ(ParseMultipartForm(kType, Field("abcd", "1") + "--XyZ--", limits).size(), 1u);
  EXPECT_NE(ErrorOf(kType, Field("abcde", "1") + "--XyZ--", limits).find("longer than 4 bytes"),
            std::string::npos);

  // The header limit counts the header lines and the blank line, CRLFs included.
  const std::string headers = "Content-Disposition: form-data; name=\"a\"\r\n";
  limits = {};
  limits.max_header_bytes = headers.size() + 2;
  EXPECT_EQ(ParseMultipartForm(kType, Part(headers, "1") + "--XyZ--", limits).size(), 1u);
  limits.max_header_bytes = headers.size() + 1;
  EXPECT_NE(ErrorOf(kType, Part(headers, "1") + "--XyZ--", limits)
                .find("part 0 at byte 7: headers longer than"),
            std::string::npos);

  limits = {};
  const std::string body = Field("a", "1") + "--XyZ--";
  limits.max_body_bytes = body.size();
  EXPECT_EQ(ParseMultipartForm(kType, body, limits).size(), 1u);
  limits.max_body_bytes = body.size() - 1;
  EXPECT_NE(ErrorOf(kType, body, limits).find("body of 61 bytes (the limit is 60)"),
            std::string::npos);
}

// Content made of near-delimiters: CRLF "--" and all of the boundary but its last character,
// over and over. A search that restarts or backtracks far would take far longer than this.
TEST(MultipartForm, AdversarialContentIsLinear) {
  const std::string boundary(70, 'b');
  const std::string type = "multipart/form-data; boundary=" + boundary;
  const std::string near = "\r\n--" + boundary.substr(0, 69) + "c";
  std::string content;
  while (content.size() < (16u << 20)) content += near;
  const std::string body = "--" + boundary + "\r\nContent-Disposition: form-data; name=f\r\n\r\n" +
                           content + "\r\n--" + boundary + "--";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<FormField> f = ParseMultipartForm(type, body);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].bytes.size(), content.size());
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace tandem::server
