// The HTTP listener: an accept loop and one thread per open connection (their number bounded),
// moving requests into ServerApp::Handle and responses (whole or chunked) back out. Because every
// open connection has its own thread, /health and /metrics never wait behind generation.
// Loopback by default.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "server/server_app.h"

namespace tandem::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (see Bind)
  int max_connections = 256;         // open at once; more are answered 503 (Retry-After) and closed
  double head_timeout_seconds = 10;  // a request's head, from its first byte
  double body_timeout_seconds = 30;  // its body, from the end of the head
  double idle_timeout_seconds = 5;   // keep-alive wait for the next request
  double write_timeout_seconds = 30;
  bool access_log = true;  // one line per request on stderr
};

class HttpServer {
 public:
  // `app` must outlive the server.
  HttpServer(ServerApp& app, HttpServerOptions options);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket and returns the port. Throws Error(kIo) naming the address when
  // it cannot be bound.
  int Bind();
  // Accepts on a background thread until StopAccepting() or Stop(). Bind() first.
  void Start();
  // Closes the listening socket; open connections go on.
  void StopAccepting();
  // Waits up to `seconds` until no request is being answered (streams included); returns
  // whether that happened. Used before Stop() so streams ending at shutdown still finish.
  bool WaitIdle(double seconds);
  // Stops accepting, ends open connections (streams in progress are cut and their generation
  // cancelled) and joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tandem::server
