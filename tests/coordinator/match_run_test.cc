// Tournament planning, validation, fault attribution and ratings of match/tournament runs.
#include "coordinator/match_run.h"

#include <set>

#include "engine/position.h"
#include "gtest/gtest.h"

namespace arbiter::coordinator {
namespace {

v1::SubmitTournamentRequest Tournament(int engines, uint32_t games, bool gauntlet = false) {
  v1::SubmitTournamentRequest req;
  for (int i = 0; i < engines; ++i) {
    v1::EngineSpec* e = req.mutable_settings()->add_engines();
    e->set_name(std::string(1, char('a' + i)));
    e->set_builtin(true);
  }
  req.mutable_settings()->set_tc("depth=3");
  req.set_games_per_pairing(games);
  req.set_gauntlet(gauntlet);
  req.mutable_settings()->set_pairs_per_job(2);
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
    EXPECT_EQ(job.engines(0).name(), req.settings().engines(pairing.first).name());
    EXPECT_EQ(job.engines(1).name(), req.settings().engines(pairing.second).name());
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
  req.mutable_settings()->set_openings("# book\nFEN0\n\nFEN1\nFEN2\n");
  const std::vector<v1::MatchJob> jobs = PlanMatchJobs(req);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].openings(), "FEN0\nFEN1\n");
  EXPECT_EQ(jobs[1].openings(), "FEN2\nFEN0\n");
  EXPECT_EQ(jobs[2].openings(), "FEN1\n");
  for (const v1::MatchJob& job : jobs) EXPECT_TRUE(job.openings_per_pair());
  req.mutable_settings()->clear_openings();
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
  same.mutable_settings()->mutable_engines(2)->set_name("a");
  check(same, "engines 1 and 3 are both named 'a'");
  v1::SubmitTournamentRequest unknown = Tournament(3, 2);
  unknown.mutable_settings()->mutable_engines(1)->set_sha256(std::string(64, 'c'));
  check(unknown, "engine 'b': no engine with sha256 cccc");
  v1::SubmitTournamentRequest relative = Tournament(2, 2);
  relative.mutable_settings()->mutable_engines(1)->set_path("bin/engine");
  check(relative, "path must be absolute");
  EXPECT_TRUE(ValidateTournamentRequest(Tournament(3, 2), NoUploads).ok());
  v1::SubmitTournamentRequest greedy = Tournament(3, 2);
  greedy.mutable_settings()->mutable_rules()->mutable_engine_limits()->set_memory_mb(uint64_t(1)
                                                                                     << 21);
  check(greedy, "rules.engine_limits.memory_mb must be at most 1048576, got 2097152");
  greedy.mutable_settings()->mutable_rules()->mutable_engine_limits()->set_memory_mb(512);
  greedy.mutable_settings()->mutable_rules()->mutable_engine_limits()->set_processes(1 << 20);
  check(greedy, "rules.engine_limits.processes must be at most 65536");
}

v1::ReportedGame Game(uint64_t pair, uint32_t g, v1::GameResult result, v1::GameEnd end,
                      v1::Side faulty = v1::SIDE_UNSPECIFIED) {
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
// The fields a match and a tournament share are checked once, in GamesSettings: the same bad
// setting is refused with the same message in both kinds of request.
TEST(GamesSettings, OneCheckForMatchesAndTournaments) {
  const auto both = [](const std::function<void(v1::GamesSettings&)>& spoil) {
    v1::SubmitTournamentRequest tournament = Tournament(2, 2);
    v1::SubmitMatchRequest match = PairingRequest(tournament, 0, 1);
    spoil(*tournament.mutable_settings());
    spoil(*match.mutable_settings());
    const absl::Status t = ValidateTournamentRequest(tournament, NoUploads);
    const absl::Status m = ValidateMatchRequest(match, NoUploads);
    EXPECT_EQ(t.code(), absl::StatusCode::kInvalidArgument) << t;
    EXPECT_EQ(t, m);
    return std::string(t.message());
  };
  EXPECT_NE(both([](v1::GamesSettings& s) { s.set_tc("abc"); }), "");
  EXPECT_NE(both([](v1::GamesSettings& s) { s.set_scale_nps(0); }).find("scale_nps"),
            std::string::npos);
  EXPECT_NE(both([](v1::GamesSettings& s) { s.set_openings_name(std::string(300, 'x')); }), "");
  EXPECT_NE(both([](v1::GamesSettings& s) { s.set_pairs_per_job(100000); }), "");
  EXPECT_TRUE(ValidateGamesSettings(Tournament(2, 2).settings(), NoUploads, true).ok());
}

// A pairing plays with the tournament's settings and its two engines.
TEST(TournamentPlan, APairingKeepsTheTournamentsSettings) {
  v1::SubmitTournamentRequest t = Tournament(3, 4);
  t.mutable_settings()->set_concurrency(3);
  t.mutable_settings()->set_scale_nps(500000);
  t.mutable_settings()->mutable_rules()->set_event("cup");
  t.mutable_settings()->set_openings("FEN0\n");
  const v1::SubmitMatchRequest m = PairingRequest(t, 0, 2, /*with_openings=*/false);
  ASSERT_EQ(m.settings().engines_size(), 2);
  EXPECT_EQ(m.settings().engines(0).name(), "a");
  EXPECT_EQ(m.settings().engines(1).name(), "c");
  EXPECT_EQ(m.settings().tc(), "depth=3");
  EXPECT_EQ(m.settings().concurrency(), 3u);
  EXPECT_EQ(m.settings().scale_nps(), 500000);
  EXPECT_EQ(m.settings().rules().event(), "cup");
  EXPECT_EQ(m.settings().openings(), "");
  EXPECT_EQ(m.games(), 4u);
  EXPECT_EQ(PairingRequest(t, 0, 1).settings().openings(), "FEN0\n");
}

TEST(CountGames, FaultsByEngineAndPentanomial) {
  match::MatchSummary tally;
  v1::MatchJobResult r;
  // Second engine flagged; first engine (Black) erred; a draw; first engine (Black) won.
  *r.add_games() =
      Game(0, 0, v1::GAME_RESULT_WHITE_WINS, v1::GAME_END_TIME_FORFEIT, v1::SIDE_BLACK);
  *r.add_games() =
      Game(0, 1, v1::GAME_RESULT_WHITE_WINS, v1::GAME_END_ILLEGAL_MOVE, v1::SIDE_BLACK);
  *r.add_games() = Game(1, 0, v1::GAME_RESULT_DRAW, v1::GAME_END_NORMAL);
  *r.add_games() = Game(1, 1, v1::GAME_RESULT_BLACK_WINS, v1::GAME_END_NORMAL);
  CountGames(r, tally);
  EXPECT_EQ(tally.faults[1].time_losses, 1u);
  EXPECT_EQ(tally.faults[0].illegal_moves, 1u);
  EXPECT_EQ(tally.faults[0].time_losses + tally.faults[1].illegal_moves, 0u);
  EXPECT_EQ(tally.pentanomial.counts[2], 1u);  // win + loss
  EXPECT_EQ(tally.pentanomial.counts[3], 1u);  // draw + win
  EXPECT_EQ(tally.trinomial.wins, 2u);
  EXPECT_EQ(tally.moves, 40u);
  EXPECT_EQ(tally.terminations["time forfeit"], 1u);
  EXPECT_EQ(tally.terminations["normal"], 2u);
  v1::SubmitMatchRequest request;
  request.mutable_settings()->set_tc("1+0.1");
  request.mutable_settings()->add_engines()->set_name("x");
  request.mutable_settings()->add_engines()->set_name("y");
  const v1::MatchResult status = MatchResultOf(request.settings(), tally, std::nullopt, 10);
  ASSERT_EQ(status.faults_size(), 2);
  EXPECT_EQ(status.faults(1).name(), "y");
  EXPECT_EQ(status.faults(1).time_losses(), 1u);
  EXPECT_EQ(status.stats().penta().d(), 1u);
  EXPECT_EQ(status.stats().wdl().wins(), 2u);
  EXPECT_FALSE(status.has_cpu_ms_per_move()) << "the cluster does not measure it";
}

// The SPRT the server computed is the one `arbiter stats` computes from the same counts.
TEST(CountGames, StatusCarriesTheSprt) {
  match::MatchSummary tally;
  tally.pentanomial.counts[3] = 300;
  tally.pentanomial.counts[2] = 100;
  v1::SubmitMatchRequest request;
  request.mutable_settings()->add_engines()->set_name("x");
  request.mutable_settings()->add_engines()->set_name("y");
  stats::SprtParams sprt{.elo0 = 0, .elo1 = 5};
  const v1::MatchResult status = MatchResultOf(request.settings(), tally, sprt, 0);
  const stats::SprtResult expected = stats::EvaluateSprt(tally.pentanomial, sprt);
  EXPECT_EQ(status.stats().sprt().llr(), expected.llr);
  EXPECT_EQ(status.stats().sprt().upper_bound(), expected.upper);
  EXPECT_EQ(status.stats().sprt().decision(), v1::SPRT_DECISION_ACCEPT_H1);
  EXPECT_EQ(status.stats().sprt().model(), v1::SPRT_MODEL_NORMALIZED);
}

// Ratings for every engine once the games connect them, anchored at the first, best first.
TEST(TournamentStatus, RatesAllEnginesAnchoredAtTheFirst) {
  const v1::SubmitTournamentRequest req = Tournament(3, 4);
  std::vector<match::MatchSummary> tallies(3);
  v1::TournamentRunStatus status;
  FillTournamentStatus(req, tallies, 0, status);
  EXPECT_EQ(status.standings_size(), 0) << "no games yet";
  // a-b: a wins 3 of 4; a-c: even; b-c: c wins 3 of 4.
  tallies[0].trinomial = {.losses = 1, .draws = 0, .wins = 3};
  tallies[1].trinomial = {.losses = 1, .draws = 2, .wins = 1};
  tallies[2].trinomial = {.losses = 3, .draws = 0, .wins = 1};
  for (match::MatchSummary& t : tallies) t.games = 4;
  FillTournamentStatus(req, tallies, 0, status);
  ASSERT_EQ(status.pairings_size(), 3);
  EXPECT_EQ(status.pairings(2).engines(0), "b");
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
  auto result = [](v1::GameEnd end, v1::Side faulty, v1::GameResult res) {
    v1::MatchJobResult r;
    for (int g = 0; g < 2; ++g) {
      v1::ReportedGame* game = r.add_games();
      game->set_pair(0);
      game->set_game(uint32_t(g));
      game->set_start_fen("4k3/8/8/8/8/8/8/KQ6 w - - 0 1");  // K+Q vs a bare king, White to move
      game->add_moves("b1b2");  // each engine has moved once: a fault after that is a game
      game->add_moves("e8d7");
      game->set_engine_moves(2);
      game->set_end(end);
      game->set_faulty(faulty);
      game->set_result(res);
    }
    return r;
  };
  // White (the queen side) stalls or crashes on its turn: Black cannot mate, so a draw.
  for (v1::GameEnd end : {v1::GAME_END_STALL, v1::GAME_END_TIME_FORFEIT, v1::GAME_END_DISCONNECT}) {
    absl::Status loss =
        CheckMatchResult(job, result(end, v1::SIDE_WHITE, v1::GAME_RESULT_BLACK_WINS));
    EXPECT_EQ(loss.code(), absl::StatusCode::kInvalidArgument) << end;
    EXPECT_NE(loss.message().find("cannot checkmate"), std::string::npos) << loss;
    EXPECT_TRUE(CheckMatchResult(job, result(end, v1::SIDE_WHITE, v1::GAME_RESULT_DRAW)).ok())
        << end;
  }
  // An illegal move is a plain loss; a fault with no side named is refused.
  EXPECT_TRUE(CheckMatchResult(job, result(v1::GAME_END_ILLEGAL_MOVE, v1::SIDE_WHITE,
                                           v1::GAME_RESULT_BLACK_WINS))
                  .ok());
  EXPECT_FALSE(CheckMatchResult(job, result(v1::GAME_END_STALL, v1::SIDE_UNSPECIFIED,
                                            v1::GAME_RESULT_BLACK_WINS))
                   .ok());
  // Without a clock there is no flag: the staller loses.
  job.set_tc("depth=3");
  EXPECT_TRUE(
      CheckMatchResult(job, result(v1::GAME_END_STALL, v1::SIDE_WHITE, v1::GAME_RESULT_BLACK_WINS))
          .ok());
  EXPECT_FALSE(
      CheckMatchResult(job, result(v1::GAME_END_STALL, v1::SIDE_WHITE, v1::GAME_RESULT_DRAW)).ok());
  // A game without a result or an end is refused, naming what is missing.
  absl::Status no_end = CheckMatchResult(
      job, result(v1::GAME_END_UNSPECIFIED, v1::SIDE_UNSPECIFIED, v1::GAME_RESULT_DRAW));
  EXPECT_NE(no_end.message().find("no game end"), std::string::npos) << no_end;
  absl::Status no_result = CheckMatchResult(
      job, result(v1::GAME_END_ADJUDICATION, v1::SIDE_UNSPECIFIED, v1::GAME_RESULT_UNSPECIFIED));
  EXPECT_NE(no_result.message().find("no result"), std::string::npos) << no_result;
}

// A disconnect before the faulty engine's first move (it could not start or take its options) is
// a fault, not a game: refused, never counted. Once it has moved, its disconnect is a loss.
TEST(MatchReplay, ADisconnectBeforeTheFaultyEnginesFirstMoveIsNotAGame) {
  v1::MatchJob job;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = job.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  job.set_tc("1+0.1");
  job.set_pairs(1);
  // One book move (e2e4), then `engine_moves` moves by the engines; Black is at fault.
  auto result = [](uint32_t engine_moves) {
    v1::MatchJobResult r;
    const char* moves[] = {"e2e4", "e7e5", "g1f3"};
    for (int g = 0; g < 2; ++g) {
      v1::ReportedGame* game = r.add_games();
      game->set_pair(0);
      game->set_game(uint32_t(g));
      game->set_start_fen(Position::StartPosition().Fen());
      for (uint32_t m = 0; m < 1 + engine_moves; ++m) game->add_moves(moves[m]);
      game->set_engine_moves(engine_moves);
      game->set_end(v1::GAME_END_DISCONNECT);
      game->set_faulty(v1::SIDE_BLACK);
      game->set_result(v1::GAME_RESULT_WHITE_WINS);
    }
    return r;
  };
  absl::Status unplayed = CheckMatchResult(job, result(0));
  EXPECT_EQ(unplayed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unplayed.message().find("before the faulty engine's first move"), std::string::npos)
      << unplayed;
  EXPECT_TRUE(CheckMatchResult(job, result(2)).ok()) << "Black moved (e7e5) before it crashed";
}

// A resignation (a CECP engine's `resign`) is the loss of the side to move, never of the other
// side, and never a position the board had already ended.
TEST(MatchReplay, AResignationIsTheLossOfTheSideToMove) {
  v1::MatchJob job;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = job.add_engines();
    e->set_name(name);
    e->set_path("/usr/games/fairymax");
  }
  job.set_tc("1+0.1");
  job.set_pairs(1);
  auto result = [](v1::GameResult res, std::vector<std::string> moves) {
    v1::MatchJobResult r;
    for (int g = 0; g < 2; ++g) {
      v1::ReportedGame* game = r.add_games();
      game->set_pair(0);
      game->set_game(uint32_t(g));
      game->set_start_fen(Position::StartPosition().Fen());
      for (const std::string& m : moves) game->add_moves(m);
      game->set_engine_moves(uint32_t(moves.size()));
      game->set_end(v1::GAME_END_RESIGNATION);
      game->set_result(res);
    }
    return r;
  };
  // After 1. e4, Black is to move: only Black can have resigned.
  EXPECT_TRUE(CheckMatchResult(job, result(v1::GAME_RESULT_WHITE_WINS, {"e2e4"})).ok());
  absl::Status wrong = CheckMatchResult(job, result(v1::GAME_RESULT_BLACK_WINS, {"e2e4"}));
  EXPECT_NE(wrong.message().find("a resignation is the loss of the side to move"),
            std::string::npos)
      << wrong;
  EXPECT_FALSE(CheckMatchResult(job, result(v1::GAME_RESULT_DRAW, {"e2e4"})).ok());
  // Fool's mate: the board ended it, so it is not a resignation.
  absl::Status mated =
      CheckMatchResult(job, result(v1::GAME_RESULT_BLACK_WINS, {"f2f3", "e7e5", "g2g4", "d8h4"}));
  EXPECT_NE(mated.message().find("the board ended the game"), std::string::npos) << mated;
}

// proto=xboard travels in EngineSpec.protocol; the builtin engine and unknown protocols are
// refused at submit.
TEST(TournamentPlan, EngineProtocolIsChecked) {
  v1::SubmitTournamentRequest xboard = Tournament(2, 2);
  xboard.mutable_settings()->mutable_engines(1)->set_path("/usr/games/fairymax");
  xboard.mutable_settings()->mutable_engines(1)->set_protocol(v1::ENGINE_PROTOCOL_XBOARD);
  EXPECT_TRUE(ValidateTournamentRequest(xboard, NoUploads).ok());
  v1::SubmitTournamentRequest builtin = Tournament(2, 2);
  builtin.mutable_settings()->mutable_engines(0)->set_protocol(v1::ENGINE_PROTOCOL_XBOARD);
  absl::Status st = ValidateTournamentRequest(builtin, NoUploads);
  EXPECT_NE(st.message().find("the builtin engine speaks UCI, not xboard"), std::string::npos)
      << st;
  v1::SubmitTournamentRequest unknown = Tournament(2, 2);
  unknown.mutable_settings()->mutable_engines(1)->set_path("/usr/games/fairymax");
  unknown.mutable_settings()->mutable_engines(1)->set_protocol(v1::EngineProtocol(9));
  EXPECT_NE(ValidateTournamentRequest(unknown, NoUploads).message().find("unknown protocol 9"),
            std::string::npos);
}

// UCI option names are case-insensitive: `threads` sizes a game like `Threads`, and is bounded
// at submit like it.
TEST(ThreadsPerGame, ReadsTheOptionInAnyCase) {
  google::protobuf::RepeatedPtrField<v1::EngineSpec> engines;
  v1::EngineSpec* e = engines.Add();
  e->set_name("sf");
  e->set_builtin(true);
  (*e->mutable_options())["threads"] = "4";
  EXPECT_EQ(ThreadsPerGame(engines), 4u);
  v1::SubmitMatchRequest req;
  *req.mutable_settings()->add_engines() = *e;
  (*req.mutable_settings()->mutable_engines(0)->mutable_options())["THREADS"] = "0";
  v1::EngineSpec* b = req.mutable_settings()->add_engines();
  b->set_name("b");
  b->set_builtin(true);
  req.mutable_settings()->set_tc("1+0.1");
  req.set_games(2);
  const absl::Status st = ValidateMatchRequest(req, {});
  EXPECT_NE(st.message().find("option Threads must be 1.."), std::string::npos) << st;
}

}  // namespace
}  // namespace arbiter::coordinator
