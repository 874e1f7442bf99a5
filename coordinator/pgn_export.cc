#include "coordinator/pgn_export.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/status_macros.h"
#include "match/wire.h"
#include "proto/arbiter/store/v1/store.pb.h"

namespace arbiter::coordinator {

absl::StatusOr<v1::GetPgnResponse> ExportPgn(const PgnRequest& request, Store& store) {
  const PgnSource& source = request.source;
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> counted(source.counted.begin(),
                                                             source.counted.end());
  absl::flat_hash_map<uint64_t, uint32_t> pairing_of;  // job id -> tournament pairing
  if (source.games_per_pairing > 0) {
    for (size_t i = 0; i < request.job_ids.size() && i < source.pairing_of_job.size(); ++i)
      pairing_of[request.job_ids[i]] = source.pairing_of_job[i];
    if (request.job_ids.empty()) {
      ASSIGN_OR_RETURN(std::vector<StoredJob> jobs, store.LoadJobs(request.run_id));
      for (const StoredJob& j : jobs) {
        store::v1::StoredMatchJob spec;
        if (spec.ParseFromString(j.spec)) pairing_of[j.id] = spec.work().pairing();
      }
    }
  }
  ASSIGN_OR_RETURN(std::vector<StoredResult> results, store.LoadResults(request.run_id));
  v1::GetPgnResponse out;
  std::string pgn;
  absl::flat_hash_set<uint64_t> seen_jobs;
  for (const StoredResult& r : results) {
    if (request.from_store) {
      if (out.games() >= request.final_games || !seen_jobs.insert(r.job_id).second) continue;
    } else if (!counted.contains(std::make_pair(r.job_id, r.lease_id))) {
      continue;
    }
    v1::MatchJobResult m;
    if (!m.ParseFromString(r.result)) continue;
    const uint32_t pairing = pairing_of.contains(r.job_id) ? pairing_of[r.job_id] : 0;
    const auto& [first, second] =
        source.engines[std::min<size_t>(pairing, source.engines.size() - 1)];
    for (const v1::ReportedGame& g : m.games()) {
      pgn += g.pgn();
      if (!g.pgn().empty() && g.pgn().back() != '\n') pgn += "\n";
      pgn += "\n";
      out.set_games(out.games() + 1);
      v1::GameSummary* s = out.add_game_list();
      s->set_round(uint64_t(pairing) * source.games_per_pairing + 2 * g.pair() + g.game() + 1);
      s->set_white(g.game() == 0 ? first : second);
      s->set_black(g.game() == 0 ? second : first);
      match::SetResultAndEnd(*s, g.result(), g.end());
      s->set_reason(g.reason());
      s->set_plies(uint32_t(g.moves_size()));
      s->set_start_fen(g.start_fen());
    }
  }
  out.set_pgn(std::move(pgn));
  return out;
}

}  // namespace arbiter::coordinator
