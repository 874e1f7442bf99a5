// Listen addresses (--listen, --http, --metrics, --health) come from flags and manifests: any text
// parses or fails cleanly, a parsed address has a port in 0..65535 and a host without spaces or
// slashes, and it prints as a text that parses to the same address.
#include <cstdint>

#include "base/listen_address.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  absl::StatusOr<arbiter::ListenAddress> a = arbiter::ParseListenAddress(AsText(data, size));
  if (!a.ok()) return 0;
  FUZZ_CHECK(a->port >= 0 && a->port <= 65535);
  FUZZ_CHECK(!a->host.empty());
  for (char c : a->host) FUZZ_CHECK(c > ' ' && c != '/');
  const std::string text = a->ToString();
  absl::StatusOr<arbiter::ListenAddress> again = arbiter::ParseListenAddress(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->host == a->host && again->port == a->port);
  FUZZ_CHECK(again->ToString() == text);
  return 0;
}
