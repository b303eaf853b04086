// Accept loop, bounded connection threads, request ids and the access log.
#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "server/http_wire.h"
#include "server/ids.h"

namespace tandem::server {
namespace {

std::chrono::milliseconds Ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

// A client-sent X-Request-Id is kept when it is short and plain; else a fresh one is made.
std::string RequestId(const HttpRequest& request) {
  const std::string given = request.Header("x-request-id");
  const bool plain = !given.empty() && given.size() <= 128 &&
                     given.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789-_.:") == std::string::npos;
  return plain ? given : RandomId("req-");
}

}  // namespace

struct HttpServer::Impl {
  ServerApp& app;
  HttpServerOptions options;
  WireLimits limits;
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};  // written to stop the accept loop
  std::thread acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};  // requests between their head and their last byte

  std::mutex mu;
  std::condition_variable all_closed;
  std::set<int> open_fds;  // GUARDED_BY(mu)
  int threads = 0;         // GUARDED_BY(mu): connection threads still running

  Impl(ServerApp& a, HttpServerOptions o) : app(a), options(std::move(o)) {
    limits.max_body_bytes = app.max_body_bytes();
    limits.head = Ms(options.head_timeout_seconds);
    limits.body = Ms(options.body_timeout_seconds);
    limits.idle = Ms(options.idle_timeout_seconds);
    limits.write = Ms(options.write_timeout_seconds);
  }

  void AcceptLoop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
      const int r = ::poll(fds, 2, -1);
      if (stopping.load() || (fds[1].revents & POLLIN)) return;
      if (r < 0) {
        if (errno == EINTR) continue;
        LogError(std::string("tandem serve: poll on the listening socket failed: ") +
                 std::strerror(errno));
        return;
      }
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) {  // out of descriptors: back off a little
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        continue;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::unique_lock<std::mutex> lock(mu);
      if (static_cast<int>(open_fds.size()) >= options.max_connections) {
        lock.unlock();
        RefuseConnection(fd);
        continue;
      }
      open_fds.insert(fd);
      ++threads;
      lock.unlock();
      std::thread([this, fd] { Connection(fd); }).detach();
    }
  }

  // Over the connection limit: a short 503 without reading the request, then close.
  void RefuseConnection(int fd) {
    app.CountResponse(503);
    HttpResponse r = ServerApp::ErrorResponse(
        "/", 503,
        "too many open connections (" + std::to_string(options.max_connections) + "); retry");
    r.headers.emplace_back("Retry-After", "1");
    WireLimits quick = limits;
    quick.write = std::chrono::milliseconds(100);
    WireConnection(fd, quick).WriteResponse(r, false, false);
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

  void Connection(int fd) {
    WireConnection wire(fd, limits);
    for (bool first = true; !stopping.load(); first = false) {
      HttpRequest request;
      const ReadOutcome outcome = wire.ReadRequest(request, first);
      if (outcome == ReadOutcome::kClosed) break;
      const auto t0 = WireClock::now();
      ++in_flight;
      HttpResponse response;
      bool keep_alive = false;
      std::string id;
      if (outcome == ReadOutcome::kError) {
        id = RandomId("req-");
        response =
            ServerApp::ErrorResponse(request.path, wire.error_status(), wire.error_message());
      } else {
        id = RequestId(request);
        request.headers["x-request-id"] = id;
        request.client_gone = [&wire] { return wire.PeerGone(); };
        response = app.Handle(request);
        keep_alive = wire.keep_alive() && !stopping.load();
      }
      response.headers.emplace_back("X-Request-Id", id);
      const bool sent = wire.WriteResponse(response, keep_alive, request.method == "HEAD");
      const int status = response.status;
      app.CountResponse(status);
      const int tokens = response.tokens ? response.tokens() : -1;
      response = HttpResponse();  // releases a stream's generation now
      --in_flight;
      if (options.access_log) {
        const double ms = std::chrono::duration<double, std::milli>(WireClock::now() - t0).count();
        char line[512];
        std::snprintf(line, sizeof line, "access id=%s %s %s status=%d tokens=%d ms=%.1f%s",
                      id.c_str(), request.method.empty() ? "-" : request.method.c_str(),
                      request.path.empty() ? "-" : request.path.substr(0, 128).c_str(), status,
                      tokens, ms, sent ? "" : " client_gone");
        LogInfo(line);
      }
      if (!sent || !keep_alive) break;
    }
    std::lock_guard<std::mutex> lock(mu);
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    open_fds.erase(fd);
    --threads;
    all_closed.notify_all();
  }
};

HttpServer::HttpServer(ServerApp& app, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {
  if (impl_->options.max_connections < 1) {
    Fail(ErrorKind::kInvalidArgument, "the connection limit must be >= 1");
  }
}

HttpServer::~HttpServer() {
  Stop();
}

int HttpServer::Bind() {
  Impl& impl = *impl_;
  const std::string where = impl.options.host + ":" + std::to_string(impl.options.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(impl.options.port);
  if (::getaddrinfo(impl.options.host.c_str(), port_text.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    Fail(ErrorKind::kIo, "cannot listen on " + where + ": the address does not resolve");
  }
  int fd = -1;
  std::string why;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 512) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) Fail(ErrorKind::kIo, "cannot listen on " + where + ": " + why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const int port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(impl.wake_pipe, O_CLOEXEC) != 0) {
    ::close(fd);
    Fail(ErrorKind::kIo, "cannot create the server's wake-up pipe");
  }
  impl.listen_fd = fd;
  return port;
}

void HttpServer::Start() {
  if (impl_->listen_fd < 0) Fail(ErrorKind::kInternal, "HttpServer::Start before Bind");
  impl_->acceptor = std::thread([impl = impl_.get()] { impl->AcceptLoop(); });
}

void HttpServer::StopAccepting() {
  Impl& impl = *impl_;
  if (impl.wake_pipe[1] >= 0) {
    const char c = 1;
    (void)!::write(impl.wake_pipe[1], &c, 1);
  }
  if (impl.acceptor.joinable()) impl.acceptor.join();
  if (impl.listen_fd >= 0) {
    ::close(impl.listen_fd);
    impl.listen_fd = -1;
  }
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
  Impl& impl = *impl_;
  StopAccepting();
  impl.stopping.store(true);
  std::unique_lock<std::mutex> lock(impl.mu);
  // Wakes every connection thread blocked in a read or write; each closes its own socket.
  for (int fd : impl.open_fds) ::shutdown(fd, SHUT_RDWR);
  impl.all_closed.wait(lock, [&] { return impl.threads == 0; });
  lock.unlock();
  for (int& p : impl.wake_pipe) {
    if (p >= 0) ::close(p);
    p = -1;
  }
}

}  // namespace tandem::server
