#include "web/http_server.h"

#include <civetweb.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

#include "base/listen_address.h"
#include "base/strings.h"
#include "web/json.h"

namespace arbiter::web {
namespace {

std::string Decode(std::string_view s) {
  std::string out(s.size() + 1, '\0');
  const int n = mg_url_decode(s.data(), int(s.size()), out.data(), int(out.size()), 1);
  out.resize(n < 0 ? 0 : size_t(n));
  return out;
}

// The value of `name` in "a=1&b=2" (decoded), or "".
std::string FieldOf(std::string_view data, std::string_view name) {
  for (std::string_view part : Split(data, '&')) {
    const size_t eq = part.find('=');
    if (part.substr(0, eq) == name) return eq == part.npos ? "" : Decode(part.substr(eq + 1));
  }
  return "";
}

// The status line and headers; without a length the response runs until the connection closes.
std::string HeadersOf(int status, std::string_view content_type, const HttpHeaders& headers,
                      const long long* length) {
  std::string h = Cat("HTTP/1.1 ", status, " ", StatusText(status), "\r\n");
  h += Cat("Content-Type: ", content_type, "\r\n");
  if (length) {
    h += Cat("Content-Length: ", *length, "\r\n");
  } else {
    h += "Cache-Control: no-store\r\nConnection: close\r\n";
  }
  h += "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n";
  for (const auto& [k, v] : headers) h += Cat(k, ": ", v, "\r\n");
  h += "\r\n";
  return h;
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return "";
}

std::string HttpRequest::Cookie(std::string_view name) const {
  const std::string all = Header("Cookie");
  for (std::string_view part : Split(all, ';')) {
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    const size_t eq = part.find('=');
    if (eq != part.npos && part.substr(0, eq) == name) return std::string(part.substr(eq + 1));
  }
  return "";
}

std::string HttpRequest::Query(std::string_view name) const { return FieldOf(query, name); }
std::string HttpRequest::Form(std::string_view name) const { return FieldOf(body, name); }

void HttpExchange::Reply(int status, std::string_view content_type, std::string_view body,
                         const HttpHeaders& headers) {
  status_ = status;
  const long long length = (long long)body.size();
  // One write: headers and body in separate small segments would meet Nagle's algorithm and the
  // client's delayed ACK (40 ms per response).
  std::string out = HeadersOf(status, content_type, headers, &length);
  if (request_.method != "HEAD") out.append(body);
  mg_write(conn_, out.data(), out.size());
}

bool HttpExchange::StartStream(std::string_view content_type, const HttpHeaders& headers) {
  status_ = 200;
  return Write(HeadersOf(200, content_type, headers, nullptr));
}

bool HttpExchange::Write(std::string_view data) {
  if (data.empty()) return true;
  return mg_write(conn_, data.data(), data.size()) == int(data.size());
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                              Handler handler, Admit admit) {
  std::unique_ptr<HttpServer> s(new HttpServer(options, std::move(handler), std::move(admit)));
  absl::StatusOr<ListenAddress> address = ParseListenAddress(options.listen);
  if (!address.ok())
    return absl::InvalidArgumentError(Cat("cannot serve HTTP on '", options.listen,
                                          "': ", std::string(address.status().message())));
  const std::string listen = address->ToString();
  const std::string threads = std::to_string(options.threads);
  const std::string timeout = std::to_string(options.request_timeout_ms);
  const char* config[] = {"listening_ports", listen.c_str(), "num_threads", threads.c_str(),
                          "request_timeout_ms", timeout.c_str(), "enable_keep_alive", "yes",
                          "keep_alive_timeout_ms", "5000",
                          // civetweb answers CORS preflights with "*" by default: no other
                          // origin may call this API from a browser.
                          "access_control_allow_origin", "", "access_control_allow_methods", "",
                          "access_control_allow_headers", "", nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof callbacks);
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };  // errors below
  mg_init_data init{&callbacks, s.get(), config};
  char text[256] = "";
  unsigned code = 0;
  mg_error_data error{&code, text, sizeof text};
  s->ctx_ = mg_start2(&init, &error);
  if (!s->ctx_) {
    return absl::UnavailableError(Cat("cannot serve HTTP on '", options.listen,
                                      "': ", text[0] ? text : "civetweb failed",
                                      " (the port in use, or not an address of this host?)"));
  }
  mg_server_port ports[4];
  const int n = mg_get_server_ports(s->ctx_, 4, ports);
  if (n > 0) s->port_ = ports[0].port;
  mg_set_request_handler(s->ctx_, "/", &HttpServer::Dispatch, s.get());
  return s;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (ctx_) mg_stop(ctx_);
  ctx_ = nullptr;
}

int HttpServer::Dispatch(mg_connection* conn, void* self_ptr) {
  auto* self = static_cast<HttpServer*>(self_ptr);
  const mg_request_info* info = mg_get_request_info(conn);
  HttpRequest req;
  req.method = info->request_method ? info->request_method : "";
  req.path = info->local_uri ? info->local_uri : "/";
  req.query = info->query_string ? info->query_string : "";
  req.remote = info->remote_addr;
  for (int i = 0; i < info->num_headers; ++i)
    req.headers.emplace_back(info->http_headers[i].name, info->http_headers[i].value);
  // A body (declared, or of unknown length on a method that carries one) is read only once the
  // request is admitted.
  size_t limit = self->options_.max_body_bytes;
  const bool carries = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
  const bool body = info->content_length > 0 || (info->content_length < 0 && carries);
  if (body && self->admit_) {
    absl::StatusOr<size_t> allowed = self->admit_(req);
    if (!allowed.ok()) {
      const int status = allowed.status().code() == absl::StatusCode::kUnauthenticated    ? 401
                         : allowed.status().code() == absl::StatusCode::kPermissionDenied ? 403
                                                                                          : 400;
      HttpExchange x(conn, std::move(req));
      x.Reply(status, "application/json",
              Cat(R"({"code":")", absl::StatusCodeToString(allowed.status().code()),
                  R"(","message":)", JsonQuote(std::string(allowed.status().message())), "}"),
              {{"Connection", "close"}});
      return status;
    }
    limit = std::min(limit, *allowed);
  }
  if (info->content_length > 0 && size_t(info->content_length) > limit) {
    HttpExchange x(conn, std::move(req));
    x.Reply(
        413, "application/json",
        Cat(R"({"code":"INVALID_ARGUMENT","message":"request body over )", limit, R"( bytes"})"),
        {{"Connection", "close"}});
    return 413;
  }
  char buf[16384];
  for (;;) {
    const int got = mg_read(conn, buf, sizeof buf);
    if (got <= 0) break;
    req.body.append(buf, size_t(got));
    if (req.body.size() > limit) {
      HttpExchange x(conn, std::move(req));
      x.Reply(413, "application/json",
              R"({"code":"INVALID_ARGUMENT","message":"request body too large"})",
              {{"Connection", "close"}});
      return 413;
    }
  }
  HttpExchange x(conn, std::move(req));
  self->handler_(x);
  if (x.status() == 0) x.Reply(500, "text/plain", "no response\n");
  return x.status();
}

std::string_view StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
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
    case 409:
      return "Conflict";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status < 500 ? "Error" : "Server Error";
  }
}

}  // namespace arbiter::web
