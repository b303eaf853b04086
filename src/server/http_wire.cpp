// HTTP/1.1 request reading and response writing over a blocking socket driven by poll().
#include "server/http_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tandem::server {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

int RemainingMs(WireClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - WireClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

const char* Reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

constexpr size_t kMaxDrainedBody = 64u << 20;

std::string Hex(size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[n % 16]);
    n /= 16;
  } while (n > 0);
  return s;
}

}  // namespace

bool WireConnection::WaitReadable(WireClock::time_point deadline) const {
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool WireConnection::Fill(WireClock::time_point deadline) {
  if (!WaitReadable(deadline)) return false;
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    closed_ = true;
    return false;
  }
}

bool WireConnection::PeerGone() const {
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  char c;
  const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

ReadOutcome WireConnection::Refuse(int status, std::string message) {
  error_status_ = status;
  error_message_ = std::move(message);
  keep_alive_ = false;
  return ReadOutcome::kError;
}

ReadOutcome WireConnection::ReadRequest(HttpRequest& request, bool first) {
  // Wait for the first byte (idle keep-alive or a new connection), then the whole head.
  const auto wait_first = WireClock::now() + (first ? limits_.head : limits_.idle);
  if (buffer_.empty() && !Fill(wait_first)) return ReadOutcome::kClosed;
  const auto head_deadline = WireClock::now() + limits_.head;
  size_t end = 0;
  for (;;) {
    end = buffer_.find("\r\n\r\n");
    if (end != std::string::npos) break;
    if (buffer_.size() > limits_.max_head_bytes) {
      return Refuse(431, "the request head is larger than " +
                             std::to_string(limits_.max_head_bytes) + " bytes");
    }
    if (!Fill(head_deadline)) {
      if (closed_) return ReadOutcome::kClosed;
      return Refuse(408, "the request head did not arrive in time");
    }
  }
  if (end > limits_.max_head_bytes) {
    return Refuse(431, "the request head is larger than " + std::to_string(limits_.max_head_bytes) +
                           " bytes");
  }
  const std::string head = buffer_.substr(0, end + 2);
  buffer_.erase(0, end + 4);

  size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) return Refuse(400, "malformed request line");
  request = HttpRequest();
  request.method = line.substr(0, sp1);
  // A method is a token (RFC 9110 5.6.2): letters, digits and !#$%&'*+-.^_`|~.
  const bool token =
      !request.method.empty() &&
      std::all_of(request.method.begin(), request.method.end(), [](unsigned char c) {
        return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string::npos;
      });
  if (!token) return Refuse(400, "malformed request line");
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Refuse(400, "unsupported HTTP version '" + version.substr(0, 16) + "'");
  }
  if (target.empty() || (target[0] != '/' && target != "*")) {
    return Refuse(400, "malformed request target");
  }
  request.path = target.substr(0, target.find('?'));
  if (const size_t q = target.find('?'); q != std::string::npos)
    request.query = target.substr(q + 1);

  size_t pos = line_end + 2;
  while (pos < head.size()) {
    const size_t next = head.find("\r\n", pos);
    const std::string h = head.substr(pos, next - pos);
    pos = next + 2;
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0 || h[0] == ' ' || h[0] == '\t') {
      return Refuse(400, "malformed header line");
    }
    if (request.headers.size() >= limits_.max_headers) {
      return Refuse(431, "more than " + std::to_string(limits_.max_headers) + " headers");
    }
    std::string name = Lower(h.substr(0, colon));
    std::string value = Trim(std::string_view(h).substr(colon + 1));
    auto [it, inserted] = request.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;  // repeated headers join (RFC 9110 5.3)
  }
  const std::string connection = Lower(request.Header("connection"));
  keep_alive_ = version == "HTTP/1.1" ? connection.find("close") == std::string::npos
                                      : connection.find("keep-alive") != std::string::npos;
  if (!ReadBody(request, WireClock::now() + limits_.body)) {
    if (error_message_.empty()) return Refuse(408, "the request body did not arrive in time");
    return ReadOutcome::kError;
  }
  return ReadOutcome::kRequest;
}

bool WireConnection::ReadBody(HttpRequest& request, WireClock::time_point deadline) {
  const std::string te = Lower(request.Header("transfer-encoding"));
  const std::string cl = request.Header("content-length");
  if (!te.empty() && te != "chunked") {
    Refuse(501, "transfer-encoding '" + te + "' is not supported");
    return false;
  }
  if (!te.empty() && !cl.empty()) {
    Refuse(400, "both Content-Length and Transfer-Encoding are set");
    return false;
  }
  size_t length = 0;
  if (!cl.empty()) {
    if (cl.size() > 19 || cl.find_first_not_of("0123456789") != std::string::npos) {
      Refuse(400, "malformed Content-Length");
      return false;
    }
    length = std::strtoull(cl.c_str(), nullptr, 10);
    if (length > limits_.max_body_bytes) {
      Refuse(413, "the request body has " + std::to_string(length) + " bytes; the limit is " +
                      std::to_string(limits_.max_body_bytes));
      // Read and drop a body of reasonable size, so the client (still sending it) reads the
      // answer instead of a reset.
      // (A client expecting 100-continue sends nothing more.)
      if (length <= kMaxDrainedBody && request.Header("expect").empty()) {
        Discard(length, deadline);
      }
      return false;
    }
  }
  if (Lower(request.Header("expect")) == "100-continue" && (length > 0 || !te.empty()) &&
      buffer_.empty()) {
    if (!SendAll("HTTP/1.1 100 Continue\r\n\r\n")) return false;
  }
  if (!te.empty()) return ReadChunked(request, deadline);
  while (buffer_.size() < length) {
    if (!Fill(deadline)) return false;
  }
  request.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return true;
}

void WireConnection::Discard(size_t length, WireClock::time_point deadline) {
  size_t left = length;
  const size_t from_buffer = std::min(left, buffer_.size());
  buffer_.erase(0, from_buffer);
  left -= from_buffer;
  char scratch[65536];
  while (left > 0 && WaitReadable(deadline)) {
    const ssize_t n = ::recv(fd_, scratch, std::min(left, sizeof scratch), 0);
    if (n <= 0) return;
    left -= static_cast<size_t>(n);
  }
}

bool WireConnection::ReadChunked(HttpRequest& request, WireClock::time_point deadline) {
  for (;;) {
    size_t eol;
    while ((eol = buffer_.find("\r\n")) == std::string::npos) {
      if (buffer_.size() > 1024) {
        Refuse(400, "malformed chunk size line");
        return false;
      }
      if (!Fill(deadline)) return false;
    }
    const std::string size_text = buffer_.substr(0, buffer_.find_first_of(";\r"));
    if (size_text.empty() || size_text.size() > 15 ||
        size_text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      Refuse(400, "malformed chunk size");
      return false;
    }
    const size_t size = std::strtoull(size_text.c_str(), nullptr, 16);
    if (request.body.size() + size > limits_.max_body_bytes) {
      Refuse(413, "the request body is larger than " + std::to_string(limits_.max_body_bytes) +
                      " bytes");
      return false;
    }
    buffer_.erase(0, eol + 2);
    if (size == 0) {  // trailers, then an empty line
      for (;;) {
        while ((eol = buffer_.find("\r\n")) == std::string::npos) {
          if (buffer_.size() > limits_.max_head_bytes || !Fill(deadline)) {
            if (error_message_.empty() && buffer_.size() > limits_.max_head_bytes) {
              Refuse(431, "request trailers too large");
            }
            return false;
          }
        }
        buffer_.erase(0, eol + 2);
        if (eol == 0) return true;
      }
    }
    while (buffer_.size() < size + 2) {
      if (!Fill(deadline)) return false;
    }
    if (buffer_.compare(size, 2, "\r\n") != 0) {
      Refuse(400, "malformed chunk");
      return false;
    }
    request.body.append(buffer_, 0, size);
    buffer_.erase(0, size + 2);
  }
}

bool WireConnection::SendAll(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      const int r = ::poll(&p, 1, static_cast<int>(limits_.write.count()));
      if (r > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL))) continue;
      if (r < 0 && errno == EINTR) continue;
    }
    return false;
  }
  return true;
}

bool WireConnection::WriteResponse(const HttpResponse& response, bool keep_alive, bool head_only) {
  std::string head =
      "HTTP/1.1 " + std::to_string(response.status) + " " + Reason(response.status) + "\r\n";
  const bool has_body = response.status != 204;
  if (has_body) head += "Content-Type: " + response.content_type + "\r\n";
  for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  if (!response.stream) {
    if (has_body) head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    head += "\r\n";
    if (!head_only && has_body) head += response.body;
    return SendAll(head);
  }
  head += "Transfer-Encoding: chunked\r\n\r\n";
  if (!SendAll(head)) return false;
  bool failed = false;
  const ChunkWriter write = [&](std::string_view chunk) {
    if (failed) return false;
    if (chunk.empty()) return true;
    std::string framed = Hex(chunk.size()) + "\r\n";
    framed.append(chunk);
    framed += "\r\n";
    if (!SendAll(framed)) failed = true;
    return !failed;
  };
  while (response.stream(write) && !failed) {
  }
  if (failed) return false;
  return SendAll("0\r\n\r\n");
}

}  // namespace tandem::server
