// The worker's engine cache against a real coordinator on loopback: upload, fetch by sha256,
// verification of the cached copy, unknown hashes, and the cache's bound.
#include "worker/engine_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <latch>
#include <memory>
#include <thread>

#include "coordinator/server.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "net/sha256.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"

namespace arbiter::worker {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A coordinator on loopback (data in `dir`) holding `bytes` as an uploaded engine, uploaded in
// 1 MiB chunks, and a channel to it.
struct Coordinator {
  std::unique_ptr<coordinator::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  ~Coordinator() {
    if (server) server->Shutdown();
  }
};

void Upload(const Coordinator& to, const std::string& bytes) {
  auto stub = v1::RunService::NewStub(to.channel);
  grpc::ClientContext ctx;
  v1::UploadEngineResponse resp;
  auto writer = stub->UploadEngine(&ctx, &resp);
  v1::UploadEngineRequest part;
  part.set_name("blob");
  part.set_sha256(net::Sha256Hex(bytes));
  ASSERT_TRUE(writer->Write(part));
  part.clear_sha256();
  for (size_t at = 0; at < bytes.size(); at += 1 << 20) {
    part.set_chunk(bytes.substr(at, 1 << 20));
    ASSERT_TRUE(writer->Write(part));
  }
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.engine().sha256(), net::Sha256Hex(bytes));
  EXPECT_EQ(resp.engine().size_bytes(), bytes.size());
}

void StartWithEngine(const std::filesystem::path& dir, const std::string& bytes, Coordinator& out) {
  coordinator::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.coordinator.data_dir = (dir / "data").string();
  options.no_auth = true;  // loopback only; authentication has its own tests
  auto server = coordinator::Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  out.server = *std::move(server);
  out.channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(out.server->port()),
                                    grpc::InsecureChannelCredentials());
  Upload(out, bytes);
}

std::string ThreeMiB(int seed = 0) {
  std::string bytes;
  for (int i = 0; i < 3 << 20; ++i) bytes.push_back(char(i * 7 + (i >> 10) + seed));
  return bytes;
}

TEST(EngineCache, FetchesVerifiesAndRepairs) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arbiter-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string bytes = ThreeMiB();
  const std::string sha = net::Sha256Hex(bytes);
  Coordinator coordinator;
  ASSERT_NO_FATAL_FAILURE(StartWithEngine(dir, bytes, coordinator));
  const std::shared_ptr<grpc::Channel>& channel = coordinator.channel;

  EngineCache cache((dir / "cache").string(), channel);
  absl::StatusOr<std::string> path = cache.Get(sha);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(ReadFile(*path), bytes);
  struct stat st;
  ASSERT_EQ(stat(path->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0500u) << "the worker's user only, read and run";
  ASSERT_EQ(stat((dir / "cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // Engines that run as another user (a root worker drops them to nobody) get the group.
  {
    EngineCache shared((dir / "shared").string(), channel, int(getgid()));
    absl::StatusOr<std::string> p = shared.Get(sha);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(stat(p->c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0550u);
    EXPECT_EQ(st.st_gid, getgid());
    ASSERT_EQ(stat((dir / "shared").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0710u) << "the group may enter, not list";
  }
  // A damaged cached copy is noticed and fetched again.
  chmod(path->c_str(), 0700);
  {
    std::ofstream out(*path, std::ios::binary | std::ios::trunc);
    out << "garbage";
  }
  path = cache.Get(sha);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(ReadFile(*path), bytes);

  EXPECT_EQ(cache.Get(std::string(64, '0')).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache.Get("xyz").status().code(), absl::StatusCode::kInvalidArgument);
  coordinator.server->Shutdown();
  coordinator.server.reset();
  std::filesystem::remove_all(dir);
}

// The workers of `arbiter local` are one process sharing one cache directory: two caches of that
// directory fetching the same engine at once each get the whole file.
TEST(EngineCache, TwoCachesOfOneDirectoryFetchTheSameEngineAtOnce) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arbiter-cache-two-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string bytes = ThreeMiB();
  const std::string sha = net::Sha256Hex(bytes);
  Coordinator coordinator;
  ASSERT_NO_FATAL_FAILURE(StartWithEngine(dir, bytes, coordinator));
  for (int round = 0; round < 8; ++round) {
    const std::string shared = (dir / ("shared-" + std::to_string(round))).string();
    EngineCache a(shared, coordinator.channel), b(shared, coordinator.channel);
    absl::StatusOr<std::string> got[2];
    std::latch start(2);
    std::thread other([&] {
      start.arrive_and_wait();
      got[1] = b.Get(sha);
    });
    start.arrive_and_wait();
    got[0] = a.Get(sha);
    other.join();
    for (const auto& path : got) {
      ASSERT_TRUE(path.ok()) << "round " << round << ": " << path.status();
      EXPECT_EQ(ReadFile(*path), bytes) << "round " << round;
    }
  }
  std::filesystem::remove_all(dir);
}

// One submitter's many uploads cannot fill a worker's disk (the pod is evicted past its volume's
// limit): the cache keeps its bound by dropping what was used least recently, but not what was
// used in the last ten minutes, and a fetch that a killed worker left is removed at start.
TEST(EngineCache, KeepsItsBoundDroppingTheLeastRecentlyUsed) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arbiter-cache-lru-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string a = ThreeMiB(1), b = ThreeMiB(2), c = ThreeMiB(3);
  Coordinator coordinator;
  ASSERT_NO_FATAL_FAILURE(StartWithEngine(dir, a, coordinator));
  ASSERT_NO_FATAL_FAILURE(Upload(coordinator, b));
  ASSERT_NO_FATAL_FAILURE(Upload(coordinator, c));
  const std::filesystem::path cache_dir = dir / "cache";
  // A fetch of a worker that is gone (a pid that existed and was reaped).
  std::filesystem::create_directories(cache_dir);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::filesystem::path left =
      cache_dir / (net::Sha256Hex(a) + ".part." + std::to_string(dead) + ".0");
  std::ofstream(left) << "half an engine";
  const uint64_t bound = 7 << 20;  // two of the three
  EngineCache cache(cache_dir.string(), coordinator.channel, -1, bound);
  EXPECT_FALSE(std::filesystem::exists(left));
  absl::StatusOr<std::string> pa = cache.Get(net::Sha256Hex(a));
  absl::StatusOr<std::string> pb = cache.Get(net::Sha256Hex(b));
  ASSERT_TRUE(pa.ok() && pb.ok());
  // a was last used an hour ago, b ten seconds ago (both older than c's fetch).
  const auto ago = [](const std::string& path, int seconds) {
    const timespec t{time(nullptr) - seconds, 0};
    const timespec times[2] = {t, t};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  };
  ago(*pa, 3600);
  ago(*pb, 10);
  absl::StatusOr<std::string> pc = cache.Get(net::Sha256Hex(c));
  ASSERT_TRUE(pc.ok()) << pc.status();
  EXPECT_FALSE(std::filesystem::exists(*pa)) << "the least recently used goes";
  EXPECT_TRUE(std::filesystem::exists(*pb)) << "used in the last ten minutes: kept, over the bound";
  EXPECT_EQ(ReadFile(*pc), c);
  // A use refreshes: b, used again, stays; a comes back by a fetch and c (now oldest) goes.
  ago(*pb, 3600);
  ago(*pc, 7200);
  ASSERT_TRUE(cache.Get(net::Sha256Hex(b)).ok());
  pa = cache.Get(net::Sha256Hex(a));
  ASSERT_TRUE(pa.ok()) << pa.status();
  EXPECT_EQ(ReadFile(*pa), a);
  EXPECT_TRUE(std::filesystem::exists(*pb));
  EXPECT_FALSE(std::filesystem::exists(*pc));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace arbiter::worker
