// HTTP/1.1 on one connected socket: reading a request (head and body, each within a deadline,
// so a slow or silent client cannot hold a connection) and writing a response, whole or in
// chunks. No library: every limit and timeout is ours.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "server/http_types.h"

namespace tandem::server {

using WireClock = std::chrono::steady_clock;

struct WireLimits {
  size_t max_head_bytes = 16384;  // request line and headers (else 431)
  size_t max_headers = 100;
  size_t max_body_bytes = 8u << 20;        // else 413
  std::chrono::milliseconds idle{5000};    // keep-alive: wait this long for a next request
  std::chrono::milliseconds head{10000};   // the whole head, from its first byte
  std::chrono::milliseconds body{30000};   // the whole body, from the end of the head
  std::chrono::milliseconds write{30000};  // each write (a client that stops reading)
};

// Why reading a request ended without one.
enum class ReadOutcome {
  kRequest,  // `request` holds one
  kClosed,   // the peer closed (or idled out) between requests: close quietly
  kError,    // a malformed or over-limit request: answer `error_status` and close
};

class WireConnection {
 public:
  WireConnection(int fd, WireLimits limits) : fd_(fd), limits_(limits) {}

  // Reads the next request. `first` uses the head deadline for the first byte, later requests
  // the idle timeout. On kError, error_status (400, 408, 413, 431, 501) and error_message say
  // why.
  ReadOutcome ReadRequest(HttpRequest& request, bool first);
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }
  // The client wants the connection kept open after this request.
  bool keep_alive() const { return keep_alive_; }

  // Writes a whole response (Content-Length) or, when response.stream is set, a chunked one
  // driven by the streamer. Returns false when the client went away (the connection is dead).
  bool WriteResponse(const HttpResponse& response, bool keep_alive, bool head_only);

  // True once the peer has closed its end or the socket failed (checked without blocking).
  bool PeerGone() const;

 private:
  // Waits until the socket is readable or `deadline` passes; false on timeout or stop.
  bool WaitReadable(WireClock::time_point deadline) const;
  // Appends at least one byte to buffer_ before `deadline`; false on timeout, close or error
  // (`closed_` tells them apart).
  bool Fill(WireClock::time_point deadline);
  bool ReadBody(HttpRequest& request, WireClock::time_point deadline);
  bool ReadChunked(HttpRequest& request, WireClock::time_point deadline);
  // Reads and drops `length` body bytes (a refused body) until `deadline`.
  void Discard(size_t length, WireClock::time_point deadline);
  bool SendAll(std::string_view data);
  ReadOutcome Refuse(int status, std::string message);

  int fd_;
  WireLimits limits_;
  std::string buffer_;  // bytes read but not yet consumed (pipelined requests)
  bool closed_ = false;
  bool keep_alive_ = true;
  int error_status_ = 400;
  std::string error_message_;
};

}  // namespace tandem::server
