// The coordinator in a browser: the dashboard's pages and the JSON API under /api/v1/, served by
// the coordinator process itself (`arbiter coordinator --http ADDR`, `arbiter local --http`).
//
//   ASSIGN_OR_RETURN(auto web, Dashboard::Start({.listen = "127.0.0.1:8080"}, &coordinator));
//   std::cout << web->OneTimeLink(admin_secret);   // signs one browser in, once
//
// The API calls the same Coordinator methods as the gRPC RunService, under the same tokens and
// roles (coordinator/auth.h RoleFor): a browser keeps its token in an HttpOnly, SameSite=Strict
// cookie and sends a CSRF header with every change; scripts send "Authorization: Bearer".
// Live pages follow runs through LiveRuns (Server-Sent Events). Every asset is in the binary.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/auth.h"
#include "coordinator/coordinator.h"
#include "web/http_server.h"
#include "web/live_runs.h"

namespace arbiter::web {

struct DashboardOptions {
  std::string listen = "127.0.0.1:0";
  // No tokens: everyone is the admin "anonymous" (the coordinator's --no-auth, loopback only).
  bool no_auth = false;
  // Live pages open at once (each holds a connection and a server thread).
  size_t max_live_pages = 256;
  // Of those, the pages of one token (of one peer without authentication).
  size_t max_live_pages_per_token = 64;
  // Connections served at once besides the live pages: enough that clients holding half-sent
  // requests (each until the request timeout) do not lock signed-in users out.
  int threads = 96;
  // Runs on one page of the runs list at most.
  uint32_t max_page_size = 200;
};

class Dashboard {
 public:
  static absl::StatusOr<std::unique_ptr<Dashboard>> Start(const DashboardOptions& options,
                                                          coordinator::Coordinator* coordinator);
  ~Dashboard();
  int port() const { return http_->port(); }
  // A path ("/signin/once?code=...") that signs a browser in as the token of `secret` once,
  // within 10 minutes.
  std::string OneTimeLink(const std::string& secret);
  // Ends the live pages and stops serving (before the coordinator shuts down).
  void Stop();
  LiveRuns& live() { return *live_; }

  // The HTTP answer to a handler's status: 400, 401, 403, 404, 409, 429, 503 ...
  static int HttpStatusOf(const absl::Status& status);

 private:
  Dashboard(const DashboardOptions& options, coordinator::Coordinator* coordinator);
  void Handle(HttpExchange& x);
  // Before a body is read: who may send one, and how large (HttpServer's Admit).
  absl::StatusOr<size_t> Admit(const HttpRequest& req);
  // The caller of a request (cookie or bearer header) or UNAUTHENTICATED.
  absl::StatusOr<coordinator::Caller> CallerOf(const HttpRequest& req, std::string* secret);
  void SignIn(HttpExchange& x);
  void SignInOnce(HttpExchange& x);
  void Api(HttpExchange& x, const coordinator::Caller& caller);
  void Events(HttpExchange& x, uint64_t run_id, const coordinator::Caller& caller);

  const DashboardOptions options_;
  coordinator::Coordinator* const coordinator_;
  std::unique_ptr<LiveRuns> live_;
  std::unique_ptr<HttpServer> http_;
  absl::Mutex mu_;
  struct OneTime {
    std::string secret;
    absl::Time expires;
  };
  absl::flat_hash_map<std::string, OneTime> one_time_ ABSL_GUARDED_BY(mu_);
  // Signed-in browsers: the cookie holds a session id, never the token; the token is looked up
  // and authenticated on every request (a revoked token ends its sessions at once).
  std::string NewSession(const std::string& secret);
  absl::flat_hash_map<std::string, OneTime> sessions_ ABSL_GUARDED_BY(mu_);
};

// The CSRF value a page must send (header X-CSRF-Token) with a change made under session cookie
// `secret`: derived from the session id, so that no other origin can read or forge it.
std::string CsrfTokenOf(const std::string& secret);

}  // namespace arbiter::web
