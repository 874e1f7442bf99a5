// The residual check of match runs (docs/residuals.md): every worker's games are kept apart, and
// a worker whose score is improbable beside the rest of the run's is set aside: its games leave
// the run's count, it and its token take no more of the run's jobs, and an admin accepts or voids
// them; a restart keeps all of it. Honest workers are not flagged. The games are legal, so that
// only the statistic can tell the liar (the replay accepts every one of them).
#include "stats/residuals.h"

#include <cmath>
#include <functional>
#include <random>

#include "coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

// Moves of a game White wins, and of one Black wins (both mates within 5 plies).
const std::vector<const char*> kWhiteMates = {"e2e4", "f7f6", "d2d4", "g7g5", "d1h5"};
const std::vector<const char*> kBlackMates = {"f2f3", "e7e5", "g2g4", "d8h4"};

// The job's game pairs, pair p scoring score(p) for the first engine: 0 (two losses), 1 (a win
// with White, a loss with Black) or 2 (two wins).
v1::MatchJobResult PairsScoring(const v1::Job& job, const std::function<int(uint64_t)>& score) {
  v1::MatchJobResult out;
  for (uint64_t p = job.match().first_pair(); p < job.match().first_pair() + job.match().pairs();
       ++p) {
    const int s = score(p);
    for (uint32_t g = 0; g < 2; ++g) {
      // The first engine plays White in game 0 and wins it when s >= 1; Black in game 1, won when
      // s == 2.
      const bool first_wins = g == 0 ? s >= 1 : s == 2;
      const bool white_wins = first_wins == (g == 0);
      v1::ReportedGame* game = out.add_games();
      game->set_pair(p);
      game->set_game(g);
      game->set_start_fen(std::string(Position::kStartFen));
      for (const char* m : white_wins ? kWhiteMates : kBlackMates) game->add_moves(m);
      game->set_result(white_wins ? v1::GAME_RESULT_WHITE_WINS : v1::GAME_RESULT_BLACK_WINS);
      game->set_end(v1::GAME_END_NORMAL);
      game->set_pgn("[Round \"" + std::to_string(job.match().round_offset() + 2 * p + g + 1) +
                    "\"]\n");
    }
  }
  return out;
}

class ResidualsTest : public CoordinatorTest {
 protected:
  // A match of `games` games in jobs of 4 pairs.
  uint64_t SubmitMatch(uint64_t games) {
    absl::StatusOr<v1::Run> run = c_->SubmitMatch(BuiltinMatch(games, 4));
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->id() : 0;
  }
  absl::Status CompleteGames(const std::string& worker, const std::string& token,
                             const v1::Job& job, const v1::MatchJobResult& games) {
    v1::CompleteJobRequest req;
    req.set_worker_id(worker);
    req.set_job_id(job.job_id());
    req.set_lease_id(job.lease_id());
    *req.mutable_match() = games;
    std::promise<absl::Status> p;
    c_->CompleteJob(
        req, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r.status()); },
        Caller{token, v1::ROLE_WORKER});
    return p.get_future().get();
  }
  // An honest worker's pair: 0, 1, 1 or 2 with equal chances, from the test's fixed seed.
  int HonestPair() { return std::array<int, 4>{0, 1, 1, 2}[rng_() % 4]; }

  struct Worker {
    std::string id, token;
    bool liar = false;
  };
  // Workers take the run's jobs in turn until none is left to them; the liar reports two wins in
  // every pair. Returns the honest pairs counted.
  uint64_t Play(std::vector<Worker>& workers) {
    uint64_t honest = 0;
    for (bool any = true; any;) {
      any = false;
      for (Worker& w : workers) {
        std::optional<v1::Job> job = Acquire(w.id, w.token);
        if (!job) continue;
        any = true;
        const v1::MatchJobResult games =
            PairsScoring(*job, [&](uint64_t) { return w.liar ? 2 : HonestPair(); });
        EXPECT_TRUE(CompleteGames(w.id, w.token, *job, games).ok());
        if (!w.liar) honest += job->match().pairs();
      }
    }
    return honest;
  }
  std::vector<Worker> Workers(int honest, bool liar) {
    std::vector<Worker> out;
    for (int i = 0; i < honest; ++i) {
      const std::string token = "honest" + std::to_string(i);
      out.push_back({Register(token, "", token), token});
    }
    if (liar) out.push_back({Register("liar", "", "liar"), "liar", true});
    return out;
  }
  v1::Run Run(uint64_t id) { return *c_->GetRun(id); }

  std::mt19937 rng_{44};
};

TEST(ResidualStatistic, KnownInputGivesKnownResidual) {
  // Worker: 10 pairs of score 1 (mean 1); rest: 10 of 1/2 and 10 of 0 (mean 1/4). All 30 pairs,
  // half a pair added to each cell: n = 32.5, mean = (10.5*1 + 10.5*.5 + .5*.25 + .5*.75 +
  // 10.5*0) / 32.5 = 1/2, and the residual is (1 - .25) / sqrt(var * (1/10 + 1/20)).
  const stats::Pentanomial worker{{0, 0, 0, 0, 10}}, rest{{10, 0, 10, 0, 0}};
  const double n = 32.5, mean = (10.5 + 10.5 * 0.5 + 0.5 * 0.25 + 0.5 * 0.75) / n;
  const double second = (10.5 + 10.5 * 0.25 + 0.5 * 0.0625 + 0.5 * 0.5625) / n;
  const double expected = 0.75 / std::sqrt((second - mean * mean) * (0.1 + 0.05));
  EXPECT_NEAR(stats::PairScoreResidual(worker, rest), expected, 1e-12);
  EXPECT_NEAR(expected, 4.7897, 1e-3);
  EXPECT_NEAR(stats::PairScoreResidual(rest, worker), -expected, 1e-12) << "antisymmetric";
  EXPECT_EQ(stats::PairScoreResidual({}, rest), 0);
  // Two-sided bound 1e-6 shared among the workers judged (Bonferroni).
  EXPECT_NEAR(stats::ResidualThreshold(1), 4.8916, 1e-3);
  EXPECT_NEAR(stats::ResidualThreshold(3), 5.1036, 1e-3);
  EXPECT_NEAR(stats::NormalQuantile(0.975), 1.959964, 1e-6);
}

// Three honest workers over 1,200 pairs (300 jobs): judged after every job, never flagged.
TEST_F(ResidualsTest, HonestWorkersAreNeverFlagged) {
  const uint64_t run = SubmitMatch(2400);
  std::vector<Worker> workers = Workers(3, false);
  EXPECT_EQ(Play(workers), 1200u);
  const v1::Run done = Run(run);
  EXPECT_EQ(done.state(), v1::RUN_STATE_SUCCEEDED) << done.message();
  EXPECT_EQ(done.match().residuals_size(), 0);
  EXPECT_EQ(done.match().result().games(), 2400u);
}

// A worker that reports two wins in every pair among three honest ones is set aside: its games
// leave the count, it and its token get no more jobs of the run, the run waits for an admin when
// its jobs are done; a restart keeps it; voided, the run ends without them.
TEST_F(ResidualsTest, ALiarIsSetAsideAndItsGamesVoided) {
  const uint64_t run = SubmitMatch(800);  // 400 pairs, 100 jobs
  std::vector<Worker> workers = Workers(3, true);
  const uint64_t honest = Play(workers);
  v1::Run r = Run(run);
  ASSERT_EQ(r.match().residuals_size(), 1) << r.message();
  const v1::WorkerResidual& v = r.match().residuals(0);
  EXPECT_EQ(v.worker_id(), workers[3].id);
  EXPECT_EQ(v.token(), "liar");
  EXPECT_EQ(v.state(), v1::RESIDUAL_STATE_SET_ASIDE);
  EXPECT_GT(v.residual(), v.threshold());
  const uint64_t liar_pairs = v.pentanomial(4);
  EXPECT_GE(liar_pairs, stats::kResidualMinPairs);
  // A quarter of the jobs would be its own had it kept taking them after the flag.
  EXPECT_LT(liar_pairs, 40u) << "caught late, or it took jobs after it was set aside";
  EXPECT_EQ(honest + liar_pairs, 400u) << "a pair played twice or not at all";
  EXPECT_EQ(r.match().result().pairs(), honest) << "its games are still counted";
  EXPECT_EQ(r.state(), v1::RUN_STATE_RUNNING) << "finished with games awaiting a decision";
  EXPECT_EQ(r.jobs().done(), r.jobs().total());
  EXPECT_NE(r.message().find("set aside by the residual check"), std::string::npos) << r.message();
  // The worker carries a flag (`arbiter workers`).
  bool flagged = false;
  const v1::ListWorkersResponse listed = c_->ListWorkers({});
  for (const v1::WorkerStatus& w : listed.workers())
    if (w.worker_id() == workers[3].id)
      for (const std::string& f : w.flags()) flagged |= f.find("residual") != std::string::npos;
  EXPECT_TRUE(flagged);

  Open();  // a restart keeps the verdict and the count without the liar's games
  r = Run(run);
  ASSERT_EQ(r.match().residuals_size(), 1);
  EXPECT_EQ(r.match().residuals(0).state(), v1::RESIDUAL_STATE_SET_ASIDE);
  EXPECT_EQ(r.match().residuals(0).pentanomial(4), liar_pairs);
  EXPECT_EQ(r.match().result().pairs(), honest);
  EXPECT_EQ(r.state(), v1::RUN_STATE_RUNNING);

  EXPECT_EQ(c_->DecideResidual(run, "nobody", v1::RESIDUAL_STATE_VOIDED).status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<v1::Run> decided =
      c_->DecideResidual(run, workers[3].id, v1::RESIDUAL_STATE_VOIDED);
  ASSERT_TRUE(decided.ok()) << decided.status();
  EXPECT_EQ(decided->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(decided->match().result().pairs(), honest);
  EXPECT_EQ(decided->match().residuals(0).state(), v1::RESIDUAL_STATE_VOIDED);
  EXPECT_NE(decided->message().find("voided by an admin"), std::string::npos) << decided->message();
  EXPECT_EQ(c_->DecideResidual(run, workers[3].id, v1::RESIDUAL_STATE_ACCEPTED).status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "a finished run's result changed";
  absl::StatusOr<v1::GetPgnResponse> pgn = c_->GetPgn(run);
  ASSERT_TRUE(pgn.ok()) << pgn.status();
  EXPECT_EQ(pgn->games(), 2 * honest) << "the PGN holds the voided games";
}

// Accepted, the liar's games count again (the admin vouched for them), it takes the run's jobs
// again, and a restart keeps the decision.
TEST_F(ResidualsTest, AcceptedGamesCountAgain) {
  const uint64_t run = SubmitMatch(1600);  // 800 pairs, 200 jobs
  std::vector<Worker> workers = Workers(3, true);
  // Until the liar is set aside, with jobs left.
  v1::Run r;
  for (int round = 0; round < 50; ++round) {
    for (Worker& w : workers) {
      std::optional<v1::Job> job = Acquire(w.id, w.token);
      if (!job) {
        ASSERT_TRUE(w.liar) << "an honest worker got no job";
        break;  // set aside by an honest worker's result in this round
      }
      ASSERT_TRUE(
          CompleteGames(w.id, w.token, *job,
                        PairsScoring(*job, [&](uint64_t) { return w.liar ? 2 : HonestPair(); }))
              .ok());
    }
    r = Run(run);
    if (r.match().residuals_size() > 0) break;
  }
  ASSERT_EQ(r.match().residuals_size(), 1);
  EXPECT_FALSE(Acquire(workers[3].id, "liar")) << "a set-aside worker took a job";
  const std::string other = Register("liar2", "", "liar");
  EXPECT_FALSE(Acquire(other, "liar")) << "another worker of its token took a job";
  const uint64_t before = r.match().result().pairs(),
                 liar_pairs = r.match().residuals(0).pentanomial(4);

  absl::StatusOr<v1::Run> decided =
      c_->DecideResidual(run, workers[3].id, v1::RESIDUAL_STATE_ACCEPTED);
  ASSERT_TRUE(decided.ok()) << decided.status();
  EXPECT_EQ(decided->match().result().pairs(), before + liar_pairs);
  EXPECT_EQ(
      decided->match().result().stats().penta().ww() - r.match().result().stats().penta().ww(),
      liar_pairs);
  EXPECT_EQ(decided->match().residuals(0).state(), v1::RESIDUAL_STATE_ACCEPTED);
  EXPECT_TRUE(Acquire(workers[3].id, "liar")) << "an accepted worker gets no job";

  Open();
  r = Run(run);
  ASSERT_EQ(r.match().residuals_size(), 1);
  EXPECT_EQ(r.match().residuals(0).state(), v1::RESIDUAL_STATE_ACCEPTED);
  EXPECT_EQ(r.match().result().pairs(), before + liar_pairs) << "the restart lost the decision";
}

}  // namespace
}  // namespace arbiter::coordinator
