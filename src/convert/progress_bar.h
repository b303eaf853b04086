// A one-line progress bar on stderr for long conversions, drawn only on a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace tandem {

// True when stderr is a terminal (so a redrawn bar makes sense).
bool StderrIsTerminal();

// Shows "label [=====>     ]  42%  1.2 / 2.9 GiB  item". Redraws at most ten times a second.
// Not thread-safe: call from the thread that writes the output. Disabled bars do nothing.
class ProgressBar {
 public:
  ProgressBar(std::string label, uint64_t total_bytes, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `bytes` more are done; `item` names what is being worked on (e.g. a tensor).
  void Advance(uint64_t bytes, std::string_view item);
  // Draws the final state and ends the line (also done by the destructor).
  void Finish();

 private:
  void Draw(std::string_view item);

  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// "1.5 GiB", "12.0 MiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace tandem
