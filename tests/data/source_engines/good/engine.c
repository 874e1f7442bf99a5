/* A tiny UCI engine for arbiter's build-from-source tests: a 0x88 move generator that plays a
   pseudo-random legal move at once. `engine bench` prints the perft(4) of the start position in
   Stockfish's format ("Nodes searched : 197281"), its bench signature. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BENCH_OFFSET /* tests: a build whose bench differs from the others' */
#define BENCH_OFFSET 0
#endif

enum { PAWN = 1, KNIGHT, BISHOP, ROOK, QUEEN, KING };
enum { WHITE = 8, BLACK = 16 };
typedef struct { int from, to, promo; } Move;
typedef struct { int board[128], side, castle, ep; } State;

static State s;
static const int knight_d[8] = {33, 31, 18, 14, -33, -31, -18, -14};
static const int king_d[8] = {1, -1, 16, -16, 17, 15, -17, -15};
static const int bishop_d[4] = {17, 15, -17, -15};
static const int rook_d[4] = {1, -1, 16, -16};

static int on_board(int sq) { return !(sq & 0x88); }

static int attacked(int sq, int by) {
  int i, t, d;
  const int back = by == WHITE ? -16 : 16;
  for (i = -1; i <= 1; i += 2)
    if (on_board(t = sq + back + i) && s.board[t] == (by | PAWN)) return 1;
  for (i = 0; i < 8; i++) {
    if (on_board(t = sq + knight_d[i]) && s.board[t] == (by | KNIGHT)) return 1;
    if (on_board(t = sq + king_d[i]) && s.board[t] == (by | KING)) return 1;
  }
  for (i = 0; i < 8; i++) {
    const int diagonal = i < 4;
    d = diagonal ? bishop_d[i] : rook_d[i - 4];
    for (t = sq + d; on_board(t); t += d) {
      if (!s.board[t]) continue;
      if (s.board[t] == (by | QUEEN) || s.board[t] == (by | (diagonal ? BISHOP : ROOK))) return 1;
      break;
    }
  }
  return 0;
}

static void add(Move *m, int *n, int from, int to, int promo) {
  m[*n].from = from;
  m[*n].to = to;
  m[*n].promo = promo;
  ++*n;
}

static void add_pawn(Move *m, int *n, int from, int to) {
  if ((to >> 4) == 7 || (to >> 4) == 0) {
    add(m, n, from, to, QUEEN);
    add(m, n, from, to, ROOK);
    add(m, n, from, to, BISHOP);
    add(m, n, from, to, KNIGHT);
  } else {
    add(m, n, from, to, 0);
  }
}

/* Pseudo-legal moves (castling already checked for attacks). */
static int generate(Move *m) {
  int n = 0, from, t, i;
  const int us = s.side, them = s.side ^ 24;
  for (from = 0; from < 128; from++) {
    const int p = s.board[from], kind = p & 7;
    if (!on_board(from) || !(p & us)) continue;
    if (kind == PAWN) {
      const int fwd = us == WHITE ? 16 : -16, start = us == WHITE ? 1 : 6;
      t = from + fwd;
      if (on_board(t) && !s.board[t]) {
        add_pawn(m, &n, from, t);
        if ((from >> 4) == start && !s.board[t + fwd]) add(m, &n, from, t + fwd, 0);
      }
      for (i = -1; i <= 1; i += 2)
        if (on_board(t = from + fwd + i) && ((s.board[t] & them) || t == s.ep))
          add_pawn(m, &n, from, t);
    } else {
      const int *dirs = kind == KNIGHT ? knight_d : kind == BISHOP ? bishop_d
                        : kind == ROOK ? rook_d : king_d;
      const int count = kind == BISHOP || kind == ROOK ? 4 : 8;
      const int slides = kind == BISHOP || kind == ROOK || kind == QUEEN;
      for (i = 0; i < count; i++)
        for (t = from + dirs[i]; on_board(t); t += dirs[i]) {
          if (s.board[t] & us) break;
          add(m, &n, from, t, 0);
          if (s.board[t] || !slides) break;
        }
    }
  }
  {
    const int base = us == WHITE ? 0 : 112, k = us == WHITE ? 1 : 4, q = us == WHITE ? 2 : 8;
    if (s.board[base + 4] == (us | KING) && !attacked(base + 4, them)) {
      if ((s.castle & k) && s.board[base + 7] == (us | ROOK) && !s.board[base + 5] &&
          !s.board[base + 6] && !attacked(base + 5, them) && !attacked(base + 6, them))
        add(m, &n, base + 4, base + 6, 0);
      if ((s.castle & q) && s.board[base] == (us | ROOK) && !s.board[base + 1] &&
          !s.board[base + 2] && !s.board[base + 3] && !attacked(base + 3, them) &&
          !attacked(base + 2, them))
        add(m, &n, base + 4, base + 2, 0);
    }
  }
  return n;
}

static int rights(int sq) {
  switch (sq) {
    case 0: return 2;
    case 4: return 3;
    case 7: return 1;
    case 112: return 8;
    case 116: return 12;
    case 119: return 4;
  }
  return 0;
}

static void make(Move mv) {
  const int p = s.board[mv.from], kind = p & 7;
  if (kind == PAWN && mv.to == s.ep) s.board[mv.to + (s.side == WHITE ? -16 : 16)] = 0;
  s.board[mv.to] = mv.promo ? (s.side | mv.promo) : p;
  s.board[mv.from] = 0;
  if (kind == KING && mv.to - mv.from == 2) {
    s.board[mv.from + 1] = s.board[mv.from + 3];
    s.board[mv.from + 3] = 0;
  }
  if (kind == KING && mv.from - mv.to == 2) {
    s.board[mv.from - 1] = s.board[mv.from - 4];
    s.board[mv.from - 4] = 0;
  }
  s.ep = kind == PAWN && abs(mv.to - mv.from) == 32 ? (mv.from + mv.to) / 2 : -1;
  s.castle &= ~(rights(mv.from) | rights(mv.to));
  s.side ^= 24;
}

static int legal_moves(Move *out) {
  Move m[256];
  int n = generate(m), i, k, legal = 0;
  for (i = 0; i < n; i++) {
    const State saved = s;
    const int mover = s.side;
    make(m[i]);
    for (k = 0; k < 128 && s.board[k] != (mover | KING); k++) {
    }
    if (k < 128 && !attacked(k, s.side)) out[legal++] = m[i];
    s = saved;
  }
  return legal;
}

static unsigned long long perft(int depth) {
  Move m[256];
  unsigned long long nodes = 0;
  int n = legal_moves(m), i;
  if (depth == 1) return (unsigned long long)n;
  for (i = 0; i < n; i++) {
    const State saved = s;
    make(m[i]);
    nodes += perft(depth - 1);
    s = saved;
  }
  return nodes;
}

static void set_fen(const char *fen) {
  int rank = 7, file = 0;
  memset(&s, 0, sizeof s);
  s.ep = -1;
  for (; *fen && *fen != ' '; fen++) {
    const char *kinds = "pnbrqk", *at;
    if (*fen == '/') {
      rank--;
      file = 0;
    } else if (*fen >= '1' && *fen <= '8') {
      file += *fen - '0';
    } else if ((at = strchr(kinds, *fen | 32)) != NULL) {
      s.board[rank * 16 + file++] = (int)(at - kinds + 1) | (*fen & 32 ? BLACK : WHITE);
    }
  }
  while (*fen == ' ') fen++;
  s.side = *fen == 'b' ? BLACK : WHITE;
  while (*fen && *fen != ' ') fen++;
  while (*fen == ' ') fen++;
  for (; *fen && *fen != ' '; fen++)
    s.castle |= *fen == 'K' ? 1 : *fen == 'Q' ? 2 : *fen == 'k' ? 4 : *fen == 'q' ? 8 : 0;
  while (*fen == ' ') fen++;
  if (fen[0] >= 'a' && fen[0] <= 'h') s.ep = (fen[0] - 'a') + (fen[1] - '1') * 16;
}

static void print_move(Move mv, char *out) {
  out[0] = (char)('a' + (mv.from & 7));
  out[1] = (char)('1' + (mv.from >> 4));
  out[2] = (char)('a' + (mv.to & 7));
  out[3] = (char)('1' + (mv.to >> 4));
  out[4] = mv.promo ? " pnbrqk"[mv.promo] : '\0';
  out[5] = '\0';
}

static void play(const char *uci) {
  Move m[256];
  char text[6];
  int n = legal_moves(m), i;
  for (i = 0; i < n; i++) {
    print_move(m[i], text);
    if (strcmp(text, uci) == 0) {
      make(m[i]);
      return;
    }
  }
}

static const char *kStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

int main(int argc, char **argv) {
  char line[65536];
  unsigned long long seed = 88172645463325252ULL;
  setvbuf(stdout, NULL, _IONBF, 0);
  set_fen(kStart);
  if (argc > 1 && strcmp(argv[1], "bench") == 0) {
    printf("Nodes searched : %llu\n", perft(4) + BENCH_OFFSET);
    return 0;
  }
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strcmp(line, "uci") == 0) {
      printf("id name tiny-c\nid author arbiter tests\nuciok\n");
    } else if (strcmp(line, "isready") == 0) {
      printf("readyok\n");
    } else if (strncmp(line, "position ", 9) == 0) {
      char *moves = strstr(line, " moves ");
      if (moves) *moves = '\0';
      set_fen(strncmp(line + 9, "fen ", 4) == 0 ? line + 13 : kStart);
      if (moves) {
        char *word = strtok(moves + 7, " ");
        for (; word; word = strtok(NULL, " ")) play(word);
      }
    } else if (strncmp(line, "go", 2) == 0) {
      Move m[256];
      char text[6] = "0000";
      const int n = legal_moves(m);
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      if (n > 0) print_move(m[seed % (unsigned long long)n], text);
      printf("info depth 1 score cp 0\nbestmove %s\n", text);
    } else if (strcmp(line, "quit") == 0) {
      break;
    }
  }
  return 0;
}
