// Client side of the cluster for the CLI: submit a perft and follow it with a progress display,
// print runs, and wait for termination signals in the server commands.
#pragma once

#include <iosfwd>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace CLI {
class App;
}

namespace arbiter::cli {

// Blocks SIGINT and SIGTERM in this thread (and the threads it starts afterwards).
void BlockTerminationSignals();
// Waits for SIGINT or SIGTERM (blocked with BlockTerminationSignals); returns the signal.
int WaitForTerminationSignal();

// Submits the perft to the coordinator, shows progress on stderr (a bar on a terminal, plain
// lines otherwise) and prints the result like the local command (or JSON). Returns the exit code.
int RunRemotePerft(const std::string& coordinator, const v1::SubmitPerftRequest& request,
                   bool json);

// Submit a match or tournament run and follow it (progress on stderr unless `quiet`) until it
// finishes; the finished run, or the error (gRPC codes map to absl codes one to one).
absl::StatusOr<v1::Run> RunRemoteMatch(const std::string& coordinator,
                                       const v1::SubmitMatchRequest& request, bool quiet);
absl::StatusOr<v1::Run> RunRemoteTournament(const std::string& coordinator,
                                            const v1::SubmitTournamentRequest& request, bool quiet);
absl::StatusOr<v1::Run> RunRemoteMovegenCheck(const std::string& coordinator,
                                              const v1::SubmitMovegenCheckRequest& request,
                                              bool quiet);
// Uploads a local engine binary (stored by sha256; uploading the same bytes again returns the
// same engine). The stored engine, or the error.
absl::StatusOr<v1::Engine> UploadEngineFile(const std::string& coordinator, const std::string& path,
                                            const std::string& name);

// An engine of a cluster run from a local --engine spec: cmd=builtin, cmd=sha256:HEX (an
// upload), cmd=upload:FILE (uploaded now), or an absolute path that exists on every worker.
absl::StatusOr<v1::EngineSpec> RemoteEngineSpec(const match::EngineSpec& e,
                                                const std::string& coordinator);

// The PGN and the game summaries of a match or tournament run.
absl::StatusOr<v1::GetPgnResponse> FetchRunPgn(const std::string& coordinator, uint64_t run_id);

// Follows a run until it finishes, with the progress display; prints it at the end.
int WatchRemoteRun(const std::string& coordinator, uint64_t run_id, bool json);

// One line per run (id, kind, state, progress, jobs, what).
// `--priority` and `--throughput` of a run submitted with --coordinator (Scheduling in
// run.proto).
void AddSchedulingOptions(CLI::App* cmd, v1::Scheduling& scheduling);

void PrintRunLine(const v1::Run& run, std::ostream& out);
// Several lines: the run's details and, for a perft, its result.
void PrintRun(const v1::Run& run, std::ostream& out);

// Prints a failed call's error and returns the command's exit code: 3 for a missing or refused
// token, 2 for a bad request or a missing run, 1 otherwise.
int Failed(const grpc::Status& s);

}  // namespace arbiter::cli
