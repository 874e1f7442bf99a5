#include "web/dashboard.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>

#include "base/strings.h"
#include "net/sha256.h"
#include "spdlog/spdlog.h"
#include "web/assets.h"
#include "web/json.h"

namespace arbiter::web {
namespace {

constexpr std::string_view kCookie = "arbiter_token";
constexpr size_t kMaxSecretBytes = 128;
constexpr size_t kMaxOneTimeLinks = 64;

// What a page may load and from where: only this server, no inline script, no framing.
const HttpHeaders& PageHeaders() {
  static const HttpHeaders h = {
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"},
      {"X-Frame-Options", "DENY"},
      {"Cache-Control", "no-store"}};
  return h;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!read(fd, raw.data(), raw.size());
    close(fd);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// Secure when the browser reached this server over TLS (a proxy in front that terminates it says
// so in X-Forwarded-Proto).
std::string SessionCookie(const std::string& session, const HttpRequest& req) {
  const bool secure = req.Header("X-Forwarded-Proto") == "https";
  return Cat(kCookie, "=", session, "; Path=/; HttpOnly; SameSite=Strict",
             secure ? "; Secure" : "");
}

constexpr size_t kMaxSessions = 10000;
constexpr absl::Duration kSessionLife = absl::Hours(12);

// A sign-in posted from another site's page (login CSRF: the victim would work under the
// attacker's token). Browsers say where a request comes from in Sec-Fetch-Site; older ones name
// the page's origin (this dashboard's own pages send "null", by their no-referrer policy).
bool CrossSite(const HttpRequest& req) {
  if (const std::string site = req.Header("Sec-Fetch-Site"); !site.empty())
    return site != "same-origin" && site != "none";
  const std::string origin = req.Header("Origin");
  if (origin.empty() || origin == "null") return false;
  const size_t scheme = origin.find("://");
  return scheme == std::string::npos || origin.substr(scheme + 3) != req.Header("Host");
}

// The pages' own files: kept by the browser and revalidated on every use (an ETag of their
// content answers 304 while unchanged, so a new build's files are never stale). The pages
// themselves (app.html, signin.html) stay no-store.
void ServeAsset(HttpExchange& x, const Asset& a, int status = 200) {
  if (a.path.ends_with(".html")) return x.Reply(status, a.content_type, a.data, PageHeaders());
  static absl::Mutex mu;
  static auto* etags = new std::map<std::string_view, std::string>();
  std::string etag;
  {
    absl::MutexLock lock(&mu);
    std::string& e = (*etags)[a.path];
    if (e.empty()) e = Cat("W/\"", net::Sha256Hex(a.data).substr(0, 20), "\"");
    etag = e;
  }
  HttpHeaders headers = PageHeaders();
  for (auto& [k, v] : headers)
    if (k == "Cache-Control") v = "no-cache";
  headers.emplace_back("ETag", etag);
  headers.emplace_back("Vary", "Accept-Encoding");
  if (x.request().Header("If-None-Match") == etag) return x.Reply(304, a.content_type, "", headers);
  if (x.request().Header("Accept-Encoding").find("gzip") != std::string::npos) {
    headers.emplace_back("Content-Encoding", "gzip");
    return x.Reply(status, a.content_type, a.gzip, headers);
  }
  x.Reply(status, a.content_type, a.data, headers);
}

// The sign-in page, with `message` (already HTML-safe) in its message slot.
void ServeSignIn(HttpExchange& x, int status, std::string_view message) {
  const Asset* page = FindAsset("/signin.html");
  std::string html(page->data);
  const std::string slot = "<!--message-->";
  if (size_t at = html.find(slot); at != std::string::npos && !message.empty())
    html.replace(at, slot.size(), Cat("<p class=\"error\" role=\"alert\">", message, "</p>"));
  x.Reply(status, page->content_type, html, PageHeaders());
}

}  // namespace

std::string CsrfTokenOf(const std::string& secret) {
  return net::Sha256Hex(Cat("arbiter-csrf:", secret)).substr(0, 32);
}

int Dashboard::HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

Dashboard::Dashboard(const DashboardOptions& options, coordinator::Coordinator* coordinator)
    : options_(options), coordinator_(coordinator) {}

absl::StatusOr<std::unique_ptr<Dashboard>> Dashboard::Start(const DashboardOptions& options,
                                                            coordinator::Coordinator* coordinator) {
  std::unique_ptr<Dashboard> d(new Dashboard(options, coordinator));
  d->live_ = std::make_unique<LiveRuns>(coordinator, options.max_live_pages,
                                        options.max_live_pages_per_token);
  HttpOptions http;
  http.listen = options.listen;
  http.threads = options.threads + int(options.max_live_pages);
  auto server = HttpServer::Start(
      http, [p = d.get()](HttpExchange& x) { p->Handle(x); },
      [p = d.get()](const HttpRequest& req) { return p->Admit(req); });
  if (!server.ok()) return server.status();
  d->http_ = std::move(*server);
  return d;
}

Dashboard::~Dashboard() { Stop(); }

void Dashboard::Stop() {
  if (live_) live_->Close();
  if (http_) http_->Stop();
}

std::string Dashboard::OneTimeLink(const std::string& secret) {
  const std::string code = RandomHex(24);
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  absl::erase_if(one_time_, [now](const auto& kv) { return kv.second.expires < now; });
  if (one_time_.size() >= kMaxOneTimeLinks) one_time_.erase(one_time_.begin());
  one_time_[code] = {secret, now + absl::Minutes(10)};
  return Cat("/signin/once?code=", code);
}

absl::StatusOr<coordinator::Caller> Dashboard::CallerOf(const HttpRequest& req,
                                                        std::string* secret) {
  if (options_.no_auth) return coordinator::Caller{"anonymous", v1::ROLE_ADMIN};
  std::string header = req.Header("Authorization");
  if (header.empty()) {
    const std::string cookie = req.Cookie(kCookie);
    if (cookie.empty())
      return absl::UnauthenticatedError("sign in: no token (cookie or Authorization header)");
    if (cookie.size() > kMaxSecretBytes)
      return absl::UnauthenticatedError("the session cookie is too long");
    {
      absl::MutexLock lock(&mu_);
      auto it = sessions_.find(cookie);
      if (it == sessions_.end() || it->second.expires < absl::Now())
        return absl::UnauthenticatedError("your session has ended: sign in again");
      header = Cat("Bearer ", it->second.secret);
    }
    *secret = cookie;
  }
  return coordinator_->tokens().Authenticate(header);
}

std::string Dashboard::NewSession(const std::string& secret) {
  const std::string id = RandomHex(32);
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (sessions_.size() >= kMaxSessions)
    for (auto it = sessions_.begin(); it != sessions_.end();)
      it->second.expires < now ? sessions_.erase(it++) : void(++it);
  if (sessions_.size() >= kMaxSessions) sessions_.erase(sessions_.begin());
  sessions_[id] = {secret, now + kSessionLife};
  return id;
}

void Dashboard::SignIn(HttpExchange& x) {
  if (CrossSite(x.request())) return ServeSignIn(x, 403, "Sign in from this dashboard's own page.");
  const std::string token = x.request().Form("token");
  if (token.empty() || token.size() > kMaxSecretBytes)
    return ServeSignIn(x, 400, "Paste a token (arb_ and 64 hex digits).");
  absl::StatusOr<coordinator::Caller> who =
      coordinator_->tokens().Authenticate(Cat("Bearer ", token));
  if (!who.ok()) return ServeSignIn(x, 401, "That token is not valid (unknown or revoked).");
  if (who->role == v1::ROLE_WORKER)
    return ServeSignIn(x, 403, "A worker token cannot sign in to the dashboard.");
  spdlog::info("dashboard: {} signed in from {}", who->name, x.request().remote);
  x.Reply(303, "text/plain", "signed in\n",
          {{"Location", "/"}, {"Set-Cookie", SessionCookie(NewSession(token), x.request())}});
}

void Dashboard::SignInOnce(HttpExchange& x) {
  const std::string code = x.request().Query("code");
  std::string secret;
  {
    absl::MutexLock lock(&mu_);
    auto it = one_time_.find(code);
    if (it != one_time_.end() && it->second.expires >= absl::Now()) secret = it->second.secret;
    if (it != one_time_.end()) one_time_.erase(it);
  }
  if (secret.empty())
    return ServeSignIn(x, 401, "That sign-in link was used already or has expired.");
  x.Reply(303, "text/plain", "signed in\n",
          {{"Location", "/"}, {"Set-Cookie", SessionCookie(NewSession(secret), x.request())}});
}

absl::StatusOr<size_t> Dashboard::Admit(const HttpRequest& req) {
  // The sign-in form holds one token; anything else needs a valid token before a byte of its body
  // is read: a stranger cannot make the server hold large bodies.
  constexpr size_t kSmall = 64 << 10;
  if (req.path == "/signin") return size_t(4096);
  std::string secret;
  absl::StatusOr<coordinator::Caller> caller = CallerOf(req, &secret);
  if (!caller.ok()) return caller.status();
  if (caller->role == v1::ROLE_WORKER)
    return absl::PermissionDeniedError("worker tokens cannot use the dashboard or its API");
  // Only a submission may carry an opening book.
  if (req.path == "/api/v1/runs/match" || req.path == "/api/v1/runs/tournament")
    return size_t(16) << 20;
  return kSmall;
}

void Dashboard::Handle(HttpExchange& x) {
  const HttpRequest& req = x.request();
  const std::string& path = req.path;
  if (const Asset* a = FindAsset(path); a && a->is_public) return ServeAsset(x, *a);
  if (path == "/favicon.ico") return ServeAsset(x, *FindAsset("/favicon.svg"));
  if (path == "/signin" && req.method == "POST") return SignIn(x);
  if (path == "/signin/once") return SignInOnce(x);
  if (path == "/signin") return ServeSignIn(x, 200, "");
  if (path == "/signout") {
    if (std::string id = req.Cookie(kCookie); !id.empty()) {
      absl::MutexLock lock(&mu_);
      sessions_.erase(id);
    }
    return x.Reply(
        303, "text/plain", "signed out\n",
        {{"Location", "/signin"},
         {"Set-Cookie", Cat(kCookie, "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")}});
  }
  const bool api = path.starts_with("/api/");
  std::string secret;
  absl::StatusOr<coordinator::Caller> caller = CallerOf(req, &secret);
  if (caller.ok() && caller->role == v1::ROLE_WORKER)
    caller = absl::PermissionDeniedError("worker tokens cannot use the dashboard or its API");
  if (!caller.ok()) {
    if (!api) return ServeSignIn(x, 200, secret.empty() ? "" : "Your token is no longer valid.");
    return x.Reply(HttpStatusOf(caller.status()), "application/json", ErrorJson(caller.status()));
  }
  // A change made under the cookie must carry the page's CSRF value (another site's form or
  // script cannot read it); one made with a bearer header needs none.
  const bool changes = req.method != "GET" && req.method != "HEAD";
  if (changes && !secret.empty() && req.Header("X-CSRF-Token") != CsrfTokenOf(secret)) {
    return x.Reply(403, "application/json",
                   ErrorJson(absl::PermissionDeniedError(
                       "missing or wrong X-CSRF-Token header (reload the page)")));
  }
  if (api) return Api(x, *caller);
  if (path == "/" || path == "/index.html") return ServeAsset(x, *FindAsset("/app.html"));
  if (const Asset* a = FindAsset(path)) return ServeAsset(x, *a);
  x.Reply(404, "text/plain", "not found\n");
}

}  // namespace arbiter::web
