#include "engine/perft.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft_lane.h"
#include "engine/perft_path.h"
#include "engine/perft_table.h"

namespace arbiter {

namespace {

// The count below the root, on the copy of the core this CPU runs best (engine/perft_path.h).
uint64_t CountSubtree(Position& pos, int depth, PerftTable* table, bool own_entry = true,
                      const PerftPath& path = ActivePerftPath()) {
  return path.count(pos, depth, table, own_entry);
}

// The count below `pos` (`depth` plies) of the positions `plies` below it whose ShardKey is in
// `lane` (engine/perft_lane.h). Positions above the lane's ply have partial counts: their table
// entries are keyed apart, by the lane and the plies left to it, so that they answer only the same
// lane's question (a worker's table serves every lane and every run).
uint64_t CountLane(Position& pos, int depth, int plies, const PerftLane& lane, PerftTable* table,
                   bool own_entry, const PerftPath& path) {
  if (plies == 0) {
    return lane.Contains(ShardKey(pos)) ? path.count(pos, depth, table, true) : 0;
  }
  const bool hashed = table && own_entry && depth >= 2;
  Key128 key = pos.Key();
  uint64_t nodes = 0;
  if (hashed) {
    const uint64_t salt = HashWords({lane.begin, lane.end, uint64_t(plies)});
    key.lo ^= salt;
    key.hi ^= Fold(salt, 0x9e3779b97f4a7c15);
    if (table->Probe(key, depth, nodes)) return nodes;
  }
  MoveList list;
  GenerateLegal(pos, list);
  UndoInfo undo;
  if (plies > 1 || !table || depth - 1 < 2) {
    for (Move m : list) {
      pos.DoMove(m, undo);
      nodes += CountLane(pos, depth - 1, plies - 1, lane, table, true, path);
      pos.UndoMove(m, undo);
    }
  } else {
    // The lane's ply next: its positions in the lane first, their table lines prefetched, then
    // counted, so that the probes overlap their memory latency as the core's own plies do (a
    // probe each, cold, was ~8 % of a worker's perft(8)). Keyed without making the moves: about
    // half of them are another lane's.
    constexpr int kMost = sizeof(MoveList::moves) / sizeof(Move);
    uint16_t mine[kMost];
    uint64_t lo[kMost], hi[kMost];
    int n = 0;
    for (Move m : list) {
      if (lane.Contains(ShardKeyAfter(pos, m))) {
        const Key128 child = pos.KeyAfter(m);
        table->Prefetch(child);
        mine[n] = m.Raw();
        lo[n] = child.lo;
        hi[n] = child.hi;
        ++n;
      }
    }
    for (int i = 0; i < n; ++i) {
      const Key128 child{lo[i], hi[i]};
      uint64_t count;
      if (!table->Probe(child, depth - 1, count)) {
        pos.DoMove(Move(mine[i]), undo);
        count = path.count(pos, depth - 1, table, false);
        pos.UndoMove(Move(mine[i]), undo);
        table->Store(child, depth - 1, count);
      }
      nodes += count;
    }
  }
  if (hashed) table->Store(key, depth, nodes);
  return nodes;
}

// A batch position's count: of its lane when the batch has one.
uint64_t CountBatchSubtree(Position& pos, const PerftBatchOptions& opts, PerftTable* table,
                           bool own_entry, const PerftPath& path) {
  if (opts.lane().active())
    return CountLane(pos, opts.depth, kLanePlies, opts.lane(), table, own_entry, path);
  return CountSubtree(pos, opts.depth, table, own_entry, path);
}

struct Task {
  int root_index;
  Position pos;
  int depth;
};

// Expands the tree below the root until there are enough subtrees to keep the threads busy.
void Expand(Position& pos, int root_index, int depth, int split_plies, std::vector<Task>& tasks) {
  if (split_plies == 0 || depth <= 2) {
    tasks.push_back({root_index, pos, depth});
    return;
  }
  MoveList list;
  GenerateLegal(pos, list);
  UndoInfo undo;
  for (Move m : list) {
    pos.DoMove(m, undo);
    Expand(pos, root_index, depth - 1, split_plies - 1, tasks);
    pos.UndoMove(m, undo);
  }
}

// Checks the options Perft and PerftBatch share; returns the thread count to use (0 = all).
absl::StatusOr<int> CheckOptions(int depth, int hash_mb, int threads) {
  if (depth < 0 || depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(
        Cat("perft depth ", depth, " is out of range 0..", kMaxPerftDepth));
  if (hash_mb < 0 || hash_mb > (1 << 20))
    return absl::InvalidArgumentError(Cat("hash size ", hash_mb, " MB is out of range 0..1048576"));
  if (threads < 0 || threads > 1024)
    return absl::InvalidArgumentError(Cat("threads ", threads, " is out of range 0..1024"));
  return threads == 0 ? int(std::max(1u, std::thread::hardware_concurrency())) : threads;
}

absl::Status HashError(int hash_mb) {
  return absl::ResourceExhaustedError(Cat("cannot allocate a perft hash of ", hash_mb, " MB"));
}

// Calls count(t) for every t in [0, n) on `threads` threads pulling from one queue; a thread
// stops early when count returns false or `stop` becomes true.
template <class F>
void RunQueue(size_t n, int threads, const std::atomic<bool>* stop, const F& count) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      if (stop && stop->load(std::memory_order_relaxed)) return;
      if (!count(t)) return;
    }
  };
  if (threads <= 1 || n <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
}

// A batch's table: opts.table, else one of opts.hash_mb in `own` (none below depth 3).
absl::StatusOr<PerftTable*> BatchTable(const PerftBatchOptions& opts, int threads,
                                       std::unique_ptr<PerftTable>& own) {
  if (opts.table || opts.hash_mb <= 0 || opts.depth < 3) return opts.table;
  own = std::make_unique<PerftTable>(opts.hash_mb, threads);
  if (!own->ok()) return HashError(opts.hash_mb);
  return own.get();
}

// Plies a batch of `n` positions splits each one further: few positions for many threads.
int BatchSplit(size_t n, int threads, int depth) {
  int split = 0;
  if (threads > 1 && n < 8 * size_t(threads)) split = depth >= 6 ? 2 : 1;
  return std::min(split, std::max(0, depth - 1));
}

}  // namespace

uint64_t PerftReference(Position& pos, int depth) {
  if (depth == 0) return 1;
  MoveList list;
  GenerateLegal(pos, list);
  uint64_t nodes = 0;
  UndoInfo undo;
  for (Move m : list) {
    pos.DoMove(m, undo);
    nodes += PerftReference(pos, depth - 1);
    pos.UndoMove(m, undo);
  }
  return nodes;
}

absl::StatusOr<PerftResult> Perft(const Position& root, const PerftOptions& opts) {
  ASSIGN_OR_RETURN(const int threads, CheckOptions(opts.depth, opts.hash_mb, opts.threads));
  const auto start = std::chrono::steady_clock::now();
  PerftResult result;
  result.threads = threads;
  const PerftPath& path = ActivePerftPath();  // one copy of the core for the whole count
  result.path = path.name;
  std::unique_ptr<PerftTable> own;
  PerftTable* table = opts.depth >= 3 ? opts.table : nullptr;
  if (!opts.table && opts.hash_mb > 0 && opts.depth >= 3) {
    own = std::make_unique<PerftTable>(opts.hash_mb, threads);
    if (!own->ok()) return HashError(opts.hash_mb);
    table = own.get();
  }

  Position pos = root;
  MoveList roots;
  GenerateLegal(pos, roots);
  std::vector<uint64_t> per_root(roots.size, 0);
  if (opts.depth == 0) {
    result.nodes = 1;
  } else {
    // Split deep enough that threads rarely wait on a big last subtree.
    std::vector<Task> tasks;
    int split = threads > 1 ? (opts.depth >= 6 ? 2 : 1) : 0;
    UndoInfo undo;
    for (int i = 0; i < roots.size; ++i) {
      pos.DoMove(roots.moves[i], undo);
      Expand(pos, i, opts.depth - 1, split, tasks);
      pos.UndoMove(roots.moves[i], undo);
    }
    std::vector<uint64_t> task_nodes(tasks.size(), 0);
    RunQueue(tasks.size(), threads, nullptr, [&](size_t t) {
      task_nodes[t] = CountSubtree(tasks[t].pos, tasks[t].depth, table, true, path);
      return true;
    });
    for (size_t t = 0; t < tasks.size(); ++t) per_root[tasks[t].root_index] += task_nodes[t];
    for (uint64_t n : per_root) result.nodes += n;
  }
  if (opts.divide)
    for (int i = 0; i < roots.size; ++i) result.divide.push_back({roots.moves[i], per_root[i]});
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

uint64_t PerftCount(const Position& pos, int depth) {
  Position p = pos;
  return CountSubtree(p, depth, nullptr);
}

std::shared_ptr<PerftTable> MakePerftTable(int hash_mb, int threads) {
  auto table = std::make_shared<PerftTable>(size_t(std::max(1, hash_mb)), threads);
  return table->ok() ? table : nullptr;
}

absl::StatusOr<std::vector<uint64_t>> PerftBatch(std::span<const Position> positions,
                                                 const PerftBatchOptions& opts) {
  ASSIGN_OR_RETURN(const int threads, CheckOptions(opts.depth, opts.hash_mb, opts.threads));
  RETURN_IF_ERROR(CheckPerftLane(opts.lane(), opts.depth));
  std::unique_ptr<PerftTable> own;
  ASSIGN_OR_RETURN(PerftTable* const table, BatchTable(opts, threads, own));
  const PerftPath& path = ActivePerftPath();
  // A lane's positions are counted whole (its plies are counted from each of them).
  const int split = opts.lane().active() ? 0 : BatchSplit(positions.size(), threads, opts.depth);
  // Unsplit, the positions are the tasks (no copy of each into a task list).
  std::vector<Task> tasks;
  if (split > 0) {
    for (size_t i = 0; i < positions.size(); ++i) {
      Position pos = positions[i];
      Expand(pos, int(i), opts.depth, split, tasks);
    }
  }
  const size_t n = split > 0 ? tasks.size() : positions.size();
  std::vector<uint64_t> task_nodes(n, 0);
  RunQueue(n, threads, opts.stop, [&](size_t t) {
    if (split > 0) {
      // A task at a batch position's own depth is that position (not a descendant).
      const bool own_entry = !opts.distinct || tasks[t].depth != opts.depth;
      task_nodes[t] = CountSubtree(tasks[t].pos, tasks[t].depth, table, own_entry, path);
    } else {
      Position pos = positions[t];
      task_nodes[t] = CountBatchSubtree(pos, opts, table, !opts.distinct, path);
    }
    if (opts.nodes_done) opts.nodes_done->fetch_add(task_nodes[t], std::memory_order_relaxed);
    return true;
  });
  if (opts.stop && opts.stop->load()) return absl::CancelledError("perft batch stopped");
  if (split == 0) return task_nodes;
  std::vector<uint64_t> counts(positions.size(), 0);
  for (size_t t = 0; t < tasks.size(); ++t) counts[tasks[t].root_index] += task_nodes[t];
  return counts;
}

absl::StatusOr<std::vector<uint64_t>> PerftPackedBatch(std::string_view packed,
                                                       const Position& game,
                                                       const PerftBatchOptions& opts) {
  if (packed.size() % kPackedPositionSize != 0)
    return absl::InvalidArgumentError(Cat("packed positions are ", packed.size(),
                                          " bytes, not a multiple of ", kPackedPositionSize));
  const size_t n = packed.size() / kPackedPositionSize;
  // Position i into `out`, or what is wrong with it.
  auto unpack = [&](size_t i, Position& out) -> absl::Status {
    absl::Status s =
        UnpackPosition(packed.substr(i * kPackedPositionSize, kPackedPositionSize), game, out);
    if (s.ok()) return s;
    return absl::InvalidArgumentError(Cat("position ", i, ": ", std::string(s.message())));
  };
  ASSIGN_OR_RETURN(const int threads, CheckOptions(opts.depth, opts.hash_mb, opts.threads));
  RETURN_IF_ERROR(CheckPerftLane(opts.lane(), opts.depth));
  if (!opts.lane().active() && BatchSplit(n, threads, opts.depth) > 0) {
    // Few positions, split further: unpacked first.
    std::vector<Position> positions(n, game);
    for (size_t i = 0; i < n; ++i) RETURN_IF_ERROR(unpack(i, positions[i]));
    return PerftBatch(positions, opts);
  }
  std::unique_ptr<PerftTable> own;
  ASSIGN_OR_RETURN(PerftTable* const table, BatchTable(opts, threads, own));
  const PerftPath& path = ActivePerftPath();
  std::vector<uint64_t> counts(n, 0);
  absl::Mutex mu;
  absl::Status bad;  // the first bad position's error
  std::atomic<bool> failed{false};
  RunQueue(n, threads, opts.stop, [&](size_t i) {
    if (failed.load(std::memory_order_relaxed)) return false;
    Position pos = game;
    if (absl::Status s = unpack(i, pos); !s.ok()) {
      absl::MutexLock lock(&mu);
      if (bad.ok()) bad = std::move(s);
      failed = true;
      return false;
    }
    counts[i] = CountBatchSubtree(pos, opts, table, !opts.distinct, path);
    if (opts.nodes_done) opts.nodes_done->fetch_add(counts[i], std::memory_order_relaxed);
    return true;
  });
  if (failed) {
    absl::MutexLock lock(&mu);
    return bad;
  }
  if (opts.stop && opts.stop->load()) return absl::CancelledError("perft batch stopped");
  return counts;
}

uint64_t PerftCountBound(uint32_t depth) {
  uint64_t bound = 1;
  for (uint32_t d = 0; d < depth; ++d) {
    if (bound > UINT64_MAX / 218) return UINT64_MAX;
    bound *= 218;
  }
  return bound;
}

}  // namespace arbiter
