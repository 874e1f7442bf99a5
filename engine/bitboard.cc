#include "engine/bitboard.h"

#include <initializer_list>


namespace arbiter {
namespace {

// Slow ray walk used only to fill the tables.
Bitboard SlidingAttacks(bool rook, Square s, Bitboard occupied) {
  static constexpr int kRookDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  static constexpr int kBishopDirs[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  const auto& dirs = rook ? kRookDirs : kBishopDirs;
  Bitboard attacks = 0;
  for (const auto& d : dirs) {
    int f = FileOf(s) + d[0], r = RankOf(s) + d[1];
    while (f >= 0 && f < 8 && r >= 0 && r < 8) {
      Square t = MakeSquare(f, r);
      attacks |= SquareBb(t);
      if (occupied & SquareBb(t)) break;
      f += d[0];
      r += d[1];
    }
  }
  return attacks;
}

// xorshift64* generator for the magic search; seeded, so tables are identical every run.
struct Prng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
  uint64_t Sparse() { return Next() & Next() & Next(); }
};

// Fills one slider table; finds magics when PEXT is not in use.
void InitSlider(bool rook, SliderEntry* entries, Bitboard* storage) {
  Prng prng{rook ? 0x9E3779B97F4A7C15ULL : 0xD1B54A32D192ED03ULL};
  static Bitboard occupancy[4096], reference[4096];
  [[maybe_unused]] static int epoch[4096];
  int current_epoch = 0;
  Bitboard* next = storage;
  for (int sq = 0; sq < 64; ++sq) {
    Square s = Square(sq);
    Bitboard edges = ((kRank1 | kRank8) & ~RankBb(RankOf(s))) | ((kFileA | kFileH) & ~FileBb(FileOf(s)));
    SliderEntry& e = entries[sq];
    e.mask = SlidingAttacks(rook, s, 0) & ~edges;
    int bits = PopCount(e.mask);
    e.shift = 64 - bits;
    e.attacks = next;
    int size = 0;
    Bitboard b = 0;
    do {  // Carry-Rippler enumeration of every subset of the mask.
      occupancy[size] = b;
      reference[size] = SlidingAttacks(rook, s, b);
      ++size;
      b = (b - e.mask) & e.mask;
    } while (b);
#if ARBITER_USE_PEXT
    e.magic = 0;
    for (int i = 0; i < size; ++i) next[_pext_u64(occupancy[i], e.mask)] = reference[i];
#else
    for (;;) {
      do e.magic = prng.Sparse();
      while (PopCount((e.magic * e.mask) >> 56) < 6);
      ++current_epoch;
      bool ok = true;
      for (int i = 0; i < size && ok; ++i) {
        unsigned idx = e.Index(occupancy[i]);
        if (epoch[idx] < current_epoch) {
          epoch[idx] = current_epoch;
          next[idx] = reference[i];
        } else if (next[idx] != reference[i]) {
          ok = false;
        }
      }
      if (ok) break;
    }
#endif
    (void)prng;
    (void)current_epoch;
    next += size;
  }
}

void BuildTables(AttackTables* t) {
  for (int sq = 0; sq < 64; ++sq) {
    Square s = Square(sq);
    Bitboard b = SquareBb(s);
    t->pawn[kWhite][sq] = PawnAttacksBb<kWhite>(b);
    t->pawn[kBlack][sq] = PawnAttacksBb<kBlack>(b);
    Bitboard knight = 0, king = 0;
    for (int df = -2; df <= 2; ++df)
      for (int dr = -2; dr <= 2; ++dr) {
        int f = FileOf(s) + df, r = RankOf(s) + dr;
        if (f < 0 || f > 7 || r < 0 || r > 7) continue;
        int adf = df < 0 ? -df : df, adr = dr < 0 ? -dr : dr;
        if (adf + adr == 3 && adf && adr) knight |= SquareBb(MakeSquare(f, r));
        if (adf <= 1 && adr <= 1 && (adf || adr)) king |= SquareBb(MakeSquare(f, r));
      }
    t->knight[sq] = knight;
    t->pseudo_bishop[sq] = SlidingAttacks(false, s, 0);
    t->pseudo_rook[sq] = SlidingAttacks(true, s, 0);
    t->king[sq] = king;
  }
  static Bitboard rook_storage[102400];
  static Bitboard bishop_storage[5248];
  InitSlider(true, t->rook, rook_storage);
  InitSlider(false, t->bishop, bishop_storage);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) {
      t->between[a][b] = t->line[a][b] = 0;
      if (a == b) continue;
      Square sa = Square(a), sb = Square(b);
      for (bool rook : {true, false}) {
        if (SlidingAttacks(rook, sa, 0) & SquareBb(sb)) {
          t->line[a][b] = (SlidingAttacks(rook, sa, 0) & SlidingAttacks(rook, sb, 0)) | SquareBb(sa) |
                          SquareBb(sb);
          t->between[a][b] = SlidingAttacks(rook, sa, SquareBb(sb)) & SlidingAttacks(rook, sb, SquareBb(sa));
        }
      }
    }
}

struct TableInitializer {
  TableInitializer() { BuildTables(&kAttacks); }
};

}  // namespace

AttackTables kAttacks;
static TableInitializer table_initializer;

const char* SliderIndexing() { return ARBITER_USE_PEXT ? "pext" : "magic"; }

}  // namespace arbiter
