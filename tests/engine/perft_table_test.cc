// The perft hash table (engine/perft_table.h): what a hit needs, what a bucket keeps, and that
// a write torn between two threads never makes a count read for the wrong key.
#include "engine/perft_table.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace arbiter {
namespace {

// A key in bucket `bucket` of a 1 MB table (16,384 buckets) whose other bits come from `n`.
Key128 KeyIn(uint64_t bucket, uint64_t n) {
  const uint64_t mixed = (n + 1) * 0x9e3779b97f4a7c15;
  return {(mixed << 14) | bucket, mixed ^ 0xd1b54a32d192ed03};
}

TEST(PerftTableTest, HitNeedsAllKeyBitsAndTheDepth) {
  PerftTable table(1);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(PerftTable::Entries(1), 16'384u * 2);
  const Key128 k = KeyIn(5, 1);
  table.Store(k, 4, 123'456);
  uint64_t count = 0;
  ASSERT_TRUE(table.Probe(k, 4, count));
  EXPECT_EQ(count, 123'456u);
  EXPECT_FALSE(table.Probe(k, 3, count)) << "another depth";
  // Any one bit of the key changed, in the same bucket: hi's, and lo's above the index.
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_FALSE(table.Probe({k.lo, k.hi ^ (uint64_t{1} << bit)}, 4, count)) << "hi bit " << bit;
    if (bit >= 14) {
      EXPECT_FALSE(table.Probe({k.lo ^ (uint64_t{1} << bit), k.hi}, 4, count)) << "lo bit " << bit;
    }
  }
  // A fresh table's zeroed entries are no hit for a key of zeros.
  PerftTable empty(1);
  EXPECT_FALSE(empty.Probe({0, 0}, 2, count));
}

TEST(PerftTableTest, BucketKeepsTwoAndReplacesTheShallower) {
  PerftTable table(1);
  std::vector<Key128> keys;
  for (uint64_t n = 0; n < 3; ++n) keys.push_back(KeyIn(77, n));
  table.Store(keys[0], 5, 1000);
  table.Store(keys[1], 3, 2000);
  uint64_t count = 0;
  ASSERT_TRUE(table.Probe(keys[0], 5, count));
  EXPECT_EQ(count, 1000u);
  ASSERT_TRUE(table.Probe(keys[1], 3, count));
  EXPECT_EQ(count, 2000u);
  table.Store(keys[2], 4, 3000);  // takes the depth-3 entry's place
  EXPECT_FALSE(table.Probe(keys[1], 3, count));
  ASSERT_TRUE(table.Probe(keys[0], 5, count));
  EXPECT_EQ(count, 1000u);
  ASSERT_TRUE(table.Probe(keys[2], 4, count));
  EXPECT_EQ(count, 3000u);
}

// Two threads writing the same entry at once can leave one's words beside the other's. Such a
// torn entry, made here by swapping the count words of two stored keys that differ only in hi,
// must read as a miss for both keys, never as the other key's count.
TEST(PerftTableTest, TornEntryIsAMiss) {
  PerftTable table(1);
  const Key128 a{0xabcdull << 48 | 3, 0x1111}, b{a.lo, 0x2222};
  table.Store(a, 4, 100);
  table.Store(b, 4, 200);
  uint64_t count = 0;
  ASSERT_TRUE(table.Probe(a, 4, count));
  ASSERT_EQ(count, 100u);
  ASSERT_TRUE(table.Probe(b, 4, count));
  ASSERT_EQ(count, 200u);
  std::atomic<uint64_t>* words = table.BucketWordsForTest(a);
  const uint64_t count0 = words[2].load(), count1 = words[6].load();
  words[2].store(count1);
  words[6].store(count0);
  EXPECT_FALSE(table.Probe(a, 4, count)) << count;
  EXPECT_FALSE(table.Probe(b, 4, count)) << count;
}

}  // namespace
}  // namespace arbiter
