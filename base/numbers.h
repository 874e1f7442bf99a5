// Whole-string number parsing on std::string_view (std::from_chars: no leading '+', no spaces,
// no hex prefix; out-of-range values fail).
//
//   int depth = 0;
//   if (!ParseNumber(word, depth)) return Error("depth '", word, "' is not a number");
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace arbiter {

// Parses all of `text` as a T; false (and `out` unspecified) if any of it is not part of one.
template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "ParseNumber: not a number");
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace arbiter
