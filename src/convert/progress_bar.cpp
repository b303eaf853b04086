#include "convert/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tandem {

bool StderrIsTerminal() {
  return isatty(STDERR_FILENO) == 1;
}

std::string FormatBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= (uint64_t{1} << 10)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / (1 << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

ProgressBar::ProgressBar(std::string label, uint64_t total_bytes, bool enabled)
    : label_(std::move(label)), total_(std::max<uint64_t>(total_bytes, 1)), enabled_(enabled) {}

ProgressBar::~ProgressBar() {
  Finish();
}

void ProgressBar::Advance(uint64_t bytes, std::string_view item) {
  done_ = std::min(total_, done_ + bytes);
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && done_ < total_) return;
  last_draw_ = now;
  Draw(item);
}

void ProgressBar::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  done_ = total_;
  Draw("");
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void ProgressBar::Draw(std::string_view item) {
  constexpr int kWidth = 30;
  const double frac = static_cast<double>(done_) / static_cast<double>(total_);
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(kWidth, ' ');
  for (int i = 0; i < filled; ++i) bar[i] = '=';
  if (filled < kWidth) bar[filled] = '>';
  std::string name(item.substr(0, 40));
  std::fprintf(stderr, "\r%s [%s] %3d%%  %s / %s  %-40s", label_.c_str(), bar.c_str(),
               static_cast<int>(frac * 100), FormatBytes(done_).c_str(),
               FormatBytes(total_).c_str(), name.c_str());
  std::fflush(stderr);
}

}  // namespace tandem
