#include "engine/perft_lane.h"

#include <algorithm>
#include <memory>

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"

namespace arbiter {

uint64_t HashWords(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x243f6a8885a308d3;
  for (uint64_t w : words) h = Fold(h ^ w, 0x9e3779b97f4a7c15);
  return h;
}

uint64_t ShardKey(const Position& pos) {
  const Color them = ~pos.SideToMove();
  return HashWords({pos.Pieces(them, kPawn), pos.Pieces(them, kKnight), pos.Pieces(them, kBishop),
                    pos.Pieces(them, kRook), pos.Pieces(them, kQueen), pos.Pieces(them, kKing)}) >>
         1;
}

namespace {

// One move from a parent to a child in the lane.
struct LanePath {
  uint64_t shard;
  Key128 key;
  uint32_t parent;
  uint16_t move;
};

// Unique children counted per call of PerftBatch: enough subtrees for its threads, few enough
// that the children made for it stay in cache-sized memory (a list of a whole lane's would fault
// in ~100 MB of fresh pages at perft(8): more than the merge itself).
constexpr size_t kChunk = 4096;

}  // namespace

absl::StatusOr<std::vector<uint64_t>> PerftLaneBatch(std::string_view packed, const Position& game,
                                                     uint64_t begin, uint64_t end,
                                                     const PerftBatchOptions& opts) {
  if (!(begin < end && end <= kShardKeyEnd))
    return absl::InvalidArgumentError(
        Cat("lane [", begin, ", ", end, ") is not a non-empty range of keys below 2^63"));
  if (opts.depth < 1 || opts.depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(
        Cat("a lane's perft depth ", opts.depth, " is out of range 1..", kMaxPerftDepth));
  if (packed.size() % kPackedPositionSize != 0)
    return absl::InvalidArgumentError(Cat("packed positions are ", packed.size(),
                                          " bytes, not a multiple of ", kPackedPositionSize));
  const size_t n = packed.size() / kPackedPositionSize;
  std::vector<Position> parents(n, game);
  std::vector<LanePath> paths;
  for (size_t i = 0; i < n; ++i) {
    if (opts.stop && opts.stop->load()) return absl::CancelledError("perft lane stopped");
    absl::Status s = UnpackPosition(packed.substr(i * kPackedPositionSize, kPackedPositionSize),
                                    game, parents[i]);
    if (!s.ok())
      return absl::InvalidArgumentError(Cat("position ", i, ": ", std::string(s.message())));
    Position& pos = parents[i];
    MoveList list;
    GenerateLegal(pos, list);
    for (Move m : list) {
      UndoInfo undo;
      pos.DoMove(m, undo);
      const uint64_t shard = ShardKey(pos);
      if (shard >= begin && shard < end) paths.push_back({shard, pos.Key(), uint32_t(i), m.Raw()});
      pos.UndoMove(m, undo);
    }
  }
  // Every path to one child is next to the others: the child is counted once.
  std::sort(paths.begin(), paths.end(), [](const LanePath& a, const LanePath& b) {
    if (a.shard != b.shard) return a.shard < b.shard;
    if (a.key.lo != b.key.lo) return a.key.lo < b.key.lo;
    return a.key.hi < b.key.hi;
  });

  PerftBatchOptions child_opts = opts;
  child_opts.depth = opts.depth - 1;
  child_opts.distinct = true;  // merged here: no other path in this job reaches them
  std::shared_ptr<PerftTable> own;
  if (!child_opts.table && opts.hash_mb > 0 && child_opts.depth >= 2) {
    own = MakePerftTable(opts.hash_mb, std::max(1, opts.threads));
    if (!own)
      return absl::ResourceExhaustedError(
          Cat("cannot allocate a perft hash of ", opts.hash_mb, " MB"));
    child_opts.table = own.get();
  }
  child_opts.hash_mb = 0;

  std::vector<uint64_t> counts(n, 0);
  std::vector<Position> kids;
  std::vector<size_t> first;  // kid j's paths: [first[j], first[j + 1])
  kids.reserve(kChunk);
  first.reserve(kChunk + 1);
  size_t next = 0;  // the first path not yet counted
  while (next < paths.size()) {
    kids.clear();
    first.clear();
    size_t j = next;
    for (; j < paths.size() && kids.size() < kChunk; ++j) {
      if (j > next && paths[j].key == paths[j - 1].key && paths[j].shard == paths[j - 1].shard)
        continue;
      first.push_back(j);
      Position& kid = kids.emplace_back(parents[paths[j].parent]);
      UndoInfo undo;
      kid.DoMove(Move(paths[j].move), undo);
    }
    // The last kid's paths run on past the chunk's end.
    while (j < paths.size() && paths[j].key == paths[j - 1].key &&
           paths[j].shard == paths[j - 1].shard)
      ++j;
    first.push_back(j);
    ASSIGN_OR_RETURN(const std::vector<uint64_t> kid_counts, PerftBatch(kids, child_opts));
    for (size_t k = 0; k < kids.size(); ++k)
      for (size_t p = first[k]; p < first[k + 1]; ++p) counts[paths[p].parent] += kid_counts[k];
    next = j;
  }
  return counts;
}

}  // namespace arbiter
