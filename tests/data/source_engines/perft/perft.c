/* A small UCI perft engine for arbiter's movegen-check and perft-diff tests of engines built
   from source: full legal move generation on a 10x12 mailbox (copy-make, then "is the mover's
   king attacked"), standard castling only (no UCI_Chess960 option), and `go perft N` answered
   in Stockfish's divide format. Built with -DNO_UNDERPROMOTION (`make BUG=1`) a pawn reaching
   the last rank becomes only a queen: the classic missing-underpromotion bug. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EMPTY = 0, P = 1, N, B, R, Q, K, OFF = 99 };
enum { F_EP = 1, F_CASTLE = 2, F_DOUBLE = 4 };
enum { MAX_MOVES = 256 };

typedef struct {
  unsigned char from, to, promo, flags;
} Move;

typedef struct {
  int sq[120]; /* white pieces positive, black negative, OFF outside the board */
  int side;    /* +1 white to move, -1 black */
  int castle;  /* 1 white short, 2 white long, 4 black short, 8 black long */
  int ep;      /* the square a pawn may capture onto en passant, 0 for none */
  int king[2]; /* [0] white, [1] black */
} Pos;

static const int kKnight[8] = {-21, -19, -12, -8, 8, 12, 19, 21};
static const int kKing[8] = {-11, -10, -9, -1, 1, 9, 10, 11};
static const int kDiagonal[4] = {-11, -9, 9, 11};
static const int kStraight[4] = {-10, -1, 1, 10};

static int Square(int file, int rank) { return 21 + file + 10 * rank; }
static int FileOf(int s) { return s % 10 - 1; }
static int RankOf(int s) { return s / 10 - 2; }
static int Side(int piece) { return piece > 0 ? 1 : -1; }
static int KingIndex(int side) { return side > 0 ? 0 : 1; }

/* Whether side `by` attacks square s. */
static int Attacked(const Pos *p, int s, int by) {
  int i, t;
  if (p->sq[s - 9 * by] == P * by || p->sq[s - 11 * by] == P * by) return 1;
  for (i = 0; i < 8; i++) {
    if (p->sq[s + kKnight[i]] == N * by) return 1;
    if (p->sq[s + kKing[i]] == K * by) return 1;
  }
  for (i = 0; i < 4; i++) {
    for (t = s + kDiagonal[i]; p->sq[t] == EMPTY; t += kDiagonal[i]) {
    }
    if (p->sq[t] == B * by || p->sq[t] == Q * by) return 1;
    for (t = s + kStraight[i]; p->sq[t] == EMPTY; t += kStraight[i]) {
    }
    if (p->sq[t] == R * by || p->sq[t] == Q * by) return 1;
  }
  return 0;
}

static void Add(Move *list, int *n, int from, int to, int promo, int flags) {
  list[*n].from = (unsigned char)from;
  list[*n].to = (unsigned char)to;
  list[*n].promo = (unsigned char)promo;
  list[*n].flags = (unsigned char)flags;
  ++*n;
}

static void AddPawnMove(Move *list, int *n, int from, int to, int flags) {
  if (RankOf(to) != 0 && RankOf(to) != 7) {
    Add(list, n, from, to, 0, flags);
    return;
  }
  Add(list, n, from, to, Q, flags);
#ifndef NO_UNDERPROMOTION
  Add(list, n, from, to, R, flags);
  Add(list, n, from, to, B, flags);
  Add(list, n, from, to, N, flags);
#endif
}

static void Slide(const Pos *p, Move *list, int *n, int from, const int *dirs, int count,
                  int slides) {
  int i, t;
  for (i = 0; i < count; i++)
    for (t = from + dirs[i]; p->sq[t] != OFF; t += dirs[i]) {
      if (p->sq[t] != EMPTY && Side(p->sq[t]) == p->side) break;
      Add(list, n, from, t, 0, 0);
      if (p->sq[t] != EMPTY || !slides) break;
    }
}

/* Pseudo-legal moves; castling already checked for attacks on the king's path. */
static int Generate(const Pos *p, Move *list) {
  const int us = p->side;
  int n = 0, s, i;
  for (s = 21; s < 99; s++) {
    const int piece = p->sq[s] * us;
    if (p->sq[s] == OFF || piece <= 0) continue;
    if (piece == P) {
      const int ahead = s + 10 * us, start = us > 0 ? 1 : 6;
      if (p->sq[ahead] == EMPTY) {
        AddPawnMove(list, &n, s, ahead, 0);
        if (RankOf(s) == start && p->sq[ahead + 10 * us] == EMPTY)
          Add(list, &n, s, ahead + 10 * us, 0, F_DOUBLE);
      }
      for (i = -1; i <= 1; i += 2) {
        const int t = ahead + i;
        if (p->sq[t] != OFF && p->sq[t] != EMPTY && Side(p->sq[t]) != us)
          AddPawnMove(list, &n, s, t, 0);
        else if (t == p->ep && p->ep != 0)
          Add(list, &n, s, t, 0, F_EP);
      }
    } else if (piece == N) {
      Slide(p, list, &n, s, kKnight, 8, 0);
    } else if (piece == K) {
      Slide(p, list, &n, s, kKing, 8, 0);
    } else {
      if (piece != R) Slide(p, list, &n, s, kDiagonal, 4, 1);
      if (piece != B) Slide(p, list, &n, s, kStraight, 4, 1);
    }
  }
  {
    const int e = Square(4, us > 0 ? 0 : 7), shift = us > 0 ? 0 : 2;
    if (p->sq[e] == K * us && !Attacked(p, e, -us)) {
      if ((p->castle >> shift & 1) && p->sq[e + 3] == R * us && p->sq[e + 1] == EMPTY &&
          p->sq[e + 2] == EMPTY && !Attacked(p, e + 1, -us))
        Add(list, &n, e, e + 2, 0, F_CASTLE);
      if ((p->castle >> shift & 2) && p->sq[e - 4] == R * us && p->sq[e - 1] == EMPTY &&
          p->sq[e - 2] == EMPTY && p->sq[e - 3] == EMPTY && !Attacked(p, e - 1, -us))
        Add(list, &n, e, e - 2, 0, F_CASTLE);
    }
  }
  return n;
}

/* The castling rights a move from or to square s takes away. */
static int RightsLost(int s) {
  if (s == Square(4, 0)) return 3;
  if (s == Square(7, 0)) return 1;
  if (s == Square(0, 0)) return 2;
  if (s == Square(4, 7)) return 12;
  if (s == Square(7, 7)) return 4;
  if (s == Square(0, 7)) return 8;
  return 0;
}

static void Make(Pos *p, Move m) {
  const int us = p->side, piece = p->sq[m.from];
  p->sq[m.to] = m.promo ? m.promo * us : piece;
  p->sq[m.from] = EMPTY;
  if (m.flags & F_EP) p->sq[m.to - 10 * us] = EMPTY;
  if (m.flags & F_CASTLE) {
    const int short_side = m.to > m.from;
    const int rook_from = short_side ? m.from + 3 : m.from - 4;
    const int rook_to = short_side ? m.from + 1 : m.from - 1;
    p->sq[rook_to] = p->sq[rook_from];
    p->sq[rook_from] = EMPTY;
  }
  if (piece == K * us) p->king[KingIndex(us)] = m.to;
  p->ep = (m.flags & F_DOUBLE) ? m.from + 10 * us : 0;
  p->castle &= ~(RightsLost(m.from) | RightsLost(m.to));
  p->side = -us;
}

static int LegalMoves(const Pos *p, Move *out) {
  Move list[MAX_MOVES];
  const int n = Generate(p, list);
  int i, legal = 0;
  for (i = 0; i < n; i++) {
    Pos next = *p;
    Make(&next, list[i]);
    if (!Attacked(&next, next.king[KingIndex(p->side)], next.side)) out[legal++] = list[i];
  }
  return legal;
}

static unsigned long long Perft(const Pos *p, int depth) {
  Move list[MAX_MOVES];
  const int n = LegalMoves(p, list);
  unsigned long long nodes = 0;
  int i;
  if (depth <= 1) return depth <= 0 ? 1 : (unsigned long long)n;
  for (i = 0; i < n; i++) {
    Pos next = *p;
    Make(&next, list[i]);
    nodes += Perft(&next, depth - 1);
  }
  return nodes;
}

static void MoveText(Move m, char *out) {
  out[0] = (char)('a' + FileOf(m.from));
  out[1] = (char)('1' + RankOf(m.from));
  out[2] = (char)('a' + FileOf(m.to));
  out[3] = (char)('1' + RankOf(m.to));
  out[4] = m.promo ? "  nbrq"[m.promo] : '\0';
  out[5] = '\0';
}

/* Reads a FEN's board, side, castling (KQkq) and en passant fields; 0 when malformed. */
static int SetFen(Pos *p, const char *fen) {
  const char *pieces = "pnbrqk";
  int rank = 7, file = 0, s;
  memset(p, 0, sizeof *p);
  for (s = 0; s < 120; s++) p->sq[s] = s < 21 || s > 98 || FileOf(s) < 0 || FileOf(s) > 7 ? OFF : 0;
  for (; *fen && *fen != ' '; fen++) {
    const char *kind = strchr(pieces, *fen | 32);
    if (*fen == '/') {
      rank--;
      file = 0;
    } else if (*fen >= '1' && *fen <= '8') {
      file += *fen - '0';
    } else if (kind && rank >= 0 && file < 8) {
      const int piece = (int)(kind - pieces + 1) * (*fen & 32 ? -1 : 1);
      p->sq[Square(file, rank)] = piece;
      if (piece == K) p->king[0] = Square(file, rank);
      if (piece == -K) p->king[1] = Square(file, rank);
      file++;
    } else {
      return 0;
    }
  }
  while (*fen == ' ') fen++;
  p->side = *fen == 'b' ? -1 : 1;
  while (*fen && *fen != ' ') fen++;
  while (*fen == ' ') fen++;
  for (; *fen && *fen != ' '; fen++)
    p->castle |= *fen == 'K' ? 1 : *fen == 'Q' ? 2 : *fen == 'k' ? 4 : *fen == 'q' ? 8 : 0;
  while (*fen == ' ') fen++;
  if (fen[0] >= 'a' && fen[0] <= 'h' && fen[1] >= '1' && fen[1] <= '8')
    p->ep = Square(fen[0] - 'a', fen[1] - '1');
  return p->king[0] && p->king[1];
}

/* Plays the legal move spelt `text`; 0 when there is none. */
static int PlayText(Pos *p, const char *text) {
  Move list[MAX_MOVES];
  char spelt[6];
  const int n = LegalMoves(p, list);
  int i;
  for (i = 0; i < n; i++) {
    MoveText(list[i], spelt);
    if (strcmp(spelt, text) == 0) {
      Make(p, list[i]);
      return 1;
    }
  }
  return 0;
}

static void Divide(const Pos *p, int depth) {
  Move list[MAX_MOVES];
  const int n = LegalMoves(p, list);
  unsigned long long total = 0;
  int i;
  char text[6];
  if (depth < 1) {
    printf("\nNodes searched: 1\n\n");
    return;
  }
  for (i = 0; i < n; i++) {
    Pos next = *p;
    unsigned long long count;
    Make(&next, list[i]);
    count = Perft(&next, depth - 1);
    MoveText(list[i], text);
    printf("%s: %llu\n", text, count);
    total += count;
  }
  printf("\nNodes searched: %llu\n\n", total);
}

static const char *kStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

int main(void) {
  static char line[1 << 16];
  Pos pos;
  setvbuf(stdout, NULL, _IOLBF, 0);
  SetFen(&pos, kStart);
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strcmp(line, "uci") == 0) {
#ifdef NO_UNDERPROMOTION
      printf("id name cperft (no underpromotion)\n");
#else
      printf("id name cperft\n");
#endif
      printf("id author arbiter tests\nuciok\n");
    } else if (strcmp(line, "isready") == 0) {
      printf("readyok\n");
    } else if (strncmp(line, "position ", 9) == 0) {
      char *moves = strstr(line, " moves ");
      if (moves) *moves = '\0';
      if (!SetFen(&pos, strncmp(line + 9, "fen ", 4) == 0 ? line + 13 : kStart)) {
        printf("info string bad fen\n");
        SetFen(&pos, kStart);
      } else if (moves) {
        char *word = strtok(moves + 7, " ");
        for (; word; word = strtok(NULL, " "))
          if (!PlayText(&pos, word)) printf("info string illegal move %s\n", word);
      }
    } else if (strncmp(line, "go perft ", 9) == 0) {
      Divide(&pos, atoi(line + 9));
    } else if (strncmp(line, "go", 2) == 0) {
      Move list[MAX_MOVES];
      char text[6] = "0000";
      if (LegalMoves(&pos, list) > 0) MoveText(list[0], text);
      printf("bestmove %s\n", text);
    } else if (strcmp(line, "quit") == 0) {
      break;
    }
  }
  return 0;
}
