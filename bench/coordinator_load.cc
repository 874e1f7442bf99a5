// Load generator for bench/coordinator_load.sh: N lightweight simulated workers (gRPC callback
// clients sharing a few channels) acquire, heartbeat and complete tiny perft jobs against one
// coordinator. The jobs are really counted (depth 1), so the run's total checks the result.
// Given a PGN file, the run is a match instead: each job (2 game pairs) is completed with games
// of that file (real moves and PGN text), which the coordinator replays before counting them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/notation.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/pgn.h"
#include "engine/position.h"
#include "engine/rules.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  std::vector<std::unique_ptr<arbiter::v1::WorkService::Stub>> stubs;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> completions{0}, errors{0};
  std::mutex mu;
  std::vector<double> latencies;  // CompleteJob round trips, seconds
  std::atomic<int> active{0};
  std::vector<arbiter::v1::ReportedGame> games;  // match mode: templates of reported games
};

// A reported game as a worker would send it, from a PGN game.
arbiter::v1::ReportedGame ToReported(const arbiter::PgnGame& g) {
  arbiter::v1::ReportedGame out;
  out.set_start_fen(g.start.Fen());
  arbiter::Game game = *arbiter::Game::FromFen(g.start.Fen());
  arbiter::Position pos = g.start;
  for (arbiter::Move m : g.moves) {
    out.add_moves(arbiter::MoveToUci(pos, m));
    (void)game.PlayUci(out.moves(out.moves_size() - 1));
    arbiter::UndoInfo undo;
    pos.DoMove(m, undo);
  }
  const arbiter::GameOutcome outcome = game.Outcome();
  const std::string_view result =
      outcome.IsOver() ? arbiter::ResultString(outcome.result) : std::string_view(g.result);
  out.set_result(result == "1-0"   ? arbiter::v1::GAME_RESULT_WHITE_WINS
                 : result == "0-1" ? arbiter::v1::GAME_RESULT_BLACK_WINS
                                   : arbiter::v1::GAME_RESULT_DRAW);
  out.set_end(outcome.IsOver() ? arbiter::v1::GAME_END_NORMAL : arbiter::v1::GAME_END_ADJUDICATION);
  out.set_pgn(arbiter::WritePgn(g));
  out.set_engine_moves(uint32_t(g.moves.size()));
  return out;
}

// One simulated worker: a chain of async calls, each started from the previous one's callback.
class SimWorker {
 public:
  SimWorker(Shared* s, arbiter::v1::WorkService::Stub* stub, std::string id)
      : s_(s), stub_(stub), id_(std::move(id)) {}
  void Start() {
    s_->active++;
    Acquire();
  }

 private:
  void Acquire() {
    if (s_->stop) {
      s_->active--;
      return;
    }
    ctx_ = std::make_unique<grpc::ClientContext>();
    ctx_->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    acquire_req_.set_worker_id(id_);
    acquire_req_.set_wait_seconds(1);
    acquire_resp_.Clear();
    stub_->async()->AcquireJob(ctx_.get(), &acquire_req_, &acquire_resp_, [this](grpc::Status st) {
      if (!st.ok() || !acquire_resp_.has_job()) {
        if (!st.ok()) s_->errors++;
        return Acquire();
      }
      Heartbeat();
    });
  }
  void Heartbeat() {
    const arbiter::v1::Job& job = acquire_resp_.job();
    ctx_ = std::make_unique<grpc::ClientContext>();
    ctx_->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    hb_req_.set_worker_id(id_);
    hb_req_.set_job_id(job.job_id());
    hb_req_.set_lease_id(job.lease_id());
    stub_->async()->Heartbeat(ctx_.get(), &hb_req_, &hb_resp_, [this](grpc::Status st) {
      if (!st.ok()) s_->errors++;
      Complete();
    });
  }
  void Complete() {
    const arbiter::v1::Job& job = acquire_resp_.job();
    complete_req_.Clear();
    complete_req_.set_worker_id(id_);
    complete_req_.set_job_id(job.job_id());
    complete_req_.set_lease_id(job.lease_id());
    if (job.has_match()) {
      for (uint64_t p = job.match().first_pair();
           p < job.match().first_pair() + job.match().pairs(); ++p) {
        for (uint32_t g = 0; g < 2; ++g) {
          arbiter::v1::ReportedGame* r = complete_req_.mutable_match()->add_games();
          *r = s_->games[(2 * p + g) % s_->games.size()];
          r->set_pair(p);
          r->set_game(g);
        }
      }
    } else {
      std::vector<arbiter::Position> positions;
      const std::string& packed = job.perft().packed_positions();
      if (!packed.empty()) {
        const arbiter::Position root = *arbiter::Position::FromFen(job.perft().root_fen());
        for (size_t i = 0; i < packed.size(); i += arbiter::kPackedPositionSize)
          positions.push_back(*arbiter::UnpackPosition(
              std::string_view(packed).substr(i, arbiter::kPackedPositionSize), root));
      }
      auto counts = arbiter::PerftBatch(positions, {.depth = int(job.perft().depth())});
      for (uint64_t c : *counts) complete_req_.mutable_perft()->add_counts(c);
    }
    ctx_ = std::make_unique<grpc::ClientContext>();
    ctx_->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    started_ = Clock::now();
    stub_->async()->CompleteJob(
        ctx_.get(), &complete_req_, &complete_resp_, [this](grpc::Status st) {
          double s = std::chrono::duration<double>(Clock::now() - started_).count();
          if (st.ok()) {
            s_->completions++;
            std::lock_guard<std::mutex> lock(s_->mu);
            s_->latencies.push_back(s);
          } else {
            s_->errors++;
          }
          Acquire();
        });
  }

  Shared* s_;
  arbiter::v1::WorkService::Stub* stub_;
  std::string id_;
  std::unique_ptr<grpc::ClientContext> ctx_;
  arbiter::v1::AcquireJobRequest acquire_req_;
  arbiter::v1::AcquireJobResponse acquire_resp_;
  arbiter::v1::HeartbeatRequest hb_req_;
  arbiter::v1::HeartbeatResponse hb_resp_;
  arbiter::v1::CompleteJobRequest complete_req_;
  arbiter::v1::CompleteJobResponse complete_resp_;
  Clock::time_point started_;
};

uint64_t PerftOfStart(uint32_t depth) {
  constexpr uint64_t kNodes[] = {1, 20, 400, 8902, 197281, 4865609};
  return depth < 6 ? kNodes[depth] : 0;
}

// Submits `requests` (perft runs) and waits until every one has succeeded; returns the
// completions per second from the end of the last submission to the last run's end (planning
// the runs, a perft split each, is not the scheduler's throughput), or -1 when a run's total is
// wrong or the wait timed out.
double MeasurePerftRuns(arbiter::v1::RunService::Stub& runs, Shared& shared,
                        const std::vector<arbiter::v1::SubmitPerftRequest>& requests) {
  std::vector<uint64_t> ids;
  for (const arbiter::v1::SubmitPerftRequest& req : requests) {
    arbiter::v1::SubmitRunResponse submitted;
    grpc::ClientContext ctx;
    grpc::Status st = runs.SubmitPerft(&ctx, req, &submitted);
    if (!st.ok()) {
      std::fprintf(stderr, "submit: %s\n", st.error_message().c_str());
      return -1;
    }
    ids.push_back(submitted.run().id());
  }
  const uint64_t before = shared.completions;
  const auto start = Clock::now();
  size_t done = 0;
  bool exact = true;
  while (done < ids.size()) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > 600) return -1;
    arbiter::v1::GetRunRequest req;
    req.set_run_id(ids[done]);
    arbiter::v1::Run run;
    grpc::ClientContext ctx;
    if (runs.GetRun(&ctx, req, &run).ok() && run.state() == arbiter::v1::RUN_STATE_SUCCEEDED) {
      exact &= run.perft().result().nodes() == PerftOfStart(run.perft().request().perft().depth());
      ++done;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return exact ? double(shared.completions - before) / elapsed : -1;
}

// perft(depth) of the start position split at depth - 1 (jobs of positions to count at depth
// 1) into about `jobs` jobs, at `priority`.
arbiter::v1::SubmitPerftRequest PerftRequest(int jobs, int depth = 5, int priority = 0) {
  arbiter::v1::SubmitPerftRequest submit;
  submit.mutable_perft()->set_fen(std::string(arbiter::Position::kStartFen));
  submit.mutable_perft()->set_depth(depth);
  submit.set_split_depth(depth - 1);
  submit.set_target_jobs(uint32_t(jobs));
  submit.mutable_scheduling()->set_priority(priority);
  return submit;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s HOST:PORT [workers=1000] [jobs=20000] [channels=8] [GAMES.pgn]\n",
                 argv[0]);
    return 2;
  }
  const std::string address = argv[1];
  const int workers = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int jobs = argc > 3 ? std::atoi(argv[3]) : 20000;
  const int channels = argc > 4 ? std::atoi(argv[4]) : 8;
  Shared shared;
  if (argc > 5) {
    auto games = arbiter::ReadPgnFile(argv[5]);
    if (!games.ok() || games->empty()) {
      std::fprintf(stderr, "%s: no games\n", argv[5]);
      return 1;
    }
    for (const arbiter::PgnGame& g : *games) shared.games.push_back(ToReported(g));
  }
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);  // distinct channels, distinct connections
    shared.stubs.push_back(arbiter::v1::WorkService::NewStub(arbiter::net::Dial(address, args)));
  }
  auto runs = arbiter::v1::RunService::NewStub(arbiter::net::Dial(address));
  std::vector<std::unique_ptr<SimWorker>> sims;
  for (int i = 0; i < workers; ++i) {
    arbiter::v1::RegisterRequest req;
    req.mutable_worker()->set_name("sim-" + std::to_string(i));
    req.mutable_worker()->set_threads(1);
    arbiter::v1::RegisterResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = shared.stubs[i % channels]->Register(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "register: %s\n", st.error_message().c_str());
      return 1;
    }
    sims.push_back(
        std::make_unique<SimWorker>(&shared, shared.stubs[i % channels].get(), resp.worker_id()));
  }
  // RUNS=N (perft only): one run, then N runs at once of mixed priority (-2..2), with the same
  // workers and jobs of the same shape (10 positions to count at depth 1): perft(5) split at
  // ply 4 into 19,728 jobs, against N x perft(4) split at ply 3 into 890 jobs each.
  const char* many = std::getenv("RUNS");
  if (many && std::atoi(many) > 1 && shared.games.empty()) {
    const int n = std::atoi(many);
    for (auto& sim : sims) sim->Start();
    std::vector<double> one, spread;
    for (int round = 0; round < 3; ++round) {  // alternating, medians: the machine is shared
      one.push_back(MeasurePerftRuns(*runs, shared, {PerftRequest(19728)}));
      std::vector<arbiter::v1::SubmitPerftRequest> requests;
      for (int i = 0; i < n; ++i) requests.push_back(PerftRequest(890, 4, i % 5 - 2));
      spread.push_back(MeasurePerftRuns(*runs, shared, requests));
      std::printf("round %d: 1 run %.0f completions/s, %d runs %.0f completions/s\n", round + 1,
                  one.back(), n, spread.back());
    }
    shared.stop = true;
    while (shared.active > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::sort(one.begin(), one.end());
    std::sort(spread.begin(), spread.end());
    const bool ok = one.front() > 0 && spread.front() > 0;
    std::printf(
        "median: 1 run %.0f completions/s, %d runs of mixed priority %.0f completions/s, "
        "ratio %.3f; every run exact: %s\n",
        one[1], n, spread[1], spread[1] / one[1], ok ? "yes" : "NO");
    return ok ? 0 : 1;
  }
  arbiter::v1::SubmitRunResponse submitted;
  grpc::Status submit_status;
  if (shared.games.empty()) {
    grpc::ClientContext ctx;
    submit_status = runs->SubmitPerft(&ctx, PerftRequest(jobs), &submitted);
  } else {
    arbiter::v1::SubmitMatchRequest submit;
    for (const char* name : {"a", "b"}) {
      arbiter::v1::EngineSpec* e = submit.mutable_settings()->add_engines();
      e->set_name(name);
      e->set_builtin(true);
    }
    submit.mutable_settings()->set_tc("1+0.01");
    submit.set_games(uint32_t(4 * jobs));
    submit.mutable_settings()->set_pairs_per_job(2);
    grpc::ClientContext ctx;
    submit_status = runs->SubmitMatch(&ctx, submit, &submitted);
  }
  if (!submit_status.ok()) {
    std::fprintf(stderr, "submit: %s\n", submit_status.error_message().c_str());
    return 1;
  }
  const uint64_t total_jobs = submitted.run().jobs().total();
  const auto start = Clock::now();
  for (auto& s : sims) s->Start();
  arbiter::v1::Run run;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    arbiter::v1::GetRunRequest req;
    req.set_run_id(submitted.run().id());
    grpc::ClientContext ctx;
    if (runs->GetRun(&ctx, req, &run).ok() && run.state() == arbiter::v1::RUN_STATE_SUCCEEDED)
      break;
    if (std::chrono::duration<double>(Clock::now() - start).count() > 600) break;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  shared.stop = true;
  while (shared.active > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<double> lat;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    lat = shared.latencies;
  }
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) { return lat.empty() ? 0.0 : lat[size_t(p * (lat.size() - 1))]; };
  std::printf("workers %d, jobs %llu, completions %llu, errors %llu\n", workers,
              static_cast<unsigned long long>(total_jobs),
              static_cast<unsigned long long>(shared.completions.load()),
              static_cast<unsigned long long>(shared.errors.load()));
  std::printf("elapsed %.2f s, completions/s %.0f\n", elapsed, shared.completions / elapsed);
  std::printf("CompleteJob latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", 1e3 * pct(0.5),
              1e3 * pct(0.99), lat.empty() ? 0 : 1e3 * lat.back());
  if (!shared.games.empty()) {
    const uint64_t expected = 4 * uint64_t(jobs);
    std::printf(
        "match: %zu template games (%.0f plies on average), %llu games counted "
        "(expected %llu), %llu results refused: %s\n",
        shared.games.size(),
        [&] {
          double plies = 0;
          for (const auto& g : shared.games) plies += g.moves_size();
          return plies / double(shared.games.size());
        }(),
        static_cast<unsigned long long>(run.match().result().games()),
        static_cast<unsigned long long>(expected),
        static_cast<unsigned long long>(run.match().rejected_results()),
        run.match().result().games() == expected ? "exact" : "WRONG");
    return run.match().result().games() == expected ? 0 : 1;
  }
  std::printf("run total %s (expected 4865609): %s\n", run.perft().result().nodes_decimal().c_str(),
              run.perft().result().nodes() == 4865609 ? "exact" : "WRONG");
  return run.perft().result().nodes() == 4865609 ? 0 : 1;
}
