// Tournament planning, validation, fault attribution and ratings of match/tournament runs.
#include "coordinator/match_run.h"

#include <set>

#include "gtest/gtest.h"

namespace arbiter::coordinator {
namespace {

v1::SubmitTournamentRequest Tournament(int engines, uint32_t games, bool gauntlet = false) {
  v1::SubmitTournamentRequest req;
  for (int i = 0; i < engines; ++i) {
    v1::EngineSpec* e = req.add_engines();
    e->set_name(std::string(1, char('a' + i)));
    e->set_builtin(true);
  }
  req.set_tc("depth=3");
  req.set_games_per_pairing(games);
  req.set_gauntlet(gauntlet);
  req.set_pairs_per_job(2);
  return req;
}

bool NoUploads(const std::string&) { return false; }

TEST(TournamentPlan, RoundRobinAndGauntletPairings) {
  EXPECT_EQ(TournamentPairings(Tournament(4, 2)).size(), 6u);
  const auto gauntlet = TournamentPairings(Tournament(4, 2, true));
  ASSERT_EQ(gauntlet.size(), 3u);
  for (auto [first, second] : gauntlet) EXPECT_EQ(first, 0);
}

// Every pairing's pairs are covered once, jobs are interleaved across pairings, and PGN rounds
// are unique across the tournament.
TEST(TournamentPlan, JobsCoverEveryPairOnceInterleaved) {
  const v1::SubmitTournamentRequest req = Tournament(3, 6);
  const std::vector<v1::MatchJob> jobs = PlanTournamentJobs(req);
  ASSERT_EQ(jobs.size(), 6u);  // 3 pairings x (2 + 1 pairs)
  for (int k = 0; k < 3; ++k) EXPECT_EQ(jobs[k].pairing(), uint32_t(k));
  std::set<uint64_t> rounds;
  uint64_t games = 0;
  for (const v1::MatchJob& job : jobs) {
    const auto pairing = TournamentPairings(req)[job.pairing()];
    EXPECT_EQ(job.engines(0).name(), req.engines(pairing.first).name());
    EXPECT_EQ(job.engines(1).name(), req.engines(pairing.second).name());
    for (uint64_t p = job.first_pair(); p < job.first_pair() + job.pairs(); ++p)
      for (int g = 0; g < 2; ++g) rounds.insert(job.round_offset() + 2 * p + g + 1), ++games;
  }
  EXPECT_EQ(games, 18u);
  EXPECT_EQ(rounds.size(), 18u);
  EXPECT_EQ(*rounds.begin(), 1u);
  EXPECT_EQ(*rounds.rbegin(), 18u);
}

// A job carries one opening per pair (the book wraps), not the whole book.
TEST(MatchPlan, JobsCarryTheirOwnOpenings) {
  v1::SubmitMatchRequest req = PairingRequest(Tournament(2, 10), 0, 1);
  req.set_openings("# book\nFEN0\n\nFEN1\nFEN2\n");
  const std::vector<v1::MatchJob> jobs = PlanMatchJobs(req);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].openings(), "FEN0\nFEN1\n");
  EXPECT_EQ(jobs[1].openings(), "FEN2\nFEN0\n");
  EXPECT_EQ(jobs[2].openings(), "FEN1\n");
  for (const v1::MatchJob& job : jobs) EXPECT_TRUE(job.openings_per_pair());
  req.clear_openings();
  EXPECT_FALSE(PlanMatchJobs(req)[0].openings_per_pair());
}

TEST(MatchPlan, DefaultBatchFollowsWorkerThreads) {
  EXPECT_EQ(DefaultPairsPerJob(0, 0), 2u);
  EXPECT_EQ(DefaultPairsPerJob(1, 0), 2u);
  EXPECT_EQ(DefaultPairsPerJob(8, 0), 8u);
  EXPECT_EQ(DefaultPairsPerJob(8, 4), 4u);
  EXPECT_EQ(DefaultPairsPerJob(256, 0), 64u);
}

TEST(TournamentPlan, BadRequestsAreInvalidArgument) {
  auto check = [](const v1::SubmitTournamentRequest& req, const std::string& message) {
    absl::Status st = ValidateTournamentRequest(req, NoUploads);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_NE(std::string(st.message()).find(message), std::string::npos) << st;
  };
  check(Tournament(1, 2), "at least 2 engines, got 1");
  check(Tournament(3, 3), "games_per_pairing must be even and positive, got 3");
  check(Tournament(3, 0), "games_per_pairing must be even and positive, got 0");
  v1::SubmitTournamentRequest same = Tournament(3, 2);
  same.mutable_engines(2)->set_name("a");
  check(same, "engines 1 and 3 are both named 'a'");
  v1::SubmitTournamentRequest unknown = Tournament(3, 2);
  unknown.mutable_engines(1)->set_sha256(std::string(64, 'c'));
  check(unknown, "engine 'b': no engine with sha256 cccc");
  v1::SubmitTournamentRequest relative = Tournament(2, 2);
  relative.mutable_engines(1)->set_path("bin/engine");
  check(relative, "path must be absolute");
  EXPECT_TRUE(ValidateTournamentRequest(Tournament(3, 2), NoUploads).ok());
  v1::SubmitTournamentRequest greedy = Tournament(3, 2);
  greedy.mutable_rules()->mutable_engine_limits()->set_memory_mb(uint64_t(1) << 21);
  check(greedy, "rules.engine_limits.memory_mb must be at most 1048576, got 2097152");
  greedy.mutable_rules()->mutable_engine_limits()->set_memory_mb(512);
  greedy.mutable_rules()->mutable_engine_limits()->set_processes(1 << 20);
  check(greedy, "rules.engine_limits.processes must be at most 65536");
}

v1::ReportedGame Game(uint64_t pair, uint32_t g, const std::string& result, const std::string& end,
                      const std::string& faulty = "") {
  v1::ReportedGame out;
  out.set_pair(pair);
  out.set_game(g);
  out.set_result(result);
  out.set_end(end);
  out.set_faulty(faulty);
  out.set_engine_moves(10);
  return out;
}

// Faults go to the engine that played the faulty colour in that game.
TEST(MatchTally, FaultsByEngineAndPentanomial) {
  MatchTally tally;
  v1::MatchJobResult r;
  *r.add_games() = Game(0, 0, "1-0", "time forfeit", "black");  // second engine flagged
  *r.add_games() = Game(0, 1, "1-0", "illegal move", "black");  // first engine (Black) erred
  *r.add_games() = Game(1, 0, "1/2-1/2", "normal");
  *r.add_games() = Game(1, 1, "0-1", "normal");  // first engine (Black) won
  tally.Add(r);
  EXPECT_EQ(tally.faults[1].time_losses, 1u);
  EXPECT_EQ(tally.faults[0].illegal_moves, 1u);
  EXPECT_EQ(tally.faults[0].time_losses + tally.faults[1].illegal_moves, 0u);
  EXPECT_EQ(tally.pentanomial.counts[2], 1u);  // win + loss
  EXPECT_EQ(tally.pentanomial.counts[3], 1u);  // draw + win
  EXPECT_EQ(tally.trinomial.wins, 2u);
  EXPECT_EQ(tally.moves, 40u);
  v1::MatchRunStatus status;
  status.mutable_request()->add_engines()->set_name("x");
  status.mutable_request()->add_engines()->set_name("y");
  tally.Fill(std::nullopt, status);
  ASSERT_EQ(status.faults_size(), 2);
  EXPECT_EQ(status.faults(1).name(), "y");
  EXPECT_EQ(status.faults(1).time_losses(), 1u);
}

// Ratings for every engine once the games connect them, anchored at the first, best first.
TEST(TournamentStatus, RatesAllEnginesAnchoredAtTheFirst) {
  const v1::SubmitTournamentRequest req = Tournament(3, 4);
  std::vector<MatchTally> tallies(3);
  v1::TournamentRunStatus status;
  FillTournamentStatus(req, tallies, status);
  EXPECT_EQ(status.standings_size(), 0) << "no games yet";
  // a-b: a wins 3 of 4; a-c: even; b-c: c wins 3 of 4.
  tallies[0].trinomial = {.losses = 1, .draws = 0, .wins = 3};
  tallies[1].trinomial = {.losses = 1, .draws = 2, .wins = 1};
  tallies[2].trinomial = {.losses = 3, .draws = 0, .wins = 1};
  FillTournamentStatus(req, tallies, status);
  ASSERT_EQ(status.pairings_size(), 3);
  EXPECT_EQ(status.pairings(2).request().engines(0).name(), "b");
  EXPECT_EQ(status.games(), 12u);
  ASSERT_EQ(status.standings_size(), 3);
  EXPECT_EQ(status.standings(2).name(), "b") << "b lost most";
  for (const v1::TournamentStanding& s : status.standings()) {
    EXPECT_EQ(s.games(), 8u);
    if (s.name() == "a")
      EXPECT_EQ(s.elo(), 0.0);
    else
      EXPECT_GT(s.elo_error95(), 0.0);
  }
}

// The replay applies the Laws to games lost by a fault: a worker that reports a loss where the
// opponent could not checkmate (a draw) is refused, and the draw is accepted.
TEST(MatchReplay, ForfeitsFollowTheLaws) {
  v1::MatchJob job;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = job.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  job.set_tc("1+0.1");
  job.set_pairs(1);
  auto result = [](const std::string& end, const std::string& faulty, const std::string& res) {
    v1::MatchJobResult r;
    for (int g = 0; g < 2; ++g) {
      v1::ReportedGame* game = r.add_games();
      game->set_pair(0);
      game->set_game(uint32_t(g));
      game->set_start_fen("4k3/8/8/8/8/8/8/KQ6 w - - 0 1");  // K+Q vs a bare king, White to move
      game->set_end(end);
      game->set_faulty(faulty);
      game->set_result(res);
    }
    return r;
  };
  // White (the queen side) stalls or crashes on its turn: Black cannot mate, so a draw.
  for (const char* end : {"stall", "time forfeit", "disconnect"}) {
    absl::Status loss = CheckMatchResult(job, result(end, "white", "0-1"));
    EXPECT_EQ(loss.code(), absl::StatusCode::kInvalidArgument) << end;
    EXPECT_NE(loss.message().find("cannot checkmate"), std::string::npos) << loss;
    EXPECT_TRUE(CheckMatchResult(job, result(end, "white", "1/2-1/2")).ok()) << end;
  }
  // An illegal move is a plain loss; a fault with no side named is refused.
  EXPECT_TRUE(CheckMatchResult(job, result("illegal move", "white", "0-1")).ok());
  EXPECT_FALSE(CheckMatchResult(job, result("stall", "", "0-1")).ok());
  // Without a clock there is no flag: the staller loses.
  job.set_tc("depth=3");
  EXPECT_TRUE(CheckMatchResult(job, result("stall", "white", "0-1")).ok());
  EXPECT_FALSE(CheckMatchResult(job, result("stall", "white", "1/2-1/2")).ok());
}

}  // namespace
}  // namespace arbiter::coordinator
