// The JSON API under /api/v1/: the RunService calls as protobuf JSON, each a call of the same
// Coordinator method the gRPC service makes, under the role RoleFor names.
#include <cstdlib>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "base/version.h"
#include "proto/run_states.h"
#include "web/dashboard.h"
#include "web/json.h"

namespace arbiter::web {
namespace {

using coordinator::Caller;
using coordinator::RoleFor;
using coordinator::RunCall;

// A run id from the path, or 0.
uint64_t IdOf(std::string_view s) {
  if (s.empty() || s.size() > 20) return 0;
  for (char c : s)
    if (c < '0' || c > '9') return 0;
  return std::strtoull(std::string(s).c_str(), nullptr, 10);
}

// "a,b" or repeated "?x=a&x=b" values of a query parameter, each decoded.
std::vector<std::string> ListParam(const HttpRequest& req, std::string_view name) {
  const std::string value = req.Query(name);  // Split's pieces point into it
  std::vector<std::string> out;
  for (std::string_view v : Split(value, ',', /*skip_empty=*/true)) out.emplace_back(v);
  return out;
}

absl::StatusOr<v1::ListRunsRequest> ListRunsRequestOf(const HttpRequest& req,
                                                      uint32_t max_page_size) {
  v1::ListRunsRequest r;
  for (const std::string& s : ListParam(req, "state")) {
    v1::RunState state;
    if (!v1::RunState_Parse(Cat("RUN_STATE_", s), &state) || state == v1::RUN_STATE_UNSPECIFIED)
      return absl::InvalidArgumentError(Cat("state: unknown run state '", s.substr(0, 32), "'"));
    r.add_states(state);
  }
  for (const std::string& s : ListParam(req, "kind")) {
    v1::RunKind kind;
    if (!v1::RunKind_Parse(Cat("RUN_KIND_", s), &kind) || kind == v1::RUN_KIND_UNSPECIFIED)
      return absl::InvalidArgumentError(Cat("kind: unknown run kind '", s.substr(0, 32), "'"));
    r.add_kinds(kind);
  }
  const std::string owner = req.Query("owner");
  if (owner.size() > 64) return absl::InvalidArgumentError("owner: at most 64 bytes");
  r.set_owner(owner);
  const std::string owner_prefix = req.Query("owner_prefix");
  if (owner_prefix.size() > 64) return absl::InvalidArgumentError("owner_prefix: at most 64 bytes");
  r.set_owner_prefix(owner_prefix);
  const std::string size = req.Query("page_size");
  if (!size.empty()) {
    const uint64_t n = IdOf(size);
    if (n == 0 || n > max_page_size)
      return absl::InvalidArgumentError(
          Cat("page_size: 1..", max_page_size, ", got '", size.substr(0, 20), "'"));
    r.set_page_size(uint32_t(n));
  } else {
    r.set_page_size(50);
  }
  r.set_page_token(req.Query("page_token").substr(0, 64));
  return r;
}

absl::StatusOr<v1::GetRatingsRequest> RatingsRequestOf(const HttpRequest& req) {
  v1::GetRatingsRequest r;
  for (const std::string& e : ListParam(req, "engines")) r.add_engines(e);
  for (const std::string& id : ListParam(req, "runs")) {
    const uint64_t n = IdOf(id);
    if (n == 0)
      return absl::InvalidArgumentError(Cat("runs: '", id.substr(0, 20), "' is not a run id"));
    r.add_run_ids(n);
  }
  r.set_anchor(req.Query("anchor"));
  return r;
}

// Runs `f` on a thread of its own with the default stack and waits for it. Submissions plan their
// runs (a perft split sorts and merges millions of positions); civetweb's request threads have
// small stacks, which AddressSanitizer's larger frames overflowed.
template <class F>
auto OnFullStack(F f) -> decltype(f()) {
  std::optional<decltype(f())> out;
  std::thread t([&] { out.emplace(f()); });
  t.join();
  return std::move(*out);
}

}  // namespace

void Dashboard::Api(HttpExchange& x, const Caller& caller) {
  const HttpRequest& req = x.request();
  const bool get = req.method == "GET" || req.method == "HEAD";
  const bool post = req.method == "POST";
  std::string_view rest = req.path;
  constexpr std::string_view kPrefix = "/api/v1/";
  if (!rest.starts_with(kPrefix)) {
    return x.Reply(404, "application/json",
                   ErrorJson(absl::NotFoundError("the API is under /api/v1/")));
  }
  rest.remove_prefix(kPrefix.size());
  const std::vector<std::string_view> parts = Split(rest, '/', /*skip_empty=*/true);

  // Answers a message or the error of a call; PERMISSION_DENIED when the role is short.
  auto reply = [&](const absl::Status& st, const google::protobuf::Message* m) {
    if (!st.ok()) return x.Reply(HttpStatusOf(st), "application/json", ErrorJson(st));
    x.Reply(200, "application/json", ToJson(*m));
  };
  auto permit = [&](RunCall call) {
    absl::Status st = coordinator::Permit(caller, RoleFor(call));
    if (!st.ok()) x.Reply(HttpStatusOf(st), "application/json", ErrorJson(st));
    return st.ok();
  };
  auto answer_run = [&](const absl::StatusOr<v1::Run>& run) {
    reply(run.status(), run.ok() ? &*run : nullptr);
  };
  auto method_not_allowed = [&] {
    x.Reply(
        405, "application/json",
        ErrorJson(absl::InvalidArgumentError(Cat(req.method, " is not allowed on ", req.path))));
  };

  if (parts.size() == 1 && parts[0] == "session") {
    if (!get) return method_not_allowed();
    std::string secret = req.Cookie("arbiter_token");
    return x.Reply(
        200, "application/json",
        Cat("{\"name\":", JsonQuote(caller.name), ",\"role\":", JsonQuote(RoleName(caller.role)),
            ",\"csrf\":", JsonQuote(secret.empty() ? "" : CsrfTokenOf(secret)),
            ",\"version\":", JsonQuote(Cat("arbiter ", kVersion, " (", kRevision, ")")), "}"));
  }
  if (parts.size() >= 1 && parts[0] == "runs") {
    if (parts.size() == 1) {
      if (!get) return method_not_allowed();
      if (!permit(RunCall::kView)) return;
      absl::StatusOr<v1::ListRunsRequest> r = ListRunsRequestOf(req, options_.max_page_size);
      if (!r.ok()) return reply(r.status(), nullptr);
      absl::StatusOr<v1::ListRunsResponse> resp = coordinator_->ListRuns(*r);
      return reply(resp.status(), resp.ok() ? &*resp : nullptr);
    }
    if (parts.size() == 2 && (parts[1] == "perft" || parts[1] == "match" ||
                              parts[1] == "tournament" || parts[1] == "movegen-check")) {
      if (!post) return method_not_allowed();
      if (!permit(RunCall::kSubmit)) return;
      if (parts[1] == "perft") {
        v1::SubmitPerftRequest r;
        if (absl::Status st = FromJson(req.body, &r); !st.ok()) return reply(st, nullptr);
        return answer_run(OnFullStack([&] { return coordinator_->SubmitPerft(r, caller); }));
      }
      if (parts[1] == "match") {
        v1::SubmitMatchRequest r;
        if (absl::Status st = FromJson(req.body, &r); !st.ok()) return reply(st, nullptr);
        return answer_run(OnFullStack([&] { return coordinator_->SubmitMatch(r, caller); }));
      }
      if (parts[1] == "movegen-check") {
        v1::SubmitMovegenCheckRequest r;
        if (absl::Status st = FromJson(req.body, &r); !st.ok()) return reply(st, nullptr);
        return answer_run(OnFullStack([&] { return coordinator_->SubmitMovegenCheck(r, caller); }));
      }
      v1::SubmitTournamentRequest r;
      if (absl::Status st = FromJson(req.body, &r); !st.ok()) return reply(st, nullptr);
      return answer_run(OnFullStack([&] { return coordinator_->SubmitTournament(r, caller); }));
    }
    const uint64_t id = IdOf(parts[1]);
    if (id == 0) {
      return reply(
          absl::InvalidArgumentError(Cat("'", parts[1].substr(0, 20), "' is not a run id")),
          nullptr);
    }
    if (parts.size() == 2) {
      if (!get) return method_not_allowed();
      if (!permit(RunCall::kView)) return;
      return answer_run(coordinator_->GetRun(id));
    }
    if (parts.size() == 3 && parts[2] == "events") {
      if (!get) return method_not_allowed();
      if (!permit(RunCall::kView)) return;
      return Events(x, id, caller);
    }
    if (parts.size() == 3 && parts[2] == "pgn") {
      if (!get) return method_not_allowed();
      if (!permit(RunCall::kView)) return;
      absl::StatusOr<v1::GetPgnResponse> pgn = coordinator_->GetPgn(id);
      if (!pgn.ok()) return reply(pgn.status(), nullptr);
      return x.Reply(200, "application/x-chess-pgn", pgn->pgn(),
                     {{"Content-Disposition", Cat("attachment; filename=\"run-", id, ".pgn\"")}});
    }
    if (parts.size() == 3 && parts[2] == "cancel") {
      if (!post) return method_not_allowed();
      if (!permit(RunCall::kCancel)) return;
      v1::CancelRunRequest r;
      if (!req.body.empty()) {
        if (absl::Status st = FromJson(req.body, &r); !st.ok()) return reply(st, nullptr);
      }
      if (r.reason().size() > 256)
        return reply(absl::InvalidArgumentError("reason: at most 256 bytes"), nullptr);
      return answer_run(coordinator_->CancelRun(
          id, r.reason().empty() ? Cat("cancelled by ", caller.name, " (dashboard)") : r.reason(),
          caller));
    }
  }
  if (parts.size() >= 1 && parts[0] == "engines") {
    if (parts.size() == 1) {
      if (!get) return method_not_allowed();
      if (!permit(RunCall::kView)) return;
      const v1::ListEnginesResponse resp = coordinator_->engines().List();
      return reply(absl::OkStatus(), &resp);
    }
    if (parts.size() == 2 && (req.method == "DELETE")) {
      if (!permit(RunCall::kDeleteEngine)) return;
      v1::DeleteEngineResponse resp;
      return reply(coordinator_->DeleteEngine(std::string(parts[1]), caller), &resp);
    }
    return method_not_allowed();
  }
  if (parts.size() == 1 && parts[0] == "workers") {
    if (!get) return method_not_allowed();
    if (!permit(RunCall::kView)) return;
    v1::ListWorkersRequest r;
    r.set_include_disconnected(req.Query("all") == "1");
    const v1::ListWorkersResponse resp = coordinator_->ListWorkers(r);
    return reply(absl::OkStatus(), &resp);
  }
  if (parts.size() == 1 && parts[0] == "ratings") {
    if (!get) return method_not_allowed();
    if (!permit(RunCall::kView)) return;
    absl::StatusOr<v1::GetRatingsRequest> r = RatingsRequestOf(req);
    if (!r.ok()) return reply(r.status(), nullptr);
    absl::StatusOr<v1::GetRatingsResponse> resp = coordinator_->GetRatings(*r);
    return reply(resp.status(), resp.ok() ? &*resp : nullptr);
  }
  x.Reply(404, "application/json",
          ErrorJson(absl::NotFoundError(Cat("no API call ", req.method, " ", req.path))));
}

// Server-Sent Events: an "run" event with the run's JSON now and at every change, until the run
// ends or the page closes; a comment every 15 s keeps proxies from closing a quiet stream.
// The stream ends within a second of its token's revocation; one token (or, without
// authentication, one peer) holds at most max_live_pages_per_token of the live pages.
void Dashboard::Events(HttpExchange& x, uint64_t run_id, const Caller& caller) {
  if (absl::StatusOr<v1::Run> run = coordinator_->GetRun(run_id); !run.ok())
    return x.Reply(HttpStatusOf(run.status()), "application/json", ErrorJson(run.status()));
  const std::string key = options_.no_auth ? Cat("peer ", x.request().remote) : caller.name;
  // Refused before the stream starts when the live pages are all taken (Follow checks again).
  if (!live_->HasRoom(key)) {
    return x.Reply(429, "application/json",
                   ErrorJson(absl::ResourceExhaustedError(
                       Cat("too many live pages open (", options_.max_live_pages, " in all, ",
                           options_.max_live_pages_per_token, " per token); close some first"))));
  }
  if (!x.StartStream("text/event-stream", {{"X-Accel-Buffering", "no"}})) return;
  absl::Status st = live_->Follow(
      run_id, {.key = key,
               .send =
                   [&x](const std::string& json) {
                     return x.Write(Cat("event: run\ndata: ", json, "\n\n"));
                   },
               .keepalive = [&x] { return x.Write(": keepalive\n\n"); },
               .alive = [this, &caller] { return coordinator_->tokens().Live(caller); }});
  if (!st.ok()) (void)x.Write(Cat("event: error\ndata: ", ErrorJson(st), "\n\n"));
}

}  // namespace arbiter::web
