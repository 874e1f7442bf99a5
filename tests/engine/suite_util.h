// Reads the perft suites shipped in tests/data/perft for data-driven tests.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "engine/epd.h"
#include "gtest/gtest.h"

namespace arbiter::testing {

inline std::vector<PerftSuiteLine> LoadSuite(const std::string& name) {
  std::ifstream in(std::string(ARBITER_PERFT_DATA) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot open suite " << name;
  std::vector<PerftSuiteLine> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto parsed = ParsePerftSuiteLine(line, ++n);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (parsed.ok() && !parsed->fen.empty()) out.push_back(*parsed);
  }
  return out;
}

}  // namespace arbiter::testing
