// EPD books and perft suite lines: any bytes parse or fail cleanly.
#include <cstdint>

#include "engine/epd.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  const std::string_view text = AsText(data, size);
  (void)arbiter::ReadEpd(text);
  (void)arbiter::ParsePerftSuiteLine(text.substr(0, text.find('\n')), 1);
  return 0;
}
