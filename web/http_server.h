// A small HTTP/1.1 server over civetweb (Debian's libcivetweb, the library prometheus-cpp's
// exposer already links): one handler for every request, bodies bounded, and long-lived
// responses (Server-Sent Events) written from the handler's own thread.
//
//   ASSIGN_OR_RETURN(auto http, HttpServer::Start({.listen = "127.0.0.1:0"}, [](HttpExchange& x) {
//     x.Reply(200, "text/plain", "hello");
//   }));
//   int port = http->port();
//
// civetweb serves each connection on one of its threads; `threads` bounds the connections
// served at once (live pages hold one each while open).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

struct mg_connection;
struct mg_context;

namespace arbiter::web {

struct HttpRequest {
  std::string method;
  std::string path;   // URL-decoded, without the query
  std::string query;  // raw, without '?'
  std::string body;
  std::string remote;  // client address
  std::vector<std::pair<std::string, std::string>> headers;

  // The first header of that name (case-insensitive), or "".
  std::string Header(std::string_view name) const;
  // A cookie of the Cookie header, or "".
  std::string Cookie(std::string_view name) const;
  // A query parameter, URL-decoded, or "".
  std::string Query(std::string_view name) const;
  // A field of an application/x-www-form-urlencoded body, decoded, or "".
  std::string Form(std::string_view name) const;
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// One request and its response. A handler calls Reply once, or StartStream and then Write.
class HttpExchange {
 public:
  HttpExchange(mg_connection* conn, HttpRequest request)
      : conn_(conn), request_(std::move(request)) {}
  const HttpRequest& request() const { return request_; }
  void Reply(int status, std::string_view content_type, std::string_view body,
             const HttpHeaders& headers = {});
  // Sends the headers of an unbounded response (no Content-Length; the connection closes at
  // its end). False when the client is gone.
  bool StartStream(std::string_view content_type, const HttpHeaders& headers = {});
  // False when the client is gone.
  bool Write(std::string_view data);
  int status() const { return status_; }

 private:
  mg_connection* conn_;
  HttpRequest request_;
  int status_ = 0;
};

struct HttpOptions {
  std::string listen = "127.0.0.1:0";  // base/listen_address.h; port 0 picks a free one
  int threads = 64;                    // connections served at once
  size_t max_body_bytes = size_t(16) << 20;
  // A request's line and headers must arrive within this time (and its body within it again):
  // a client that sends half a request holds a thread no longer.
  int request_timeout_ms = 10000;
};

// Decides from a request's line and headers alone whether its body may be read, and how much of
// it: the bytes allowed, or an error answered at once with the connection closed (the body is
// never read). Called only for requests that carry a body.
using Admit = std::function<absl::StatusOr<size_t>(const HttpRequest&)>;

class HttpServer {
 public:
  using Handler = std::function<void(HttpExchange&)>;
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                           Handler handler, Admit admit = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const { return port_; }
  // Stops accepting and waits for the handlers to return (the caller first ends its streams).
  void Stop();

 private:
  HttpServer(HttpOptions options, Handler handler, Admit admit)
      : options_(std::move(options)), handler_(std::move(handler)), admit_(std::move(admit)) {}
  static int Dispatch(mg_connection* conn, void* self);
  HttpOptions options_;
  Handler handler_;
  Admit admit_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
};

// The reason phrase of an HTTP status code ("Not Found").
std::string_view StatusText(int status);

}  // namespace arbiter::web
