#include "cli/cluster_client.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "base/strings.h"
#include "base/uint128.h"
#include "cli/json.h"
#include "cli/source_engines.h"
#include "grpcpp/grpcpp.h"
#include "match/movegen_check.h"
#include "net/client.h"
#include "net/metrics.h"
#include "net/sha256.h"
#include "net/status.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/requirements.h"
#include "proto/run_states.h"

namespace arbiter::cli {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

std::string Duration(double s) {
  if (s <= 0) return "--:--";
  const long t = std::lround(s);
  if (t >= 3600) return absl::StrFormat("%d:%02d:%02d", t / 3600, (t / 60) % 60, t % 60);
  return absl::StrFormat("%d:%02d", t / 60, t % 60);
}

double GamesPerMinute(const v1::Run& run, uint64_t games) {
  if (run.started_unix() <= 0) return 0;
  const double end =
      run.finished_unix() > 0
          ? run.finished_unix()
          : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
  const double minutes = (end - run.started_unix()) / 60;
  return minutes > 0 ? double(games) / minutes : 0;
}

// "H0", "H1" or "continue".
std::string_view SprtDecisionWord(v1::SprtDecision d) {
  return d == v1::SPRT_DECISION_ACCEPT_H1   ? "H1"
         : d == v1::SPRT_DECISION_ACCEPT_H0 ? "H0"
                                            : "continue";
}

// "120/200 games  55.1 games/min  +40 =50 -30  Elo 17.4 +- 30.1  LLR 1.23 [-2.94, 2.94]"
std::string MatchProgress(const v1::Run& run) {
  const v1::MatchRunStatus& m = run.match();
  const v1::MatchResult& r = m.result();
  const v1::StatsReport& st = r.stats();
  std::string out = absl::StrFormat("%d", r.games());
  if (m.request().games() > 0) out += absl::StrFormat("/%d", m.request().games());
  out += absl::StrFormat(" games  %.1f games/min  +%d =%d -%d  Elo %.1f +- %.1f",
                         GamesPerMinute(run, r.games()), st.wdl().wins(), st.wdl().draws(),
                         st.wdl().losses(), st.elo(), st.elo_error95());
  if (st.has_sprt())
    out += absl::StrFormat("  LLR %.2f [%.2f, %.2f]", st.sprt().llr(), st.sprt().lower_bound(),
                           st.sprt().upper_bound());
  return out;
}

// "54/120 games  30.2 games/min  leader A +35.0"
std::string TournamentProgress(const v1::Run& run) {
  const v1::TournamentRunStatus& t = run.tournament();
  const uint64_t planned = uint64_t(t.pairings_size()) * uint64_t(t.request().games_per_pairing());
  std::string out = absl::StrFormat("%d/%d games  %.1f games/min", t.games(), planned,
                                    GamesPerMinute(run, t.games()));
  if (t.standings_size() > 0)
    out += absl::StrFormat("  leader %s %+.1f", t.standings(0).name(), t.standings(0).elo());
  return out;
}

// Progress on stderr: a redrawn bar when stdout and stderr are terminals, otherwise at most
// one plain line a second.
class ProgressDisplay {
 public:
  explicit ProgressDisplay(bool quiet = false)
      : quiet_(quiet), tty_(isatty(STDOUT_FILENO) && isatty(STDERR_FILENO)) {}
  void Show(const v1::Run& run) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const bool finished = IsTerminal(run.state());
    if (!tty_ && !finished && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double p = run.progress();
    const v1::PerftResult& r = run.perft().result();
    if (tty_) {
      constexpr int kWidth = 30;
      int filled = int(std::lround(p * kWidth));
      std::string bar(filled, '#');
      bar.resize(kWidth, ' ');
      if (run.has_match())
        std::cerr << absl::StrFormat("\r[%s] %5.1f%%  %s  ETA %s  %-20s", bar, 100 * p,
                                     MatchProgress(run), Duration(run.eta_seconds()),
                                     RunStatusWords(run));
      else if (run.has_tournament())
        std::cerr << absl::StrFormat("\r[%s] %5.1f%%  %s  ETA %s  %-20s", bar, 100 * p,
                                     TournamentProgress(run), Duration(run.eta_seconds()),
                                     RunStatusWords(run));
      else
        std::cerr << absl::StrFormat("\r[%s] %5.1f%%  %8.1f Mnodes/s  ETA %s  jobs %d/%d  %-20s",
                                     bar, 100 * p, r.nodes_per_second() / 1e6,
                                     Duration(run.eta_seconds()), run.jobs().done(),
                                     run.jobs().total(), RunStatusWords(run));
      std::cerr << "\033[K";  // clear what a longer earlier line left
      if (finished) std::cerr << "\n";
      std::cerr.flush();
    } else if (run.has_match() || run.has_tournament()) {
      std::cerr << absl::StrFormat("run %d %s %.1f%% %s ETA %s\n", run.id(), RunStatusWords(run),
                                   100 * p,
                                   run.has_match() ? MatchProgress(run) : TournamentProgress(run),
                                   Duration(run.eta_seconds()));
    } else {
      std::cerr << absl::StrFormat("run %d %s %.1f%% jobs %d/%d nodes %s %.1f Mnodes/s ETA %s\n",
                                   run.id(), RunStatusWords(run), 100 * p, run.jobs().done(),
                                   run.jobs().total(), r.nodes_decimal(),
                                   r.nodes_per_second() / 1e6, Duration(run.eta_seconds()));
    }
  }

 private:
  bool quiet_;
  bool tty_;
  std::chrono::steady_clock::time_point last_{};
};

std::unique_ptr<v1::RunService::Stub> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return v1::RunService::NewStub(net::Dial(address, args));
}

// Follows the run's stream (reconnecting if the coordinator restarts) until it is finished.
grpc::Status Follow(v1::RunService::Stub& stub, uint64_t run_id, v1::Run& last,
                    bool quiet = false) {
  ProgressDisplay display(quiet);
  const auto give_up_after = std::chrono::minutes(2);
  auto last_contact = std::chrono::steady_clock::now();
  for (;;) {
    grpc::ClientContext ctx;
    v1::WatchRunRequest req;
    req.set_run_id(run_id);
    auto reader = stub.WatchRun(&ctx, req);
    v1::Run run;
    while (reader->Read(&run)) {
      last_contact = std::chrono::steady_clock::now();
      last = run;
      display.Show(run);
    }
    grpc::Status s = reader->Finish();
    if (s.ok() && IsTerminal(last.state())) return s;
    if (!s.ok() && s.error_code() != grpc::StatusCode::UNAVAILABLE &&
        s.error_code() != grpc::StatusCode::CANCELLED)
      return s;
    if (std::chrono::steady_clock::now() - last_contact > give_up_after) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// While alive, SIGINT or SIGTERM cancels the run this client submitted (CancelRun) and the
// follower goes on until the coordinator reports it cancelled; a second signal exits at once,
// leaving the run as it is. The signals must be blocked (BlockTerminationSignals) before any
// thread, gRPC's included, is started.
class InterruptCanceller {
 public:
  InterruptCanceller() = default;
  ~InterruptCanceller() {
    done_ = true;
    if (!thread_.joinable()) return;
    // Wakes its wait now rather than at the next tick (up to 200 ms added to every command that
    // follows a run: a tenth of a second on perft(8)'s 5 s); the signal, sent to that thread
    // only and blocked everywhere, is taken by its wait or dropped with it.
    pthread_kill(thread_.native_handle(), SIGINT);
    thread_.join();
  }
  // Starts watching for the signals on behalf of `run_id`.
  void Watch(v1::RunService::Stub& stub, uint64_t run_id) {
    thread_ = std::thread([this, &stub, run_id] {
      const sigset_t set = TerminationSignals();
      const timespec tick = {0, 200'000'000};
      while (!done_) {
        const int sig = sigtimedwait(&set, nullptr, &tick);
        if (sig <= 0 || done_) continue;
        if (interrupted_) {
          std::cerr << "\ninterrupted again: leaving run " << run_id << " as it is\n";
          _exit(130);
        }
        interrupted_ = true;
        std::cerr << "\n"
                  << (sig == SIGINT ? "interrupted" : "terminated") << ": cancelling run " << run_id
                  << " (again to leave it running)\n";
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::CancelRunRequest req;
        req.set_run_id(run_id);
        req.set_reason(sig == SIGINT ? "interrupted (SIGINT) by the client that submitted it"
                                     : "terminated (SIGTERM) with the client that submitted it");
        v1::Run run;
        grpc::Status s = stub.CancelRun(&ctx, req, &run);
        if (!s.ok()) {
          std::cerr << "cannot cancel run " << run_id << ": " << s.error_message() << "\n";
          _exit(130);
        }
      }
    });
  }
  bool interrupted() const { return interrupted_; }

 private:
  std::atomic<bool> done_{false}, interrupted_{false};
  std::thread thread_;
};

void PrintPerftResult(const v1::Run& run, bool divide) {
  const v1::PerftResult& r = run.perft().result();
  if (divide) {
    for (const auto& d : r.divide()) {
      std::cout << d.move() << ": " << Uint128ToString(Uint128FromParts(d.nodes_high(), d.nodes()))
                << "\n";
    }
    std::cout << "\n";
  }
  std::cout << "Nodes searched: " << r.nodes_decimal() << "\n";
  std::cout << absl::StrFormat(
      "Time: %.3f s\nSpeed: %.1f Mnodes/s (run %d: %d jobs, split depth %d, %d unique "
      "positions, hash %d MB)\n",
      r.seconds(), r.nodes_per_second() / 1e6, run.id(), run.jobs().total(),
      run.perft().split_depth(), run.perft().unique_positions(), r.hash_mb());
  for (const auto& d : run.perft().disagreements())
    std::cout << absl::StrFormat("Disagreement: job %d, worker %s (%s) counted %d, majority %d\n",
                                 d.job_id(), d.worker_id(), d.worker_name(), d.worker_nodes(),
                                 d.majority_nodes());
}

int Report(const grpc::Status& s, const std::string& what) {
  std::cerr << "error: " << what << ": " << s.error_message() << "\n";
  return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? 2 : 1;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSignals();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

int RunRemotePerft(const std::string& coordinator, const v1::SubmitPerftRequest& request,
                   bool json) {
  BlockTerminationSignals();  // before gRPC starts its threads
  auto stub = Connect(coordinator);
  InterruptCanceller canceller;  // destroyed (its thread joined) before the stub
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  v1::SubmitRunResponse submitted;
  grpc::Status s = stub->SubmitPerft(&ctx, request, &submitted);
  if (!s.ok()) return Report(s, "submit perft to " + coordinator);
  if (!json)
    std::cerr << absl::StrFormat(
        "run %d submitted: %d jobs, split depth %d (%d unique positions)\n", submitted.run().id(),
        submitted.run().jobs().total(), submitted.run().perft().split_depth(),
        submitted.run().perft().unique_positions());
  v1::Run last = submitted.run();
  canceller.Watch(*stub, last.id());
  s = Follow(*stub, last.id(), last);
  if (!s.ok()) return Report(s, "watch run");
  if (last.state() != v1::RUN_STATE_SUCCEEDED) {
    std::cerr << "error: run " << last.id() << " " << RunStateName(last.state()) << ": "
              << last.message() << "\n";
    return canceller.interrupted() ? 130 : 1;
  }
  if (json) {
    v1::PerftResult result = last.perft().result();
    if (!request.perft().divide()) result.clear_divide();
    std::cout << ToJson(result) << "\n";
  } else {
    PrintPerftResult(last, request.perft().divide());
  }
  return last.perft().disagreements_size() > 0 ? 3 : 0;
}

namespace {

template <typename Request>
absl::StatusOr<v1::Run> SubmitAndFollow(
    const std::string& coordinator, const Request& request, bool quiet,
    grpc::Status (v1::RunService::Stub::*submit)(grpc::ClientContext*, const Request&,
                                                 v1::SubmitRunResponse*)) {
  BlockTerminationSignals();  // before gRPC starts its threads
  auto stub = Connect(coordinator);
  InterruptCanceller canceller;  // destroyed (its thread joined) before the stub
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
  v1::SubmitRunResponse submitted;
  grpc::Status s = ((*stub).*submit)(&ctx, request, &submitted);
  if (!s.ok()) return net::FromGrpc(s, "submit to " + coordinator);
  if (!quiet)
    std::cerr << absl::StrFormat("run %d submitted to %s: %d jobs\n", submitted.run().id(),
                                 coordinator, submitted.run().jobs().total());
  v1::Run last = submitted.run();
  canceller.Watch(*stub, last.id());
  s = Follow(*stub, last.id(), last, quiet);
  if (!s.ok()) return net::FromGrpc(s, absl::StrFormat("watch run %d", last.id()));
  return last;
}

}  // namespace

absl::StatusOr<v1::Run> RunRemoteMovegenCheck(const std::string& coordinator,
                                              const v1::SubmitMovegenCheckRequest& request,
                                              bool quiet) {
  return SubmitAndFollow(coordinator, request, quiet, &v1::RunService::Stub::SubmitMovegenCheck);
}

absl::StatusOr<v1::Run> RunRemoteMatch(const std::string& coordinator,
                                       const v1::SubmitMatchRequest& request, bool quiet) {
  return SubmitAndFollow(coordinator, request, quiet, &v1::RunService::Stub::SubmitMatch);
}

absl::StatusOr<v1::Run> RunRemoteTournament(const std::string& coordinator,
                                            const v1::SubmitTournamentRequest& request,
                                            bool quiet) {
  return SubmitAndFollow(coordinator, request, quiet, &v1::RunService::Stub::SubmitTournament);
}

absl::StatusOr<v1::Engine> UploadEngineFile(const std::string& coordinator, const std::string& path,
                                            const std::string& name) {
  absl::StatusOr<std::string> sha = net::Sha256OfFile(path);
  if (!sha.ok()) return absl::NotFoundError(Cat("cannot read engine file '", path, "'"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat("cannot read engine file '", path, "'"));
  auto stub = Connect(coordinator);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  v1::UploadEngineResponse resp;
  auto writer = stub->UploadEngine(&ctx, &resp);
  v1::UploadEngineRequest part;
  part.set_name(name);
  part.set_sha256(*sha);
  bool open = writer->Write(part);
  part.clear_sha256();
  std::string buf(1 << 20, '\0');
  while (open && in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    if (in.gcount() <= 0) break;
    part.set_chunk(buf.data(), size_t(in.gcount()));
    open = writer->Write(part);
  }
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) return net::FromGrpc(s, Cat("upload of '", path, "' to ", coordinator));
  // What the coordinator kept must be what this file is.
  if (resp.engine().sha256() != *sha)
    return absl::DataLossError(Cat("upload of '", path, "': the coordinator stored sha256 ",
                                   resp.engine().sha256(), ", the file has ", *sha));
  return resp.engine();
}

absl::StatusOr<v1::GetPgnResponse> FetchRunPgn(const std::string& coordinator, uint64_t run_id) {
  auto stub = Connect(coordinator);
  v1::GetPgnResponse out;
  for (int attempt = 0;; ++attempt) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
    v1::GetPgnRequest req;
    req.set_run_id(run_id);
    grpc::Status s = stub->GetPgn(&ctx, req, &out);
    if (s.ok()) return out;
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE || attempt >= 20)
      return net::FromGrpc(s, absl::StrFormat("PGN of run %d", run_id));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int WatchRemoteRun(const std::string& coordinator, uint64_t run_id, bool json) {
  auto stub = Connect(coordinator);
  v1::Run last;
  grpc::Status s = Follow(*stub, run_id, last);
  if (!s.ok()) return Report(s, "watch run");
  if (json)
    std::cout << ToJson(last) << "\n";
  else
    PrintRun(last, std::cout);
  return last.state() == v1::RUN_STATE_SUCCEEDED ? 0 : 1;
}

void PrintRunLine(const v1::Run& run, std::ostream& out) {
  std::string what;
  if (run.has_match()) {
    const v1::MatchResult& m = run.match().result();
    what = absl::StrFormat(
        "match %s vs %s at %s, %d games, Elo %.1f +- %.1f%s",
        run.match().request().settings().engines(0).name(),
        run.match().request().settings().engines(1).name(), run.match().request().settings().tc(),
        m.games(), m.stats().elo(), m.stats().elo_error95(),
        m.stats().has_sprt() ? absl::StrFormat(", LLR %.2f", m.stats().sprt().llr())
                             : std::string());
  }
  if (run.has_tournament())
    what = absl::StrFormat(
        "%s of %d engines, %s", run.tournament().request().gauntlet() ? "gauntlet" : "round robin",
        run.tournament().request().settings().engines_size(), TournamentProgress(run));
  if (run.has_perft())
    what = absl::StrFormat("perft depth %d of %s", run.perft().request().perft().depth(),
                           run.perft().result().fen());
  out << absl::StrFormat("%6d  %-6s %-13s %-12s %-12s %5.1f%%  jobs %d/%d  %s\n", run.id(),
                         RunKindName(run.kind()), RunStateWord(run.state()),
                         VerdictWord(run.outcome()), run.owner().empty() ? "-" : run.owner(),
                         100 * run.progress(), run.jobs().done(), run.jobs().total(), what);
}

int Failed(const grpc::Status& s) {
  std::cerr << "error: " << s.error_message() << " (" << net::StatusCodeName(s.error_code())
            << ")\n";
  switch (s.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return 3;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
      return 2;
    default:
      return 1;
  }
}

void AddSchedulingOptions(CLI::App* cmd, v1::Scheduling& scheduling) {
  cmd->add_option_function<int>(
         "--priority", [&scheduling](int p) { scheduling.set_priority(p); },
         "With --coordinator: higher runs first, -100..100 (default 0; above 0: admin)")
      ->check(CLI::Range(-100, 100));
  cmd->add_option_function<uint32_t>(
         "--throughput", [&scheduling](uint32_t t) { scheduling.set_throughput(t); },
         "With --coordinator: share of the workers among runs of its priority, percent "
         "(default 100)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option_function<std::vector<std::string>>(
      "--require",
      [&scheduling](const std::vector<std::string>& items) {
        for (const std::string& text : items)
          if (absl::Status st = ParseRequirements(text, *scheduling.mutable_requirements());
              !st.ok())
            throw CLI::ValidationError("--require", std::string(st.message()));
      },
      "With --coordinator: what a worker must have to take the run's jobs, e.g. "
      "cpu=v3,memory=8G,threads=4,zone=a (other keys are worker --label's)");
}

void PrintRun(const v1::Run& run, std::ostream& out) {
  out << absl::StrFormat("Run %d (%s) of %s: %s%s\n", run.id(), RunKindName(run.kind()),
                         run.owner().empty() ? "-" : run.owner(), RunStatusWords(run),
                         run.message().empty() ? "" : " - " + run.message());
  out << absl::StrFormat(
      "Progress: %.1f%%, jobs %d total, %d done, %d leased, %d queued, %d "
      "cancelled\n",
      100 * run.progress(), run.jobs().total(), run.jobs().done(), run.jobs().leased(),
      run.jobs().queued(), run.jobs().cancelled());
  out << absl::StrFormat("Scheduling: priority %d, throughput %d%%", run.scheduling().priority(),
                         run.scheduling().throughput());
  if (const std::string r = RequirementsText(run.scheduling().requirements()); !r.empty())
    out << ", requires " << r;
  out << "\n";
  if (!run.waiting().empty()) out << "Waiting: " << run.waiting() << "\n";
  if (!run.outcome().summary().empty()) out << "Verdict: " << run.outcome().summary() << "\n";
  if (run.has_movegen_check()) out << match::MovegenReportText(run.movegen_check().result());
  if (run.has_match()) {
    const v1::MatchRunStatus& m = run.match();
    const v1::MatchResult& r = m.result();
    const v1::StatsReport& st = r.stats();
    out << absl::StrFormat("Match: %s vs %s at %s\n", m.request().settings().engines(0).name(),
                           m.request().settings().engines(1).name(), m.request().settings().tc());
    out << absl::StrFormat("Games: %d (+%d =%d -%d), %d results refused\n", r.games(),
                           st.wdl().wins(), st.wdl().draws(), st.wdl().losses(),
                           m.rejected_results());
    const v1::PentanomialCounts& p = st.penta();
    out << absl::StrFormat("Pentanomial: [%d, %d, %d, %d, %d]\n", p.ll(), p.ld(), p.d(), p.wd(),
                           p.ww());
    out << absl::StrFormat("Elo: %.1f +- %.1f (95%%), LOS %.1f%%\n", st.elo(), st.elo_error95(),
                           100 * st.los());
    if (st.has_sprt())
      out << absl::StrFormat("SPRT: LLR %.2f [%.2f, %.2f] %s\n", st.sprt().llr(),
                             st.sprt().lower_bound(), st.sprt().upper_bound(),
                             SprtDecisionWord(st.sprt().decision()));
    for (const auto& [end, n] : r.terminations()) out << "  " << end << ": " << n << "\n";
  }
  if (run.has_tournament()) {
    const v1::TournamentRunStatus& t = run.tournament();
    out << absl::StrFormat("Tournament: %s of %d engines at %s, %d games per pairing\n",
                           t.request().gauntlet() ? "gauntlet" : "round robin",
                           t.request().settings().engines_size(), t.request().settings().tc(),
                           t.request().games_per_pairing());
    for (const v1::MatchResult& m : t.pairings())
      out << absl::StrFormat("  %s vs %s: %d games (+%d =%d -%d), Elo %.1f +- %.1f\n", m.engines(0),
                             m.engines(1), m.games(), m.stats().wdl().wins(),
                             m.stats().wdl().draws(), m.stats().wdl().losses(), m.stats().elo(),
                             m.stats().elo_error95());
    for (const v1::TournamentStanding& st : t.standings())
      out << absl::StrFormat("  %-22s Elo %7.1f +- %5.1f  %d games, %.1f points\n", st.name(),
                             st.elo(), st.elo_error95(), st.games(), st.points());
  }
  for (const v1::RunEngine& e : run.engines()) {
    std::string hashes;
    for (const std::string& h : e.sha256s())
      if (h != e.sha256()) hashes += " " + h;
    out << absl::StrFormat(
        "Engine %s: %s%s, sha256 %s%s, bench %s\n", e.name(), e.source(),
        e.path().empty() ? "" : " " + e.path(), e.sha256().empty() ? "-" : e.sha256(),
        hashes.empty() ? "" : " (workers also ran:" + hashes + ")",
        (e.declared_bench() ? absl::StrFormat("declared %d", e.declared_bench())
                            : std::string("not declared")) +
            (e.measured_bench() ? absl::StrFormat(", measured %d", e.measured_bench()) : ""));
    if (e.has_source_tree()) {
      const v1::SourceTree& t = e.source_tree();
      out << absl::StrFormat("  source %s%s, archive %s, build '%s'%s\n", t.origin(),
                             t.revision().empty() ? "" : " at " + t.revision(), t.sha256(),
                             t.build().empty() ? "make" : t.build(),
                             t.binary().empty() ? "" : ", binary " + t.binary());
    }
  }
  if (run.has_clock_scale()) {
    const v1::ClockScaleSpread& c = run.clock_scale();
    out << absl::StrFormat(
        "Clocks: scaled to %d nodes/s; %d workers, scale %.4f..%.4f (measured %d..%d nodes/s)\n",
        c.reference_nps(), c.workers(), c.min_factor(), c.max_factor(), c.min_nps(), c.max_nps());
  }
  for (const v1::EngineRefusal& r : run.refusals())
    out << absl::StrFormat("Refused by worker %s (%s): engine '%s': %s\n", r.worker_name(),
                           r.worker_id(), r.engine(), r.reason());
  if (run.has_perft()) {
    const v1::PerftRunStatus& p = run.perft();
    out << absl::StrFormat("Perft: depth %d of %s%s\n", p.request().perft().depth(),
                           p.result().fen(), p.request().verify() ? " (verified)" : "");
    out << absl::StrFormat("Split: depth %d, %d positions, %d unique\n", p.split_depth(),
                           p.split_positions(), p.unique_positions());
    if (p.streamed())
      out << absl::StrFormat(
          "Streamed: %d shards from the %d positions at ply %d, %.1f %% "
          "done\n",
          p.chunks(), p.chunk_positions(), p.chunk_ply(),
          p.chunk_positions() > 0
              ? 100.0 * double(p.chunk_positions_expanded()) / double(p.chunk_positions())
              : 100.0);
    out << absl::StrFormat("Nodes: %s in %.3f s (%.1f Mnodes/s)\n", p.result().nodes_decimal(),
                           p.result().seconds(), p.result().nodes_per_second() / 1e6);
    for (const auto& d : p.disagreements())
      out << absl::StrFormat("Disagreement: job %d, worker %s (%s) counted %d, majority %d\n",
                             d.job_id(), d.worker_id(), d.worker_name(), d.worker_nodes(),
                             d.majority_nodes());
  }
}

// Engines for a cluster run: cmd=builtin, cmd=sha256:HEX (an upload), cmd=upload:FILE (uploaded
// now), or an absolute path that exists on every worker.
absl::StatusOr<v1::EngineSpec> RemoteEngineSpec(const match::EngineSpec& e,
                                                const std::string& coordinator) {
  v1::EngineSpec out;
  out.set_name(e.name);
  if (!e.source.empty()) {
    absl::StatusOr<v1::SourceTree> tree = UploadSourceTree(e, coordinator);
    if (!tree.ok()) return tree.status();
    *out.mutable_source_tree() = *std::move(tree);
    for (const std::string& a : e.args) out.add_args(a);
  } else if (e.cmd.starts_with("upload:") || e.cmd.starts_with("sha256:")) {
    if (e.cmd.starts_with("sha256:")) {
      out.set_sha256(e.cmd.substr(7));
    } else {
      absl::StatusOr<v1::Engine> up = UploadEngineFile(coordinator, e.cmd.substr(7), e.name);
      if (!up.ok()) return up.status();
      out.set_sha256(up->sha256());
    }
    for (const std::string& a : e.args) out.add_args(a);
  } else if (e.cmd == "builtin") {
    if (!e.args.empty())
      return absl::InvalidArgumentError(
          Cat("--engine ", e.name, ": cmd=builtin takes no arguments (use option.X=V)"));
    out.set_builtin(true);
  } else if (!e.cmd.empty() && e.cmd[0] == '/') {
    out.set_path(e.cmd);
    for (const std::string& a : e.args) out.add_args(a);
  } else {
    return absl::InvalidArgumentError(
        Cat("--engine ", e.name,
            ": with --coordinator, cmd must be 'builtin' (arbiter's own engine), an absolute "
            "path that exists on every worker, upload:FILE or sha256:HEX, got '",
            e.cmd, "'"));
  }
  if (!e.dir.empty() || !e.env.empty())
    return absl::InvalidArgumentError(
        Cat("--engine ", e.name, ": dir= and env.X= are not supported with --coordinator"));
  for (const auto& [k, v] : e.options) (*out.mutable_options())[k] = v;
  out.set_tc(e.tc);
  out.set_bench(e.bench);
  out.set_cpu_level(uint32_t(e.cpu_level));
  if (e.protocol == match::Protocol::kXboard) {
    if (out.builtin())
      return absl::InvalidArgumentError(
          Cat("--engine ", e.name, ": the builtin engine speaks UCI, not proto=xboard"));
    out.set_protocol(v1::ENGINE_PROTOCOL_XBOARD);
  }
  return out;
}

}  // namespace arbiter::cli
