// Match and tournament runs on the cluster through the CLI, with real processes on loopback:
// `arbiter match|tournament --coordinator` against `arbiter local` or a coordinator and workers
// started as children (the builtin engine against itself with a different option).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "stats/ratings.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {

using testing::Count;
using testing::NumberAfter;
using testing::Process;
using testing::ReadFile;

constexpr char kBook[] =
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n"
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n"
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -\n"
    "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq -\n";

// The number in `"key":"123"` or `"key":123` after position `from` of a JSON text, or -1.
long JsonNumber(const std::string& json, const std::string& key, size_t from = 0) {
  size_t at = json.find("\"" + key + "\":", from);
  if (at == std::string::npos) return -1;
  at += key.size() + 3;
  if (at < json.size() && json[at] == '"') ++at;
  return std::atol(json.c_str() + at);
}

// The PGN Round numbers of a PGN text, in order.
std::vector<int> Rounds(const std::string& pgn) {
  std::vector<int> out;
  std::regex round("\\[Round \"(\\d+)\"\\]");
  for (auto it = std::sregex_iterator(pgn.begin(), pgn.end(), round); it != std::sregex_iterator();
       ++it)
    out.push_back(std::stoi((*it)[1]));
  return out;
}

class ClusterMatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-cm-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "book.epd") << kBook;
  }
  void TearDown() override {
    workers_.clear();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // `arbiter local` with two workers on a free port.
  void StartLocal() {
    unsetenv("ARBITER_TOKEN_FILE");  // its clients find arbiter local's own token
    server_ = testing::StartLocal(dir_, 2, port_);
    ASSERT_GT(port_, 0) << "arbiter local did not start; see " << (dir_ / "local.log");
  }

  // `arbiter coordinator` on `port` (0 = any free one).
  void StartCoordinator(int port = 0) {
    server_ = Process::Start(
        {ARBITER_BINARY, "coordinator", "--listen", "127.0.0.1:" + std::to_string(port), "--data",
         (dir_ / "data").string(), "--lease-s", "5", "--admin-token-file", AdminTokenFile()},
        (dir_ / "coordinator.log").string());
    ASSERT_TRUE(server_);
    auto line = server_->ReadLineWith("listening on port", 60);
    ASSERT_TRUE(line) << "coordinator did not start; see " << (dir_ / "coordinator.log");
    port_ = NumberAfter(*line, "listening on port ");
    ASSERT_GT(port_, 0);
  }

  void StartWorker() {
    const std::string n = std::to_string(workers_.size() + 1);
    const auto token = dir_ / ("worker" + n + ".token");
    const grpc::Status created =
        testing::CreateTokenFile(Address(), admin_secret_, "w" + n, v1::ROLE_WORKER, token);
    ASSERT_TRUE(created.ok()) << created.error_message();
    workers_.push_back(
        Process::Start({ARBITER_BINARY, "--token-file", token.string(), "worker", "--coordinator",
                        Address(), "--name", "w" + n, "--wait-s", "1", "--grace-s", "2"},
                       (dir_ / ("worker" + n + ".log")).string()));
    ASSERT_TRUE(workers_.back()->ReadLineWith("health on port", 60));
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  // The admin's secret in a file, also the token of this test's own calls and CLI children
  // (`arbiter local` leaves its own token where its clients find it).
  std::string AdminTokenFile() { return testing::AdminTokenFile(dir_, admin_secret_); }
  std::string admin_secret_;

  std::unique_ptr<Process> Cli(std::vector<std::string> args) {
    args.insert(args.begin(), ARBITER_BINARY);
    return Process::Start(args, (dir_ / "cli.log").string());
  }

  std::filesystem::path dir_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> workers_;
  int port_ = 0;
};

// (a) A fixed-length match of two builtin settings at 0.2+0.01 on `arbiter local`: the JSON has
// every game, the pentanomial pairs add up, the PGN holds each round once, progress went to
// stderr as plain lines (not a terminal), and the text report is the local command's.
TEST_F(ClusterMatchTest, MatchOnLocalClusterCountsEveryGame) {
  ASSERT_NO_FATAL_FAILURE(StartLocal());
  const std::string pgn = (dir_ / "games.pgn").string();
  auto cli = Cli({"match", "--engine", "name=base,cmd=builtin", "--engine",
                  "name=knight200,cmd=builtin,option.KnightValueMg=200", "--tc", "0.2+0.01",
                  "--games", "8", "--openings", (dir_ / "book.epd").string(), "--coordinator",
                  Address(), "--pgn", pgn, "--event", "cluster test", "--json"});
  const std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out << ReadFile(dir_ / "cli.log");
  EXPECT_EQ(JsonNumber(out, "games"), 8) << out;
  EXPECT_EQ(JsonNumber(out, "pairs"), 4) << out;
  const size_t penta = out.find("\"penta\":");
  ASSERT_NE(penta, std::string::npos) << out;
  long pairs = 0;
  for (const char* k : {"ll", "ld", "d", "wd", "ww"}) pairs += JsonNumber(out, k, penta);
  EXPECT_EQ(pairs, 4) << out;
  const long w = JsonNumber(out, "wins"), d = JsonNumber(out, "draws"),
             l = JsonNumber(out, "losses");
  EXPECT_EQ(w + d + l, 8) << out;
  EXPECT_EQ(Count(out, "\"round\":"), 8u) << "one game summary per game";
  EXPECT_NE(out.find("\"engines\":[\"base\",\"knight200\"]"), std::string::npos) << out;

  const std::string games = ReadFile(pgn);
  std::vector<int> rounds = Rounds(games);
  ASSERT_EQ(rounds.size(), 8u) << games;
  EXPECT_EQ(std::set<int>(rounds.begin(), rounds.end()), std::set<int>({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(Count(games, "[White \"base\"]"), 4u);
  EXPECT_EQ(Count(games, "[White \"knight200\"]"), 4u);
  EXPECT_EQ(Count(games, "[TimeControl \"0.2+0.01\"]"), 8u) << games;
  EXPECT_EQ(Count(games, "[Event \"cluster test\"]"), 8u) << "--event reached the workers";

  const std::string progress = ReadFile(dir_ / "cli.log");
  EXPECT_NE(progress.find("submitted"), std::string::npos) << progress;
  EXPECT_NE(progress.find("finished, measured 100.0% 8/8 games"), std::string::npos) << progress;
  EXPECT_EQ(progress.find('\r'), std::string::npos) << "no bar when not on a terminal";

  // A second match as text: the local report; --max-moves reaches the workers' arbiters.
  auto text = Cli({"match", "--engine", "name=base,cmd=builtin", "--engine",
                   "name=knight200,cmd=builtin,option.KnightValueMg=200", "--tc", "depth=3",
                   "--games", "4", "--max-moves", "5", "--coordinator", Address(), "--quiet"});
  const std::string report = text->ReadAll();
  ASSERT_EQ(text->Wait(), 0) << report;
  EXPECT_NE(report.find("Results of base vs knight200 (depth=3):"), std::string::npos) << report;
  EXPECT_NE(report.find("Ptnml(0-2): ["), std::string::npos) << report;
  EXPECT_NE(report.find(", pairs 2\n"), std::string::npos) << report;
  EXPECT_NE(report.find("base: time losses 0"), std::string::npos) << report;
  EXPECT_NE(report.find("Terminations: adjudication 4;"), std::string::npos) << report;

  // --chess960 and --affinity reach the workers: from the standard start position every game
  // is played (and replayed by the coordinator) as Chess960.
  const std::string frc = (dir_ / "frc.pgn").string();
  auto pinned = Cli({"match", "--engine", "name=a,cmd=builtin", "--engine", "name=b,cmd=builtin",
                     "--tc", "depth=3", "--games", "2", "--max-moves", "30", "--chess960",
                     "--affinity", "--pgn", frc, "--coordinator", Address(), "--quiet"});
  const std::string frc_report = pinned->ReadAll();
  ASSERT_EQ(pinned->Wait(), 0) << frc_report << ReadFile(dir_ / "cli.log");
  EXPECT_EQ(Count(ReadFile(frc), "[Variant \"Chess960\"]"), 2u) << ReadFile(frc);

  // Engines a worker cannot start are refused.
  auto bad = Cli({"match", "--engine", "name=a,cmd=builtin", "--engine", "name=b,cmd=./engine",
                  "--tc", "depth=3", "--games", "2", "--coordinator", Address()});
  bad->ReadAll();
  EXPECT_EQ(bad->Wait(), 2);
  EXPECT_NE(ReadFile(dir_ / "cli.log").find("absolute path that exists on every worker"),
            std::string::npos);
}

// (b) The coordinator killed with SIGKILL in the middle of a match run and restarted on the same
// --data and port: the CLI follows the run through the restart, and the run finishes with
// exactly the requested games, each round once in the PGN (nothing lost, nothing counted twice).
TEST_F(ClusterMatchTest, MatchSurvivesCoordinatorKill) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const int port = port_;
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  const std::string pgn = (dir_ / "games.pgn").string();
  auto cli = Cli({"match", "--engine", "name=base,cmd=builtin", "--engine",
                  "name=knight200,cmd=builtin,option.KnightValueMg=200", "--tc", "0.2+0.01",
                  "--games", "16", "--openings", (dir_ / "book.epd").string(), "--coordinator",
                  Address(), "--pgn", pgn, "--json"});
  // Wait until some but not all jobs of the run are done, then kill the coordinator.
  auto stub = v1::RunService::NewStub(net::Dial(Address()));
  v1::Run run;
  for (int i = 0; i < 6000; ++i) {
    if (testing::OnlyRun(*stub, run).ok() && run.jobs().done() >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(run.jobs().done(), 1u);
  ASSERT_LT(run.jobs().done(), run.jobs().total()) << "the run finished before the kill";
  const uint64_t games_before = run.match().result().games();
  server_->Signal(SIGKILL);
  server_->Wait();
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(port));

  const std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out << ReadFile(dir_ / "cli.log");
  EXPECT_EQ(JsonNumber(out, "games"), 16) << out;
  EXPECT_EQ(JsonNumber(out, "pairs"), 8) << out;
  const size_t penta = out.find("\"penta\":");
  ASSERT_NE(penta, std::string::npos) << out;
  long pairs = 0;
  for (const char* k : {"ll", "ld", "d", "wd", "ww"}) pairs += JsonNumber(out, k, penta);
  EXPECT_EQ(pairs, 8) << out;
  EXPECT_GE(games_before, 4u) << "a finished job had been counted before the kill";
  const std::vector<int> rounds = Rounds(ReadFile(pgn));
  ASSERT_EQ(rounds.size(), 16u);
  std::set<int> distinct(rounds.begin(), rounds.end());
  EXPECT_EQ(distinct.size(), 16u);
  EXPECT_EQ(*distinct.begin(), 1);
  EXPECT_EQ(*distinct.rbegin(), 16);
  EXPECT_NE(ReadFile(dir_ / "coordinator.log").find("resumed with"), std::string::npos);
}

// An uploaded copy of Stockfish, submitted by a submitter (not an admin, so only a worker that
// boxes engines in namespaces may run it), plays its games normally in the sandbox.
TEST_F(ClusterMatchTest, UploadedStockfishPlaysInTheSandbox) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "stockfish is not installed"
                 << " (scripts/install-deps.sh installs it)";
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  ASSERT_NO_FATAL_FAILURE(StartWorker());  // --sandbox=auto
  for (int i = 0;
       i < 600 && ReadFile(dir_ / "worker1.log").find("engine isolation:") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // until it has registered
  if (ReadFile(dir_ / "worker1.log").find("engine isolation: namespaces") == std::string::npos)
    GTEST_SKIP() << "bwrap cannot create namespaces here: " << ReadFile(dir_ / "worker1.log");
  const auto token = dir_ / "sam.token";
  const grpc::Status created =
      testing::CreateTokenFile(Address(), admin_secret_, "sam", v1::ROLE_SUBMITTER, token);
  ASSERT_TRUE(created.ok()) << created.error_message();
  const std::string pgn = (dir_ / "games.pgn").string();
  auto cli = Cli({"--token-file", token.string(), "match", "--engine",
                  "name=sf,cmd=upload:/usr/games/stockfish,option.Hash=4", "--engine",
                  "name=base,cmd=builtin", "--tc", "nodes=2000", "--games", "2", "--coordinator",
                  Address(), "--pgn", pgn, "--json"});
  const std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out << ReadFile(dir_ / "cli.log");
  EXPECT_EQ(JsonNumber(out, "games"), 2) << out;
  const std::string games = ReadFile(pgn);
  EXPECT_EQ(Count(games, "[White \"sf\"]"), 1u) << games;
  EXPECT_EQ(games.find("disconnect"), std::string::npos) << games;
  EXPECT_EQ(games.find("illegal"), std::string::npos) << games;
  EXPECT_EQ(games.find("stall"), std::string::npos) << games;
}

// (c) A round robin of three engines on the cluster (two builtin settings and arbiter uploaded
// by the CLI as an engine binary): every pairing plays its games, every engine gets a rating;
// bad tournament requests get INVALID_ARGUMENT with a clear message.
TEST_F(ClusterMatchTest, RoundRobinOfThreeOnCluster) {
  ASSERT_NO_FATAL_FAILURE(StartLocal());
  const std::string pgn = (dir_ / "games.pgn").string();
  auto cli = Cli(
      {"tournament", "--engine", "name=base,cmd=builtin", "--engine",
       "name=knight200,cmd=builtin,option.KnightValueMg=200", "--engine",
       std::string("name=knight400,cmd=upload:") + ARBITER_BINARY + " uci,option.KnightValueMg=400",
       "--tc", "depth=3", "--games", "4", "--openings", (dir_ / "book.epd").string(),
       "--coordinator", Address(), "--pgn", pgn, "--json"});
  const std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out << ReadFile(dir_ / "cli.log");
  EXPECT_NE(out.find("\"format\":\"round robin\""), std::string::npos) << out;
  // Three pairings of 4 games each, with their game summaries.
  EXPECT_EQ(Count(out, "\"time_control\":"), 3u) << out;
  size_t at = 0;
  for (int k = 0; k < 3; ++k) {
    at = out.find("\"time_control\":", at + 1);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(JsonNumber(out, "games", at), 4) << out;
  }
  EXPECT_EQ(Count(out, "\"round\":"), 12u) << out;
  // Three standings, each engine with 8 games.
  const size_t standings = out.find("\"standings\":");
  ASSERT_NE(standings, std::string::npos) << out;
  const std::string table = out.substr(standings, out.find("\"matches\":") - standings);
  for (const char* name : {"\"name\":\"base\"", "\"name\":\"knight200\"", "\"name\":\"knight400\""})
    EXPECT_NE(table.find(name), std::string::npos) << name << " in " << table;
  EXPECT_EQ(Count(table, "\"games\":\"8\""), 3u) << table;
  const std::vector<int> rounds = Rounds(ReadFile(pgn));
  EXPECT_EQ(rounds.size(), 12u);
  EXPECT_EQ(std::set<int>(rounds.begin(), rounds.end()).size(), 12u);

  // The run through the API: 3 pairings, ratings for all three.
  auto stub = v1::RunService::NewStub(net::Dial(Address()));
  {
    v1::Run run;
    ASSERT_TRUE(testing::OnlyRun(*stub, run).ok());
    ASSERT_EQ(run.kind(), v1::RUN_KIND_TOURNAMENT);
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
    ASSERT_EQ(run.tournament().pairings_size(), 3);
    for (const auto& p : run.tournament().pairings()) EXPECT_EQ(p.games(), 4u);
    EXPECT_EQ(run.tournament().standings_size(), 3);
    EXPECT_EQ(run.tournament().games(), 12u);
    // The third engine was uploaded by the CLI and fetched by the workers by sha256.
    EXPECT_EQ(run.tournament().request().settings().engines(2).sha256().size(), 64u);
    EXPECT_EQ(run.tournament().request().settings().engines(2).args(0), "uci");
  }
  auto submit = [&](const v1::SubmitTournamentRequest& req) {
    grpc::ClientContext ctx;
    v1::SubmitRunResponse resp;
    return stub->SubmitTournament(&ctx, req, &resp);
  };
  v1::SubmitTournamentRequest one;
  one.mutable_settings()->set_tc("depth=3");
  one.set_games_per_pairing(2);
  v1::EngineSpec* a = one.mutable_settings()->add_engines();
  a->set_name("a");
  a->set_builtin(true);
  grpc::Status s = submit(one);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("at least 2 engines, got 1"), std::string::npos)
      << s.error_message();
  v1::SubmitTournamentRequest unknown = one;
  v1::EngineSpec* b = unknown.mutable_settings()->add_engines();
  b->set_name("b");
  b->set_sha256(std::string(64, 'b'));
  s = submit(unknown);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("engine 'b': no engine with sha256 bbbb"), std::string::npos)
      << s.error_message();
}

// Ratings across runs: a tournament of three engine versions and a later match of two of them
// on `arbiter local`; `arbiter ratings --engines` rates all their games together, and the list
// equals stats::ComputeRatings on the two runs' combined pairings (anchor first, one prior draw
// per pairing). Unknown runs and engines without games are refused with their reason.
TEST_F(ClusterMatchTest, RatingsAcrossRunsMatchTheCombinedGames) {
  ASSERT_NO_FATAL_FAILURE(StartLocal());
  const std::vector<std::string> engines = {"name=v1,cmd=builtin",
                                            "name=v2,cmd=builtin,option.KnightValueMg=200",
                                            "name=v3,cmd=builtin,option.KnightValueMg=400"};
  auto tournament = Cli({"tournament", "--engine", engines[0], "--engine", engines[1], "--engine",
                         engines[2], "--tc", "depth=2", "--games", "4", "--openings",
                         (dir_ / "book.epd").string(), "--coordinator", Address(), "--quiet"});
  tournament->ReadAll();
  ASSERT_EQ(tournament->Wait(), 0) << ReadFile(dir_ / "cli.log");
  auto match =
      Cli({"match", "--engine", engines[0], "--engine", engines[1], "--tc", "depth=2", "--games",
           "6", "--openings", (dir_ / "book.epd").string(), "--coordinator", Address(), "--quiet"});
  match->ReadAll();
  ASSERT_EQ(match->Wait(), 0) << ReadFile(dir_ / "cli.log");

  // The two runs' pairings through the API, combined by hand.
  auto stub = v1::RunService::NewStub(net::Dial(Address()));
  v1::ListRunsResponse runs;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).ok());
  }
  ASSERT_EQ(runs.runs_size(), 2);
  std::map<std::pair<int, int>, stats::Trinomial> combined;
  const std::vector<std::string> names = {"v1", "v2", "v3"};
  auto add = [&](const v1::MatchResult& m) {
    const int a = int(std::find(names.begin(), names.end(), m.engines(0)) - names.begin());
    const int b = int(std::find(names.begin(), names.end(), m.engines(1)) - names.begin());
    const v1::TrinomialCounts& wdl = m.stats().wdl();
    stats::Trinomial t{.losses = wdl.losses(), .draws = wdl.draws(), .wins = wdl.wins()};
    if (a > b) t = t.Reversed();
    stats::Trinomial& c = combined[{std::min(a, b), std::max(a, b)}];
    c.wins += t.wins;
    c.draws += t.draws;
    c.losses += t.losses;
  };
  for (const v1::Run& run : runs.runs()) {
    if (run.has_match()) add(run.match().result());
    for (const v1::MatchResult& p : run.tournament().pairings()) add(p);
  }
  std::vector<stats::PairingResult> results;
  uint64_t games = 0;
  for (const auto& [pair, counts] : combined) {
    results.push_back({pair.first, pair.second, counts});
    games += counts.Games();
  }
  EXPECT_EQ(games, 18u);
  absl::StatusOr<stats::RatingTable> want =
      stats::ComputeRatings(names, results, {.anchor = 0, .prior_draws = 1});
  ASSERT_TRUE(want.ok()) << want.status();

  auto ratings =
      Cli({"ratings", "--engines", "v1", "v2", "v3", "--coordinator", Address(), "--json"});
  const std::string json = ratings->ReadAll();
  ASSERT_EQ(ratings->Wait(), 0) << json << ReadFile(dir_ / "cli.log");
  EXPECT_EQ(JsonNumber(json, "games", json.find("\"anchor\"")), 18) << json;
  v1::GetRatingsRequest req;
  for (const std::string& n : names) req.add_engines(n);
  v1::GetRatingsResponse got;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->GetRatings(&ctx, req, &got).ok());
  }
  EXPECT_EQ(got.run_ids_size(), 2);
  ASSERT_EQ(got.standings_size(), 3);
  for (const v1::TournamentStanding& st : got.standings()) {
    const auto it = std::find_if(want->ratings.begin(), want->ratings.end(),
                                 [&](const stats::EngineRating& r) { return r.name == st.name(); });
    ASSERT_NE(it, want->ratings.end());
    EXPECT_NEAR(st.elo(), it->elo, 1e-6) << st.name();
    EXPECT_NEAR(st.elo_error95(), it->error95, 1e-6) << st.name();
    EXPECT_EQ(st.games(), it->games) << st.name();
    EXPECT_NE(json.find("\"name\":\"" + st.name() + "\""), std::string::npos) << json;
  }
  auto text =
      Cli({"ratings", "--engines", "v1", "v2", "v3", "--anchor", "v2", "--coordinator", Address()});
  const std::string table = text->ReadAll();
  ASSERT_EQ(text->Wait(), 0) << table;
  EXPECT_NE(table.find("18 games in 2 runs, anchor v2 (Elo 0)"), std::string::npos) << table;

  auto unknown = Cli({"ratings", "--runs", "9999", "--coordinator", Address()});
  unknown->ReadAll();
  EXPECT_EQ(unknown->Wait(), 2);
  EXPECT_NE(ReadFile(dir_ / "cli.log").find("run 9999 does not exist"), std::string::npos);
  auto lonely = Cli({"ratings", "--engines", "v1", "v2", "nobody", "--coordinator", Address()});
  lonely->ReadAll();
  EXPECT_NE(lonely->Wait(), 0);
  EXPECT_NE(ReadFile(dir_ / "cli.log").find("no finished games of 'nobody' in these runs"),
            std::string::npos);
}

}  // namespace
}  // namespace arbiter
