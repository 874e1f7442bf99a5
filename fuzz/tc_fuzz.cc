// The --tc syntax: any text parses or fails cleanly, and a parsed time control prints a text that
// parses to the same time control.
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "match/time_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  absl::StatusOr<arbiter::match::TimeControl> tc =
      arbiter::match::ParseTimeControl(AsText(data, size));
  if (!tc.ok()) return 0;
  const std::string text = tc->ToString();
  absl::StatusOr<arbiter::match::TimeControl> again = arbiter::match::ParseTimeControl(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToString() == text);
  return 0;
}
