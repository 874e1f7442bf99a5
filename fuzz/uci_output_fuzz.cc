// An engine's output lines as the match runner reads them (info, bestmove) and engine specs as
// the CLI reads them: any bytes parse or fail cleanly.
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "match/uci_engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view line = AsText(data, size);
  arbiter::match::InfoLine info;
  (void)arbiter::match::ParseInfoLine(line, info);
  std::optional<std::string> best = arbiter::match::ParseBestMove(line);
  if (best) FUZZ_CHECK(best->size() <= line.size());
  (void)arbiter::match::ParseEngineSpec(line);
  return 0;
}
