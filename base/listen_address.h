// One parser for every listen address arbiter takes (--listen, --metrics, --http, a worker's
// --health): ":PORT" and "PORT" (every IPv4 interface), "HOST:PORT", "localhost:PORT" and
// "[V6]:PORT". The result is written the way gRPC and civetweb both read it.
//
//   ASSIGN_OR_RETURN(ListenAddress a, ParseListenAddress(":8080"));  // a.ToString() "0.0.0.0:8080"
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/numbers.h"
#include "base/strings.h"

namespace arbiter {

struct ListenAddress {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::1" (no brackets), a name
  int port = 0;      // 0: the system picks a free one
  bool v6() const { return host.find(':') != std::string::npos; }
  bool loopback() const { return host == "127.0.0.1" || host == "::1"; }
  // "0.0.0.0:8080", "[::1]:8080"
  std::string ToString() const { return v6() ? Cat("[", host, "]:", port) : Cat(host, ":", port); }
};

inline absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        Cat("listen address '", text, "': ", why, " (expected :PORT, HOST:PORT or [IPV6]:PORT)"));
  };
  ListenAddress a;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return bad("an IPv6 address needs ']:' before the port");
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon)
      return bad("an IPv6 address needs brackets");
    a.host = colon == std::string_view::npos ? "" : std::string(text.substr(0, colon));
    port = colon == std::string_view::npos ? text : text.substr(colon + 1);
  }
  if (a.host.empty()) a.host = "0.0.0.0";
  if (a.host == "localhost") a.host = "127.0.0.1";
  for (char c : a.host)
    if (c <= ' ' || c == '/' || c == '[' || c == ']') return bad("the host has a bad character");
  long n = -1;
  if (port.empty() || port.size() > 5 || !ParseNumber(port, n) || n < 0 || n > 65535)
    return bad("the port must be a number from 0 to 65535");
  a.port = int(n);
  return a;
}

}  // namespace arbiter
