// Stop strings over streamed text: releases text as soon as it cannot be the start of a stop
// string, and reports the stop without ever releasing any part of the stop string itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tandem {

class StopStringFilter {
 public:
  explicit StopStringFilter(std::vector<std::string> stops);

  // Appends `text`; returns what may be shown now. After a stop is found, stopped() is true and
  // nothing more is returned.
  std::string Feed(std::string_view text);
  // The held-back tail at the end of generation (empty after a stop).
  std::string Flush();
  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace tandem
