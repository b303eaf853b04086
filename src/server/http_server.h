// The HTTP listener: cpp-httplib behind a pimpl, moving requests into ServerApp::Handle and its
// responses (whole or streamed in chunks) back out. Loopback by default.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "server/server_app.h"

namespace tandem::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;   // 0: any free port (see Bind)
  int threads = 32;  // connection threads (each open connection holds one)
  int read_timeout_seconds = 30;
  int write_timeout_seconds = 30;
};

class HttpServer {
 public:
  // `app` must outlive the server. Ignores SIGPIPE for the process (a vanished client must
  // surface as a failed write, not kill the server).
  HttpServer(ServerApp& app, HttpServerOptions options);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket and returns the port. Throws Error(kIo) naming the address when
  // it cannot be bound.
  int Bind();
  // Serves on a background thread until Stop(). Bind() first.
  void Start();
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
