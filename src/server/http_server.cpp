// cpp-httplib adapter: catch-all routes into ServerApp, chunked streaming, error bodies for the
// statuses httplib answers itself.
#include "server/http_server.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <thread>

#include "base/error.h"

namespace tandem::server {

struct HttpServer::Impl {
  ServerApp& app;
  HttpServerOptions options;
  httplib::Server server;
  std::thread thread;
  bool bound = false;
  std::atomic<int> in_flight{0};  // requests between handler entry and their last byte

  Impl(ServerApp& a, HttpServerOptions o) : app(a), options(std::move(o)) {}

  void Serve(const httplib::Request& req, httplib::Response& res) {
    ++in_flight;
    try {
      ServeCounted(req, res);
    } catch (...) {
      --in_flight;
      throw;
    }
  }

  // Serve without the in-flight bookkeeping; a streamed response stays in flight until its
  // releaser runs.
  void ServeCounted(const httplib::Request& req, httplib::Response& res) {
    HttpRequest request;
    request.method = req.method;
    request.path = req.path;
    request.body = req.body;
    for (const auto& [name, value] : req.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers.emplace(std::move(lower), value);
    }
    HttpResponse response = app.Handle(request);
    res.status = response.status;
    for (const auto& [name, value] : response.headers) res.set_header(name, value);
    if (!response.stream) {
      res.set_content(response.body, response.content_type);
      --in_flight;
      return;
    }
    auto streamer = std::make_shared<BodyStreamer>(std::move(response.stream));
    res.set_chunked_content_provider(
        response.content_type,
        [streamer](size_t, httplib::DataSink& sink) {
          if (!*streamer) return false;
          bool failed = false;
          const ChunkWriter write = [&](std::string_view chunk) {
            if (failed) return false;
            if (!sink.write(chunk.data(), chunk.size())) failed = true;
            return !failed;
          };
          const bool more = (*streamer)(write);
          if (failed) return false;
          if (!more) sink.done();
          return true;
        },
        // Runs when the stream ends either way: dropping the streamer releases the generation
        // (cancelling it if the client left early).
        [this, streamer](bool) {
          *streamer = nullptr;
          --in_flight;
        });
  }
};

HttpServer::HttpServer(ServerApp& app, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {
  ::signal(SIGPIPE, SIG_IGN);
  httplib::Server& s = impl_->server;
  const int threads = impl_->options.threads > 0 ? impl_->options.threads : 32;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_payload_max_length(app.max_body_bytes());
  s.set_read_timeout(impl_->options.read_timeout_seconds, 0);
  s.set_write_timeout(impl_->options.write_timeout_seconds, 0);
  s.set_keep_alive_max_count(1000);
  s.set_keep_alive_timeout(5);
  Impl* impl = impl_.get();
  auto handler = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->Serve(req, res);
  };
  s.Get(".*", handler);
  s.Post(".*", handler);
  s.Put(".*", handler);
  s.Patch(".*", handler);
  s.Delete(".*", handler);
  s.Options(".*", handler);
  // Statuses httplib sets itself (413 body too large, 400 bad request line, ...) get a JSON
  // body; responses the app built already have theirs.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return;
    const std::string message = res.status == 413   ? "the request body is too large"
                                : res.status == 414 ? "the request URI is too long"
                                : res.status == 404
                                    ? "unknown route: " + req.method + " " + req.path
                                    : "bad request (HTTP " + std::to_string(res.status) + ")";
    HttpResponse r = ServerApp::ErrorResponse(req.path, res.status, message);
    res.set_content(r.body, r.content_type);
  });
  s.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
        HttpResponse r = ServerApp::ErrorResponse(req.path, 500, "internal error");
        res.status = 500;
        res.set_content(r.body, r.content_type);
      });
  s.set_logger([impl](const httplib::Request&, const httplib::Response& res) {
    impl->app.CountResponse(res.status);
  });
}

HttpServer::~HttpServer() {
  Stop();
}

int HttpServer::Bind() {
  Impl& impl = *impl_;
  const std::string where = impl.options.host + ":" + std::to_string(impl.options.port);
  int port = impl.options.port;
  if (port == 0) {
    port = impl.server.bind_to_any_port(impl.options.host);
    if (port <= 0) Fail(ErrorKind::kIo, "cannot listen on " + where);
  } else if (!impl.server.bind_to_port(impl.options.host, port)) {
    Fail(ErrorKind::kIo, "cannot listen on " + where + " (address in use or not local?)");
  }
  impl.bound = true;
  return port;
}

void HttpServer::Start() {
  if (!impl_->bound) Fail(ErrorKind::kInternal, "HttpServer::Start before Bind");
  impl_->thread = std::thread([impl = impl_.get()] { impl->server.listen_after_bind(); });
}

bool HttpServer::WaitIdle(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (impl_->in_flight.load() > 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void HttpServer::Stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace tandem::server
