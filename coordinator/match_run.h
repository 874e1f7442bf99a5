// Match runs on the coordinator: request validation, the job plan (batches of game pairs),
// the replay check of every reported game, and the running score (pentanomial, Elo, SPRT).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "match/summary.h"
#include "match/time_control.h"
#include "match/tournament.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/work_service.pb.h"
#include "stats/counts.h"
#include "stats/ratings.h"
#include "stats/sprt.h"

namespace arbiter::coordinator {

// Bounds of a submitted request (refused with INVALID_ARGUMENT naming the bound).
inline constexpr uint64_t kMaxMatchGames = 1'000'000;
inline constexpr size_t kMaxEngineNameBytes = 64;
inline constexpr size_t kMaxEngineTextBytes = 1024;  // a path, an option, an arg, a tc
inline constexpr size_t kMaxEngineEntries = 64;      // options, args
inline constexpr size_t kMaxOpeningsBytes = size_t(16) << 20;
inline constexpr size_t kMaxEventBytes = 4096;  // the PGN Event tag

// A declared bench signature, and the reference speed of scaled clocks (scale_nps).
inline constexpr uint64_t kMaxBenchNodes = 1'000'000'000'000'000;
inline constexpr int64_t kMinScaleNps = 1'000;
inline constexpr int64_t kMaxScaleNps = 10'000'000'000;
using match::kMaxClockScale;
using match::kMinClockScale;
// The engine's `Threads` option, at most 1024 (1 when not given).
inline constexpr uint32_t kMaxEngineThreads = 1024;

// The largest `Threads` option among `engines` (1 when none sets one): the cores a game slot
// needs (one engine thinks at a time). Unparsable values count as 1 (refused at submit).
uint32_t ThreadsPerGame(const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines);

// Threads x concurrency against the connected workers (`max_worker_threads`, 0 = none
// connected: the workers decide): FAILED_PRECONDITION with a message when no connected worker
// could run a game slot, or the asked concurrency, without oversubscribing its threads.
absl::Status CheckThreadsFit(const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines,
                             uint32_t concurrency, uint32_t max_worker_threads);

// Largest game count of an SPRT run that gives no `games` (it stops when the SPRT decides).
inline constexpr uint64_t kMaxSprtGames = 100000;

// Game pairs per job when the request leaves it to the coordinator: as many as the busiest
// connected worker plays at once (its --threads, capped by the request's concurrency hint), so
// that one job keeps a worker's cores busy; at least 2, at most 64.
// Each limit within its bound (EngineLimits in engine.proto); `what` names the field.
absl::Status ValidateEngineLimits(const v1::EngineLimits& limits, std::string_view what);

uint32_t DefaultPairsPerJob(uint32_t max_worker_threads, uint32_t concurrency);

// Checks what a match and a tournament share: the engine list (each engine's source; an unknown
// upload is INVALID_ARGUMENT when `unknown_is_invalid`, else NOT_FOUND), the clock, the book, the
// rules, scale_nps and the batching. The engine count is the caller's to check.
absl::Status ValidateGamesSettings(const v1::GamesSettings& settings,
                                   const std::function<bool(const std::string&)>& engine_known,
                                   bool unknown_is_invalid);

// Checks a match request; `engine_known(sha256)` says whether an upload exists.
absl::Status ValidateMatchRequest(const v1::SubmitMatchRequest& request,
                                  const std::function<bool(const std::string&)>& engine_known);

// Most engines in a tournament, games per pairing, and jobs of one run.
inline constexpr int kMaxTournamentEngines = 100;
inline constexpr uint64_t kMaxGamesPerPairing = 100000;
inline constexpr uint64_t kMaxRunJobs = 1000000;

// Checks a tournament request; every problem, an unknown upload included, is INVALID_ARGUMENT.
absl::Status ValidateTournamentRequest(const v1::SubmitTournamentRequest& request,
                                       const std::function<bool(const std::string&)>& engine_known);

// Pairings of a tournament as engine indices (first < second), in schedule order: every pair
// of engines (round robin) or the first engine against each of the others (gauntlet); see
// match::TournamentPairings.
std::vector<std::pair<int, int>> TournamentPairings(const v1::SubmitTournamentRequest& request);

// The match that one pairing plays (without the book's text unless `with_openings`).
v1::SubmitMatchRequest PairingRequest(const v1::SubmitTournamentRequest& request, int first,
                                      int second, bool with_openings = true);

// What one match job is beyond its run's request: its pairs and (tournaments) its pairing. The
// coordinator keeps only this per job (16 bytes) and makes the job's MatchJob when it is leased,
// so that a run's memory does not grow with copies of its engines, rules and event.
struct MatchSlice {
  uint64_t first_pair = 0;
  uint32_t pairs = 0;
  uint32_t pairing = 0;
};

// The book's openings: its lines that are neither empty nor comments (views into `openings`).
std::vector<std::string_view> BookLines(std::string_view openings);

// Slices of a match run: consecutive pair ranges of request.pairs_per_job pairs.
std::vector<MatchSlice> PlanMatchSlices(const v1::SubmitMatchRequest& request);

// Slices of a tournament: each pairing's pair ranges, interleaved so that every pairing
// progresses at the same pace.
std::vector<MatchSlice> PlanTournamentSlices(const v1::SubmitTournamentRequest& request);

// The job of `slice`: the settings' engines, clock and rules, the openings of its pairs from
// `book` (pair p plays line p mod the book's size) and the PGN round offset.
v1::MatchJob MatchJobOf(const v1::GamesSettings& settings,
                        const std::vector<std::string_view>& book, const MatchSlice& slice,
                        uint64_t round_offset);

// Jobs of a tournament: PlanTournamentSlices made into MatchJobs (with `pairing` and the PGN
// round offset set).
std::vector<v1::MatchJob> PlanTournamentJobs(const v1::SubmitTournamentRequest& request);

// The SPRT parameters of a request, if it asks for one.
std::optional<stats::SprtParams> SprtOf(const v1::SubmitMatchRequest& request);

// Jobs of a match run: PlanMatchSlices made into MatchJobs.
std::vector<v1::MatchJob> PlanMatchJobs(const v1::SubmitMatchRequest& request);

// Replays every game of a result from its start position: every move must be legal, the game
// must not have ended on the board before its last move, a "normal" end must be the board's
// own result, and the pairs must be the job's. Errors name the game and the move.
absl::Status CheckMatchResult(const v1::MatchJob& job, const v1::MatchJobResult& result);

// The bounds of what a worker reports about a job's engines and clock scale (with a result) and
// of a refusal (with a release); INVALID_ARGUMENT naming the field.
absl::Status CheckWorkerEngineReport(const v1::MatchJob& job, const v1::MatchJobResult& result);
absl::Status CheckEngineRefusal(const v1::EngineRefusal& refusal);

// Counts a replayed job's games into `summary`, pair by pair (first engine's point of view).
void CountGames(const v1::MatchJobResult& result, match::MatchSummary& summary);

// A match's (or a tournament pairing's) result: the engines and time controls of `request`,
// `summary`'s counts with Elo and (with `sprt`) the SPRT, the overhead the workers measured in
// their game loops, and `seconds` of wall time.
v1::MatchResult MatchResultOf(const v1::GamesSettings& settings, match::MatchSummary summary,
                              const std::optional<stats::SprtParams>& sprt, double seconds);

// Fills a tournament's status: each pairing's result (`tallies` in TournamentPairings order)
// and the ratings of all engines once their games connect them.
void FillTournamentStatus(const v1::SubmitTournamentRequest& request,
                          const std::vector<match::MatchSummary>& tallies, double seconds,
                          v1::TournamentRunStatus& out);

// Moved to match/tournament.h (shared with `arbiter tournament`).
using match::AddStandings;

}  // namespace arbiter::coordinator
