// A SAX pass that tracks the path and rejects the first value beyond a limit, then the parse.
#include "server/json_limits.h"

#include <string>
#include <vector>

#include "base/error.h"

namespace tandem::server {
namespace {

using Json = nlohmann::ordered_json;

class LimitScanner {
 public:
  explicit LimitScanner(const JsonLimits& limits) : limits_(limits) {}

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(Json::number_integer_t) { return Value(); }
  bool number_unsigned(Json::number_unsigned_t) { return Value(); }
  bool number_float(Json::number_float_t, const std::string&) { return Value(); }
  bool string(std::string& s) {
    if (s.size() > limits_.max_string) {
      return Reject("a string of " + std::to_string(s.size()) + " bytes (the limit is " +
                    std::to_string(limits_.max_string) + ")");
    }
    return Value();
  }
  bool binary(Json::binary_t&) { return Value(); }
  bool start_object(size_t) { return Open(false); }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    if (k.size() > limits_.max_string)
      return Reject("a key of " + std::to_string(k.size()) + " bytes");
    if (++f.count > limits_.max_object_members) {
      return Reject("an object with more than " + std::to_string(limits_.max_object_members) +
                    " members");
    }
    f.key = k;
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return Open(true); }
  bool end_array() { return Close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // the real parse reports it with its offset
  }

  const std::string& problem() const { return problem_; }

 private:
  struct Frame {
    bool array = false;
    size_t count = 0;  // elements (array) or members (object) so far
    std::string key;   // the member being read (object)
  };

  // Called before every value: counts it as an element of the enclosing array.
  bool Element() {
    if (frames_.empty() || !frames_.back().array) return true;
    Frame& f = frames_.back();
    if (++f.count > limits_.max_array) {
      return Reject("an array with more than " + std::to_string(limits_.max_array) + " elements");
    }
    return true;
  }
  bool Value() { return Element(); }
  bool Open(bool array) {
    if (!Element()) return false;
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      return Reject("nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    frames_.push_back(Frame{array, 0, {}});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return true;
  }

  // The path of the value being read: members as .name, elements as [i].
  std::string Path() const {
    std::string path;
    for (const Frame& f : frames_) {
      if (f.array) {
        path.push_back('[');
        path.append(std::to_string(f.count == 0 ? 0 : f.count - 1));
        path.push_back(']');
      } else if (f.count > 0) {
        if (!path.empty()) path.push_back('.');
        path.append(f.key);
      }
    }
    return path.empty() ? std::string("(top level)") : path;
  }

  bool Reject(const std::string& what) {
    problem_ = Path();
    problem_.append(": ");
    problem_.append(what);
    return false;
  }

  const JsonLimits& limits_;
  std::vector<Frame> frames_;
  std::string problem_;
};

}  // namespace

Json ParseBoundedJson(std::string_view text, std::string_view what, const JsonLimits& limits) {
  LimitScanner scanner(limits);
  // Limits first, before anything builds (or recursively copies) a DOM; a syntax error is
  // reported by the parse below, with its byte offset.
  (void)Json::sax_parse(text, &scanner, Json::input_format_t::json, /*strict=*/true);
  if (!scanner.problem().empty()) {
    Fail(ErrorKind::kInvalidArgument,
         std::string(what) + " is beyond the server's limits at " + scanner.problem());
  }
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    Fail(ErrorKind::kInvalidArgument, "malformed JSON in " + std::string(what) + " at byte " +
                                          std::to_string(e.byte) + ": " + e.what());
  } catch (const Json::exception& e) {  // e.g. a number too large for a double (out_of_range)
    Fail(ErrorKind::kInvalidArgument, "malformed JSON in " + std::string(what) + ": " + e.what());
  }
}

}  // namespace tandem::server
