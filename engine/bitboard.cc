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

// Magic multipliers found once by the search below (seeded, so reproducible) and kept here so
// that a portable build starts in microseconds; the search remains as a fallback if one fails.
constexpr Bitboard kBishopMagics[64] = {
    0x20502000909A0040ULL, 0x0021420409022010ULL, 0x109000A200404000ULL, 0x1088084108000020ULL,
    0x4801104000604008ULL, 0x4401102230004044ULL, 0x004100BA20210A05ULL, 0x4825038844201400ULL,
    0x800444248C0C0420ULL, 0x0002041040820082ULL, 0x0800112802124000ULL, 0x0620912400810308ULL,
    0x0000C40420010812ULL, 0x2000208820080002ULL, 0x2800688410021000ULL, 0x00110104064A0208ULL,
    0x0209802008212810ULL, 0x000200500A580121ULL, 0x9890000800284810ULL, 0x00A8020120414080ULL,
    0x1815901404202000ULL, 0x0000808100600202ULL, 0x0081001421011010ULL, 0x240600C301109248ULL,
    0x0503400090044820ULL, 0x0042300009010802ULL, 0x2808020004002200ULL, 0x0408080000820002ULL,
    0x8101010010104000ULL, 0x000281000A0300A2ULL, 0x8801004401280800ULL, 0x8010408032088408ULL,
    0x0010100400104486ULL, 0x080A109020040104ULL, 0x0008440200900020ULL, 0x6008020080480080ULL,
    0x0404004200140090ULL, 0x1002040040280800ULL, 0x0030340500006100ULL, 0x4030808108020510ULL,
    0x0017108221001000ULL, 0x8404108210000804ULL, 0x08214A0090000600ULL, 0x1C05024202012020ULL,
    0x85D8300204900200ULL, 0x0001101000804040ULL, 0x0091041080842403ULL, 0x800184010248A200ULL,
    0x0001080110881004ULL, 0x00028424021A5038ULL, 0x0080A04218110180ULL, 0x9900810108480002ULL,
    0x410000400902480AULL, 0x4420049002020224ULL, 0x0820081101440412ULL, 0x0060040082024C20ULL,
    0x20C2002412021000ULL, 0x4140008401019000ULL, 0x009402120A091120ULL, 0x9501910400420220ULL,
    0x0000000440028210ULL, 0x2009402020B20080ULL, 0x4A00DA1003063400ULL, 0x0524040800490608ULL,
};
constexpr Bitboard kRookMagics[64] = {
    0x1080004008801020ULL, 0x0840092002C03000ULL, 0x1900200010400900ULL, 0x0880100008000480ULL,
    0x4200100420080200ULL, 0x8100020100080400ULL, 0x0200040110886200ULL, 0x0200008040220411ULL,
    0x0404800084400220ULL, 0x0000401000402000ULL, 0x0086001081220440ULL, 0x0408800800100280ULL,
    0x000A001201040820ULL, 0x8848800200840080ULL, 0x4001000100040200ULL, 0x0442000102105084ULL,
    0x9080010020804100ULL, 0x0040404000201009ULL, 0x0000808010002009ULL, 0x2200090021D00100ULL,
    0x0008008008040080ULL, 0x0004004002010040ULL, 0x0011040008015042ULL, 0x00000A0001768104ULL,
    0x0000800080204009ULL, 0x2010004140002001ULL, 0x9800200280100080ULL, 0x1000100080080080ULL,
    0x0442000A00049020ULL, 0x2100040080020080ULL, 0x0800120400900148ULL, 0x0010040A00128541ULL,
    0x2800804000800030ULL, 0x1010002000400041ULL, 0x4000200011004100ULL, 0x0610008410800800ULL,
    0x0400802402800800ULL, 0xC100020080800400ULL, 0x0002000802000401ULL, 0x0182085882000401ULL,
    0x0220204000808000ULL, 0x2860100040024022ULL, 0x0001002004110040ULL, 0x99101042000A0020ULL,
    0x0004080004008080ULL, 0x0010040002008080ULL, 0x2012004881020004ULL, 0x8300842444820011ULL,
    0x0088403882010200ULL, 0x0820400080210100ULL, 0x0110910040A00300ULL, 0x0801100280080480ULL,
    0x0242009008200600ULL, 0x1002000489500200ULL, 0x0040800200010080ULL, 0x0091800041000080ULL,
    0x0000209300488001ULL, 0x04C1002414824001ULL, 0x020020000B001041ULL, 0x7000100004200901ULL,
    0x8002002004100802ULL, 0x30010002084C0007ULL, 0x0888221800813004ULL, 0x4000002840840112ULL,
};

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

// Fills one slider's magic-indexed and PEXT-indexed tables.
void InitSlider(bool rook, SliderEntry* magic_entries, Bitboard* magic_storage,
                SliderEntry* pext_entries, Bitboard* pext_storage) {
  Prng prng{rook ? 0x9E3779B97F4A7C15ULL : 0xD1B54A32D192ED03ULL};
  static Bitboard occupancy[4096], reference[4096];
  static int epoch[4096];
  int current_epoch = 0;
  Bitboard* next = magic_storage;
  Bitboard* next_pext = pext_storage;
  for (int sq = 0; sq < 64; ++sq) {
    Square s = Square(sq);
    Bitboard edges =
        ((kRank1 | kRank8) & ~RankBb(RankOf(s))) | ((kFileA | kFileH) & ~FileBb(FileOf(s)));
    SliderEntry& e = magic_entries[sq];
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
    // The enumeration counts up in the mask's bits: the i-th subset is the one whose PEXT is i.
    pext_entries[sq] = {.mask = e.mask, .magic = 0, .attacks = next_pext, .shift = e.shift};
    for (int i = 0; i < size; ++i) next_pext[i] = reference[i];
    next_pext += size;
    for (bool first = true;; first = false) {
      if (first) {
        e.magic = rook ? kRookMagics[sq] : kBishopMagics[sq];
      } else {
        do e.magic = prng.Sparse();
        while (PopCount((e.magic * e.mask) >> 56) < 6);
      }
      ++current_epoch;
      bool ok = true;
      for (int i = 0; i < size && ok; ++i) {
        unsigned idx = e.MagicIndex(occupancy[i]);
        if (epoch[idx] < current_epoch) {
          epoch[idx] = current_epoch;
          next[idx] = reference[i];
        } else if (next[idx] != reference[i]) {
          ok = false;
        }
      }
      if (ok) break;
    }
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
  static Bitboard rook_storage[102400], pext_rook_storage[102400];
  static Bitboard bishop_storage[5248], pext_bishop_storage[5248];
  InitSlider(true, t->magic_rook, rook_storage, t->pext_rook, pext_rook_storage);
  InitSlider(false, t->magic_bishop, bishop_storage, t->pext_bishop, pext_bishop_storage);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) {
      t->between[a][b] = t->line[a][b] = 0;
      if (a == b) continue;
      Square sa = Square(a), sb = Square(b);
      for (bool rook : {true, false}) {
        if (SlidingAttacks(rook, sa, 0) & SquareBb(sb)) {
          t->line[a][b] = (SlidingAttacks(rook, sa, 0) & SlidingAttacks(rook, sb, 0)) |
                          SquareBb(sa) | SquareBb(sb);
          t->between[a][b] =
              SlidingAttacks(rook, sa, SquareBb(sb)) & SlidingAttacks(rook, sb, SquareBb(sa));
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
