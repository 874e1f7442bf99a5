// Small string helpers on std::string_view. Debian's Abseil is built with its own
// absl::string_view (not std::string_view), so absl::StrCat/StrSplit do not accept ours.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace arbiter {

namespace strings_internal {
inline void Append(std::string& out, std::string_view s) { out.append(s); }
inline void Append(std::string& out, const char* s) { out.append(s); }
inline void Append(std::string& out, const std::string& s) { out.append(s); }
inline void Append(std::string& out, char c) { out.push_back(c); }
template <typename T>
requires std::is_arithmetic_v<T>
inline void Append(std::string& out, T v) { out.append(std::to_string(v)); }
}  // namespace strings_internal

// Concatenates strings, characters and numbers.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (strings_internal::Append(out, args), ...);
  return out;
}

// Splits on `sep`; with skip_empty, empty pieces are dropped.
inline std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty = false) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    std::string_view piece = s.substr(start, end == std::string_view::npos ? s.npos : end - start);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// Splits on any run of whitespace.
inline std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

inline std::string_view Strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Whether `s` holds a control character (below 0x20, or 0x7f): names and texts from outside that
// reach logs, PGN tags, engines' stdin and terminals must not carry newlines or escapes.
inline bool HasControl(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace arbiter
