#include "engine/perft.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/movegen.h"

namespace arbiter {

// Shared perft hash. Each entry is four words: check = lo ^ hi ^ count ^ depth, hi, count,
// depth. A hit needs the full 128-bit key (lo through the XOR, hi directly) and the depth, so
// a false hit needs a 2^-128 coincidence; a torn concurrent write breaks the XOR and reads as
// a miss. Two entries share a 64-byte bucket; the shallower one is replaced.
class PerftTable {
 public:
  // Zeroes the table on `threads` threads: the first touch of fresh memory (the kernel clearing
  // its pages) is the cost, ~0.3-2 s a GB depending on the machine, and it divides.
  explicit PerftTable(size_t mb, int threads = 1) {
    size_t bytes = mb << 20, buckets = 1;
    while (buckets * 2 * sizeof(Bucket) <= bytes) buckets *= 2;
    mask_ = buckets - 1;
    size_ = buckets * sizeof(Bucket);
    mem_ = static_cast<Bucket*>(std::aligned_alloc(2 << 20, std::max<size_t>(size_, 2 << 20)));
    if (!mem_) return;  // ok() is false
    madvise(mem_, size_, MADV_HUGEPAGE);
    Clear(threads);
  }
  ~PerftTable() { std::free(mem_); }
  bool ok() const { return mem_ != nullptr; }

  // Zeroes every entry on `threads` threads.
  void Clear(int threads) {
    char* bytes_at = reinterpret_cast<char*>(mem_);
    // Slices on 2 MB (huge page) boundaries; the last one ends at the end (a 1 MB table is
    // one slice).
    const size_t pages = std::max<size_t>(1, size_ >> 21);
    const size_t parts = std::min<size_t>(size_t(std::max(1, threads)), pages);
    auto zero = [&](size_t t) {
      const size_t begin = pages * t / parts << 21;
      const size_t end = t + 1 == parts ? size_ : pages * (t + 1) / parts << 21;
      std::memset(bytes_at + begin, 0, end - begin);
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < parts; ++t) pool.emplace_back(zero, t);
    zero(0);
    for (std::thread& th : pool) th.join();
  }
  PerftTable(const PerftTable&) = delete;
  PerftTable& operator=(const PerftTable&) = delete;

  void Prefetch(const Key128& k) const { __builtin_prefetch(&mem_[k.lo & mask_]); }

  bool Probe(const Key128& k, int depth, uint64_t& count) const {
    const Bucket& b = mem_[k.lo & mask_];
    for (int i = 0; i < 2; ++i) {
      uint64_t check = b.w[4 * i].load(std::memory_order_relaxed);
      uint64_t hi = b.w[4 * i + 1].load(std::memory_order_relaxed);
      uint64_t c = b.w[4 * i + 2].load(std::memory_order_relaxed);
      uint64_t d = b.w[4 * i + 3].load(std::memory_order_relaxed);
      if (hi == k.hi && d == uint64_t(depth) && (check ^ hi ^ c ^ d) == k.lo) {
        count = c;
        return true;
      }
    }
    return false;
  }

  void Store(const Key128& k, int depth, uint64_t count) {
    Bucket& b = mem_[k.lo & mask_];
    uint64_t d0 = b.w[3].load(std::memory_order_relaxed);
    uint64_t d1 = b.w[7].load(std::memory_order_relaxed);
    int slot = d1 < d0 ? 1 : 0;
    b.w[4 * slot].store(k.lo ^ k.hi ^ count ^ uint64_t(depth), std::memory_order_relaxed);
    b.w[4 * slot + 1].store(k.hi, std::memory_order_relaxed);
    b.w[4 * slot + 2].store(count, std::memory_order_relaxed);
    b.w[4 * slot + 3].store(uint64_t(depth), std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Bucket {
    std::atomic<uint64_t> w[8];
  };
  Bucket* mem_ = nullptr;
  size_t mask_ = 0, size_ = 0;
};

// The bitboards of a position one ply below a full Position: enough to count its legal moves.
// Built by copying a snapshot of the parent's bitboards (one per colour and piece type, so that
// the counter reads each set with one load) and applying one move: no mailbox, no undo, which
// is cheaper than DoMove/UndoMove for the last interior ply.
class LeafBoard {
 public:
  // The parent's own bitboards, taken once and copied for each of its moves.
  explicit LeafBoard(const Position& parent) : parent_(parent) {
    for (Color c : {kWhite, kBlack}) {
      for (int pt = 0; pt < 6; ++pt) bb_[c][pt] = parent.Pieces(c, PieceType(pt));
      occ_[c] = parent.Pieces(c);
    }
    castling_ = parent.CastlingRights();
  }
  template <Color Us>
  LeafBoard After(Move m) const {
    LeafBoard b(*this);
    b.Apply<Us>(m);
    return b;
  }

 private:
  template <Color Us>
  void Apply(Move m) {
    constexpr Color Them = ~Us;
    const Position& parent = parent_;
    const Square from = m.From(), to = m.To();
    const PieceType pt = TypeOf(parent.PieceOn(from));
    const Bitboard from_to = SquareBb(from) | SquareBb(to);
    switch (m.KindOf()) {
      case Move::kNormal: {
        const Piece captured = parent.PieceOn(to);
        if (captured != kNoPiece) {
          bb_[Them][TypeOf(captured)] ^= SquareBb(to);
          occ_[Them] ^= SquareBb(to);
        }
        bb_[Us][pt] ^= from_to;
        occ_[Us] ^= from_to;
        if (pt == kPawn && (from ^ to) == 16) {
          const Square ep = Square((from + to) / 2);
          if (PawnAttacks(Us, ep) & bb_[Them][kPawn]) ep_ = ep;
        }
        break;
      }
      case Move::kPromotion: {
        const Piece captured = parent.PieceOn(to);
        if (captured != kNoPiece) {
          bb_[Them][TypeOf(captured)] ^= SquareBb(to);
          occ_[Them] ^= SquareBb(to);
        }
        bb_[Us][kPawn] ^= SquareBb(from);
        bb_[Us][m.Promotion()] ^= SquareBb(to);
        occ_[Us] ^= from_to;
        break;
      }
      case Move::kEnPassant: {
        const Bitboard cap = SquareBb(Square(to - kPawnPush[Us]));
        bb_[Us][kPawn] ^= from_to;
        bb_[Them][kPawn] ^= cap;
        occ_[Us] ^= from_to;
        occ_[Them] ^= cap;
        break;
      }
      case Move::kCastling: {
        // Remove both, then place both: in Chess960 a piece may start on its own target square.
        const bool king_side = to > from;
        const Bitboard king_to = SquareBb(Position::CastlingKingTo(Us, king_side));
        const Bitboard rook_to = SquareBb(Position::CastlingRookTo(Us, king_side));
        bb_[Us][kKing] = king_to;
        bb_[Us][kRook] = (bb_[Us][kRook] & ~SquareBb(to)) | rook_to;
        occ_[Us] = (occ_[Us] & ~from_to) | king_to | rook_to;
        break;
      }
    }
    castling_ &= ~parent.CastlingLossMask(from, to);
  }

 public:
  Bitboard Pieces() const { return occ_[0] | occ_[1]; }
  Bitboard Pieces(Color c) const { return occ_[c]; }
  Bitboard Pieces(Color c, PieceType pt) const { return bb_[c][pt]; }
  Bitboard Pieces(Color c, PieceType a, PieceType b) const { return bb_[c][a] | bb_[c][b]; }
  Square KingSquare(Color c) const { return Lsb(bb_[c][kKing]); }
  Square EpSquare() const { return ep_; }
  bool CanCastle(int index) const { return castling_ & (1 << index); }
  Square CastlingRook(int index) const { return parent_.CastlingRook(index); }
  Bitboard CastlingPath(int index) const { return parent_.CastlingPath(index); }
  Bitboard CastlingKingPath(int index) const { return parent_.CastlingKingPath(index); }
  Bitboard AttackersTo(Square s, Color by, Bitboard occupied) const {
    return AttackersOf(*this, s, by, occupied);
  }

 private:
  Bitboard bb_[2][6];
  Bitboard occ_[2];
  const Position& parent_;
  Square ep_ = kNoSquare;
  uint8_t castling_;
};

namespace {

using movegen_detail::Generate;
using movegen_detail::kAll;

template <Color Us, bool kHash>
uint64_t PerftRecurse(Position& pos, int depth, PerftTable* table) {
  constexpr Color Them = ~Us;
  Move moves[256];
  const int n = Generate<Us, kAll>(pos, moves);
  UndoInfo undo;
  uint64_t nodes = 0;
  if (depth == 2) {
    const LeafBoard parent(pos);
    for (int i = 0; i < n; ++i) {
      const LeafBoard child = parent.After<Us>(moves[i]);
      nodes += movegen_detail::Generate<Them, movegen_detail::kCount>(child, nullptr);
    }
    return nodes;
  }
  if constexpr (kHash) {
    // First pass: the children's keys, with their table lines prefetched, so that the probes
    // of the second pass overlap their memory latency instead of paying it one by one.
    Key128 keys[256];
    for (int i = 0; i < n; ++i) {
      pos.DoMove<true>(moves[i], undo);
      keys[i] = pos.Key();
      table->Prefetch(keys[i]);
      pos.UndoMove<true>(moves[i], undo);
    }
    for (int i = 0; i < n; ++i) {
      uint64_t cached;
      if (table->Probe(keys[i], depth - 1, cached)) {
        nodes += cached;
        continue;
      }
      pos.DoMove<true>(moves[i], undo);
      uint64_t c = PerftRecurse<Them, kHash>(pos, depth - 1, table);
      pos.UndoMove<true>(moves[i], undo);
      table->Store(keys[i], depth - 1, c);
      nodes += c;
    }
  } else {
    for (int i = 0; i < n; ++i) {
      pos.DoMove<false>(moves[i], undo);
      nodes += PerftRecurse<Them, kHash>(pos, depth - 1, table);
      pos.UndoMove<false>(moves[i], undo);
    }
  }
  return nodes;
}

// Counts the subtree below `pos` (depth >= 1), using the table when there is one.
// `own_entry` false: pos's own count is neither looked up nor stored (only its subtree's are).
uint64_t CountSubtree(Position& pos, int depth, PerftTable* table, bool own_entry = true) {
  if (depth == 0) return 1;
  if (depth == 1) return CountLegal(pos);
  uint64_t cached;
  if (table && own_entry && table->Probe(pos.Key(), depth, cached)) return cached;
  uint64_t c;
  if (pos.SideToMove() == kWhite)
    c = table ? PerftRecurse<kWhite, true>(pos, depth, table)
              : PerftRecurse<kWhite, false>(pos, depth, table);
  else
    c = table ? PerftRecurse<kBlack, true>(pos, depth, table)
              : PerftRecurse<kBlack, false>(pos, depth, table);
  if (table && own_entry) table->Store(pos.Key(), depth, c);
  return c;
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
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks.size();)
        task_nodes[t] = CountSubtree(tasks[t].pos, tasks[t].depth, table);
    };
    if (threads <= 1 || tasks.size() <= 1) {
      worker();
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
      for (auto& th : pool) th.join();
    }
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
  std::unique_ptr<PerftTable> own;
  PerftTable* table = opts.table;
  if (!table && opts.hash_mb > 0 && opts.depth >= 3) {
    own = std::make_unique<PerftTable>(opts.hash_mb, threads);
    if (!own->ok()) return HashError(opts.hash_mb);
    table = own.get();
  }
  // Few positions for many threads: split each one a ply or two deeper.
  int split = 0;
  if (threads > 1 && positions.size() < 8 * size_t(threads)) split = opts.depth >= 6 ? 2 : 1;
  std::vector<Task> tasks;
  for (size_t i = 0; i < positions.size(); ++i) {
    Position pos = positions[i];
    Expand(pos, int(i), opts.depth, std::min(split, std::max(0, opts.depth - 1)), tasks);
  }
  std::vector<uint64_t> task_nodes(tasks.size(), 0);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks.size();) {
      if (opts.stop && opts.stop->load(std::memory_order_relaxed)) return;
      // A task at a batch position's own depth is that position (not a descendant).
      const bool own_entry = !opts.distinct || tasks[t].depth != opts.depth;
      task_nodes[t] = CountSubtree(tasks[t].pos, tasks[t].depth, table, own_entry);
      if (opts.nodes_done) opts.nodes_done->fetch_add(task_nodes[t], std::memory_order_relaxed);
    }
  };
  if (threads <= 1 || tasks.size() <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  if (opts.stop && opts.stop->load()) return absl::CancelledError("perft batch stopped");
  std::vector<uint64_t> counts(positions.size(), 0);
  for (size_t t = 0; t < tasks.size(); ++t) counts[tasks[t].root_index] += task_nodes[t];
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
