// libFuzzer target: arbitrary bytes as what a client sends on one connection, read by the
// server's HTTP/1.1 layer (WireConnection::ReadRequest) until it closes or refuses. The bytes
// are written into a socket pair whose client end is then shut for writing, so every read
// finds its data or the end at once. Findings: a crash, a hang, UB, a leak, a request that
// breaks the limits, or a refusal with a status the layer does not document.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "server/http_wire.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tandem::server;
  if (size > 65536) return 0;  // within one socket buffer: written before anything is read
  static const bool ignored = [] { return signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)ignored;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
  int sndbuf = 1 << 20;
  setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  for (size_t done = 0; done < size;) {
    const ssize_t n = write(fds[1], data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  shutdown(fds[1], SHUT_WR);
  WireLimits limits;
  limits.max_head_bytes = 2048;
  limits.max_headers = 16;
  limits.max_body_bytes = 4096;
  limits.idle = limits.head = limits.body = limits.write = std::chrono::milliseconds(200);
  WireConnection connection(fds[0], limits);
  for (int i = 0; i < 64; ++i) {
    HttpRequest request;
    const ReadOutcome outcome = connection.ReadRequest(request, i == 0);
    if (outcome == ReadOutcome::kClosed) break;
    if (outcome == ReadOutcome::kError) {
      const int s = connection.error_status();
      Check(s == 400 || s == 408 || s == 413 || s == 431 || s == 501);
      Check(!connection.error_message().empty());
      break;
    }
    Check(!request.method.empty() && !request.path.empty());
    Check(request.path[0] == '/' || request.path == "*");
    Check(request.body.size() <= limits.max_body_bytes);
    Check(request.headers.size() <= limits.max_headers);
    if (!connection.keep_alive()) break;
  }
  close(fds[0]);
  close(fds[1]);
  return 0;
}
