// Streamed splits: jobs produced as the workers take them, resumed from the stored cursor after a
// restart, chosen automatically for deep perfts, and bounded; perft totals past 64 bits.
#include <string>

#include "base/uint128.h"
#include "coordinator/perft_split.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

// A streamed split (start position perft(6), split at ply 3, at most 100 split positions a
// chunk): the jobs are produced as the workers take them (a bounded number queued ahead), the run
// does not finish while the expansion goes on, a restart mid-expansion goes on from the stored
// cursor, and the total, the divide, the jobs and the unique positions equal those of the same
// run without a restart.
TEST_F(CoordinatorTest, StreamedSplitResumesFromItsStoredCursor) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  ExpectStreamedRunResumesExactly(req, /*in_memory=*/false, 50);
}

// The same when the split's 8,902 paths fit in memory (a bound of 5,000 positions allows 15,000
// paths): generated once and cut into buckets of the split's order, 16 shards of 2 jobs each;
// the restarted coordinator generates them again and goes on from the stored bucket. The
// shards' positions are the in-memory split's, in its order (perft_split_test checks that).
TEST_F(CoordinatorTest, StreamedSplitWithItsPathsInMemoryResumesFromItsStoredBucket) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  req.set_split_memory_positions(5000);
  ExpectStreamedRunResumesExactly(req, /*in_memory=*/true, 15);
}

// A streamed run stored by an older arbiter (chunks of contiguous positions, no shard cursor)
// and still expanding is not resumed with shards, which would count its stored chunks' positions
// again: after a restart it fails with the cause, and none of its jobs is handed out.
TEST_F(CoordinatorTest, AnOlderStreamedRunFailsRatherThanCountingTwice) {
  const std::string w = Register("w");
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_LT(run->perft().chunk_positions_expanded(), run->perft().chunk_positions());
  c_.reset();
  // The stored spec rewritten as an older arbiter kept it: a chunk cursor, no shards.
  store::v1::StoredPerftRun spec = RunSpec(run->id());
  ASSERT_TRUE(spec.sharded());
  spec.set_sharded(false);
  spec.set_chunk_cursor(10);
  WriteRunSpec(run->id(), spec);
  Open();
  const v1::Run failed = *c_->GetRun(run->id());
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("older arbiter"), std::string::npos) << failed.message();
  EXPECT_FALSE(Acquire(Register("w2")).has_value());
}

// The abuse of a split with its paths in memory: a stored cursor inside a bucket (a changed or
// damaged store) would count that bucket's positions twice. The restarted coordinator fails the
// run with the cause and hands out none of its jobs.
TEST_F(CoordinatorTest, AStoredCursorInsideABucketFailsTheRunRatherThanCountingTwice) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  req.set_split_memory_positions(5000);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  c_.reset();
  store::v1::StoredPerftRun spec = RunSpec(run->id());
  ASSERT_TRUE(spec.paths_in_memory());
  spec.set_shard_cursor(spec.shard_cursor() + (uint64_t{1} << BucketedShards::kBucketShift) / 2);
  WriteRunSpec(run->id(), spec);
  Open();
  const v1::Run failed = *c_->GetRun(run->id());
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("is not the boundary of a bucket"), std::string::npos)
      << failed.message();
  EXPECT_FALSE(Acquire(Register("w")).has_value());
}

// Cancelling a run whose streamed split is expanding stops the split: no job of the run is
// handed out afterwards, and a restarted coordinator does not resume it.
TEST_F(CoordinatorTest, CancelStopsAStreamedSplit) {
  const std::string w = Register("w");
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  std::optional<v1::Job> job;
  for (int i = 0; i < 50 && !job; ++i) job = Acquire(w);
  ASSERT_TRUE(job);
  ASSERT_TRUE(Complete(w, *job).ok());
  absl::StatusOr<v1::Run> cancelled = c_->CancelRun(run->id(), "enough");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_LT(cancelled->perft().chunk_positions_expanded(), cancelled->perft().chunk_positions());
  EXPECT_FALSE(Acquire(w));
  Open();
  const std::string w2 = Register("w2");
  EXPECT_FALSE(Acquire(w2));
  absl::StatusOr<v1::Run> after = c_->GetRun(run->id());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(after->jobs().done(), 1u);
}

// perft(11) from the start position: the in-memory split stops at ply 5 (ply 6 has 9.4 M
// positions), three plies short of 8, so the split is streamed on its own: one ply deeper, at
// ply 6, in shards walked from the 822,518 positions at ply 5 the in-memory split reached, at
// most 1,000,000 split positions a shard.
TEST_F(CoordinatorTest, DeepPerftIsStreamedAutomatically) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  const std::optional<v1::Run> run = Planned(11);
  ASSERT_TRUE(run);
  ExpectStreamedFrom(*run, 6, 5, 822518);
  // ~25 M paths from ply 5: 200 MB as the paths' moves, generated once.
  EXPECT_TRUE(RunSpec(run->id()).paths_in_memory());
}

// perft(8) from the start position: the last ply of the split (ply 5, 2.2 M paths from the
// 72,078 positions at ply 4; perft(9): ply 6, from ply 5) is merged shard by shard while the
// workers count the first jobs: the run is streamed from ply 4 with its paths in memory. perft(7)'s
// last ply (ply 4, ~200,000 paths) is merged at once as before, and perft(8) for workers sharing
// one hash is not merged (the hash merges it); perft(9)'s and perft(10)'s ply 6 is merged for
// them too.
TEST_F(CoordinatorTest, ALastPlyOfManyPathsIsMergedWhileTheWorkersCount) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  // Time stands still: the workers registered below stay connected however long the plans before
  // the last one take (minutes under ThreadSanitizer, past the registry's connected window).
  static SimulatedClock frozen;  // outlives the coordinator, which TearDown closes
  Open(/*lease_seconds=*/30, frozen.Fn());
  const std::optional<v1::Run> run = Planned(8);
  ASSERT_TRUE(run);
  ExpectStreamedFrom(*run, 5, 4, 72078);
  EXPECT_TRUE(RunSpec(run->id()).paths_in_memory());
  // perft(9)'s last ply too (ply 6: ~25 M paths from the 822,518 positions at ply 5).
  const std::optional<v1::Run> nine = Planned(9);
  ASSERT_TRUE(nine);
  ExpectStreamedFrom(*nine, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(nine->id()).paths_in_memory());
  // perft(10)'s split stops at ply 5 (ply 6 has more positions than the bound) short of where it
  // merges (ply 7): its ply 6 is merged the same way, not left to the workers' hashes.
  const std::optional<v1::Run> ten = Planned(10);
  ASSERT_TRUE(ten);
  ExpectStreamedFrom(*ten, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(ten->id()).paths_in_memory());
  // Unless each worker's own table has more entries than that ply has paths (2 GB: 67 M entries
  // against 25 M; 512 MB: 16.8 M, fewer): split at ply 5 then, each table merging ply 6 in its
  // worker's jobs (measured faster on perft(10)). perft(9)'s last ply stays merged for such
  // tables (measured faster too), and perft(11) stays streamed at ply 6.
  const std::optional<v1::Run> own_large = Planned(10, 2048);
  ASSERT_TRUE(own_large);
  EXPECT_FALSE(own_large->perft().streamed());
  EXPECT_EQ(own_large->perft().split_depth(), 5u);
  const std::optional<v1::Run> own_smaller = Planned(10, 512);
  ASSERT_TRUE(own_smaller);
  ExpectStreamedFrom(*own_smaller, 6, 5, 822518);
  const std::optional<v1::Run> nine_large = Planned(9, 2048);
  ASSERT_TRUE(nine_large);
  ExpectStreamedFrom(*nine_large, 6, 5, 822518);
  const std::optional<v1::Run> eleven_large = Planned(11, 2048);
  ASSERT_TRUE(eleven_large);
  ExpectStreamedFrom(*eleven_large, 6, 5, 822518);
  const v1::Run seven = Submit(7, 32);
  EXPECT_FALSE(seven.perft().streamed());
  EXPECT_EQ(seven.perft().split_depth(), 4u);
  EXPECT_EQ(seven.jobs().total(), 32u);
  Register("a", "local-1");
  Register("b", "local-1");
  const v1::Run shared = Submit(8, 32);
  EXPECT_FALSE(shared.perft().streamed());
  EXPECT_GT(shared.jobs().total(), 0u);
  // But perft(9)'s 25 M paths from ply 5 are merged for a pooled hash too (it saturates there).
  const std::optional<v1::Run> pooled = Planned(9);
  ASSERT_TRUE(pooled);
  ExpectStreamedFrom(*pooled, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(pooled->id()).paths_in_memory());
  const std::optional<v1::Run> pooled_ten = Planned(10, 128);
  ASSERT_TRUE(pooled_ten);
  ExpectStreamedFrom(*pooled_ten, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(pooled_ten->id()).paths_in_memory());
  // Unless the pooled table has more entries than the deferred ply has paths (2 x 2 GB: 134 M
  // entries against 25 M paths): it merges them better than the split (measured on perft(10)).
  const std::optional<v1::Run> large_table = Planned(10, 2048);
  ASSERT_TRUE(large_table);
  EXPECT_FALSE(large_table->perft().streamed());
  EXPECT_EQ(large_table->perft().split_depth(), 3u);
}

// A run's hash past its bound is refused; at the bound the planner's count of the tables' entries
// (each worker's own, or hash x workers pooled) neither overflows nor merges.
TEST_F(CoordinatorTest, PerftHashBoundIsCheckedAndTheLargestTablePlansUnmerged) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  static SimulatedClock frozen;  // the workers stay connected through the slow plans (above)
  Open(/*lease_seconds=*/30, frozen.Fn());
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(10);
  req.mutable_perft()->set_hash_mb(65537);
  absl::StatusOr<v1::Run> r = c_->SubmitPerft(req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("perft.hash_mb must be at most 65536, got 65537"),
            std::string::npos)
      << r.status();
  // Workers of their own at the bound: 2^31 entries each, no overflow, ply 6 left to them.
  const std::optional<v1::Run> own = Planned(10, 65536);
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->perft().streamed());
  EXPECT_EQ(own->perft().split_depth(), 5u);
  Register("a", "local-1");
  Register("b", "local-1");
  const std::optional<v1::Run> largest = Planned(10, 65536);
  ASSERT_TRUE(largest);
  EXPECT_FALSE(largest->perft().streamed());
  EXPECT_EQ(largest->perft().split_depth(), 3u);
}

// split_memory_positions out of its bounds is refused with the bounds in the message.
TEST_F(CoordinatorTest, StreamedSplitBoundIsChecked) {
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(5);
  for (uint64_t bad : {uint64_t(99), uint64_t(4'000'001), UINT64_MAX}) {
    req.set_split_memory_positions(bad);
    absl::StatusOr<v1::Run> r = c_->SubmitPerft(req);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("split_memory_positions must be 0 (automatic) or in "
                                        "100..4000000"),
              std::string::npos)
        << r.status();
  }
  req.set_split_memory_positions(100);
  EXPECT_TRUE(c_->SubmitPerft(req).ok());
}

TEST(Uint128, Decimal) {
  EXPECT_EQ(Uint128ToString(0), "0");
  EXPECT_EQ(Uint128ToString(uint64_t(18446744073709551615u)), "18446744073709551615");
  unsigned __int128 big = (unsigned __int128)1 << 64;
  EXPECT_EQ(Uint128ToString(big * 1000), "18446744073709551616000");
}

}  // namespace
}  // namespace arbiter::coordinator
