// Decimal text of unsigned 128-bit counts (perft node totals beyond 2^64), as carried in the
// protos as a (high, low) pair of uint64 or as decimal text.
//
//   std::cout << Uint128ToString(Uint128FromParts(d.nodes_high(), d.nodes()));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace arbiter {

using Uint128 = unsigned __int128;

inline Uint128 Uint128FromParts(uint64_t high, uint64_t low) {
  return (static_cast<Uint128>(high) << 64) | low;
}

inline std::string Uint128ToString(Uint128 v) {
  if (v == 0) return "0";
  char buf[40];  // 2^128 has 39 digits
  int i = sizeof buf;
  while (v > 0) {
    buf[--i] = char('0' + int(v % 10));
    v /= 10;
  }
  return std::string(buf + i, sizeof buf - size_t(i));
}

// Parses decimal digits (the whole of `text`, at most 2^128 - 1); false on anything else.
inline bool ParseUint128(std::string_view text, Uint128& out) {
  if (text.empty()) return false;
  Uint128 v = 0;
  constexpr Uint128 kMax = ~Uint128(0);
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const unsigned digit = unsigned(c - '0');
    if (v > (kMax - digit) / 10) return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

}  // namespace arbiter
