// Drives the real binary as a deployment starts it: --version, listen addresses in every form the
// manifests use, the plaintext gRPC health port for probes, and a worker whose Secrets are
// missing, which must stop with their names instead of dialling without them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/strings.h"
#include "gtest/gtest.h"

namespace arbiter {
namespace {

struct Output {
  int exit_code;
  std::string text;  // stdout and stderr together
};

Output Shell(const std::string& cmd) {
  FILE* pipe = popen(Cat(cmd, " 2>&1").c_str(), "r");
  Output out{-1, ""};
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

class ServiceCli : public testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/arbiter-service-cli-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ServiceCli, VersionNamesTheReleaseAndRevision) {
  Output o = Shell(Cat(ARBITER_BINARY, " --version"));
  EXPECT_EQ(o.exit_code, 0) << o.text;
  EXPECT_EQ(o.text.rfind("arbiter 0.", 0), 0u) << o.text;
  EXPECT_NE(o.text.find(" ("), std::string::npos) << o.text;
}

// The manifests' own forms: ":PORT" for every listener, the dashboard included.
TEST_F(ServiceCli, CoordinatorServesEveryListenerOnColonPortAndAnswersHealth) {
  const int health = FreePort();
  const std::string bin = ARBITER_BINARY;
  Output o = Shell(Cat(
      "sh -c '", bin, " coordinator --listen 127.0.0.1:0 --metrics :0 --http :0",
      " --health 127.0.0.1:", health, " --data ", dir_, " & pid=$!; ok=1; for i in $(seq 300); do ",
      bin, " health 127.0.0.1:", health, " --timeout-s 1 && { ok=0; break; }; sleep 0.1; done; ",
      "kill $pid; wait $pid; exit $ok'"));
  EXPECT_EQ(o.exit_code, 0) << o.text;
  EXPECT_NE(o.text.find("dashboard on port"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find(Cat("health on port ", health)), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("SERVING"), std::string::npos) << o.text;
}

TEST_F(ServiceCli, HealthOfNothingListeningFails) {
  Output o = Shell(Cat(ARBITER_BINARY, " health 127.0.0.1:", FreePort(), " --timeout-s 2"));
  EXPECT_EQ(o.exit_code, 1) << o.text;
  EXPECT_EQ(o.text.find("SERVING"), std::string::npos) << o.text;
}

TEST_F(ServiceCli, AWorkerWithoutItsTokenOrCaFileStopsAndNamesIt) {
  const std::string worker = Cat(" worker --coordinator 127.0.0.1:", FreePort(), " --threads 1");
  Output token = Shell(Cat(ARBITER_BINARY, " --token-file ", dir_, "/missing.token --tls-ca ", dir_,
                           "/missing.pem", worker));
  EXPECT_EQ(token.exit_code, 2) << token.text;
  EXPECT_NE(token.text.find(Cat(dir_, "/missing.token")), std::string::npos) << token.text;
  const std::string token_file = Cat(dir_, "/worker.token");
  ASSERT_EQ(Shell(Cat("echo arb_secret > ", token_file)).exit_code, 0);
  Output ca = Shell(Cat(ARBITER_BINARY, " --token-file ", token_file, " --tls-ca ", dir_,
                        "/missing.pem", worker));
  EXPECT_EQ(ca.exit_code, 2) << ca.text;
  EXPECT_NE(ca.text.find(Cat(dir_, "/missing.pem")), std::string::npos) << ca.text;
  EXPECT_EQ(ca.text.find("registered"), std::string::npos) << ca.text;
}

TEST_F(ServiceCli, ABadListenAddressStopsTheStartWithItsCause) {
  Output o = Shell(
      Cat(ARBITER_BINARY, " coordinator --listen 127.0.0.1:0 --http ::1:80", " --data ", dir_));
  EXPECT_EQ(o.exit_code, 2) << o.text;
  EXPECT_NE(o.text.find("cannot serve HTTP on '::1:80'"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("brackets"), std::string::npos) << o.text;
}

// arbiter local on a shared machine: the directory of its token must be this user's and private,
// never reached through a link; a run that cannot write it safely does not start.
TEST_F(ServiceCli, ArbiterLocalRefusesATokenDirectoryOthersCouldReadOrPlant) {
  const std::string runtime = Cat(dir_, "/run");
  ASSERT_EQ(Shell(Cat("mkdir -p ", runtime)).exit_code, 0);
  const std::string token_dir = Cat(runtime, "/arbiter-", getuid());
  const std::string local = Cat("XDG_RUNTIME_DIR=", runtime, " timeout 20 ", ARBITER_BINARY,
                                " local --workers 1 --listen 127.0.0.1:0 --data ", dir_, "/data");
  ASSERT_EQ(Shell(Cat("mkdir -m 0755 ", token_dir)).exit_code, 0);
  Output open_dir = Shell(local);
  EXPECT_EQ(open_dir.exit_code, 2) << open_dir.text;
  EXPECT_NE(open_dir.text.find("is open to others"), std::string::npos) << open_dir.text;
  // Another user's planted link to a directory of theirs is not followed.
  ASSERT_EQ(Shell(Cat("rmdir ", token_dir, " && mkdir -m 0700 ", dir_, "/elsewhere && ln -s ", dir_,
                      "/elsewhere ", token_dir))
                .exit_code,
            0);
  Output link = Shell(local);
  EXPECT_EQ(link.exit_code, 2) << link.text;
  EXPECT_NE(link.text.find("a link is not followed"), std::string::npos) << link.text;
  EXPECT_TRUE(std::filesystem::is_empty(Cat(dir_, "/elsewhere")));
}

TEST_F(ServiceCli, ArbiterLocalServesBeyondLoopbackOnlyWithTlsAndTheBox) {
  Output plain = Shell(Cat("timeout 20 ", ARBITER_BINARY, " local --workers 1 --listen 0.0.0.0:0"));
  EXPECT_EQ(plain.exit_code, 2) << plain.text;
  EXPECT_NE(plain.text.find("only with TLS"), std::string::npos) << plain.text;
  Output http = Shell(Cat("timeout 20 ", ARBITER_BINARY, " local --workers 1 --http :0"));
  EXPECT_EQ(http.exit_code, 2) << http.text;
  EXPECT_NE(http.text.find("dashboard on loopback only"), std::string::npos) << http.text;
  Output unboxed = Shell(Cat("timeout 20 ", ARBITER_BINARY,
                             " local --workers 1 --sandbox off --listen 0.0.0.0:0 --tls-cert ",
                             dir_, "/c.pem --tls-key ", dir_, "/k.pem"));
  EXPECT_EQ(unboxed.exit_code, 2) << unboxed.text;
  EXPECT_NE(unboxed.text.find("only with engines boxed"), std::string::npos) << unboxed.text;
}

// A data directory the coordinator makes is its own (0700) and so is its database (0600); an
// empty file or another program's SQLite database in its place is refused, not taken as new.
TEST_F(ServiceCli, TheStoreIsPrivateAndAnEmptyOrForeignDatabaseIsRefused) {
  const std::string data = Cat(dir_, "/data");
  const std::string bin = ARBITER_BINARY;
  const std::string coordinator =
      Cat("timeout 20 ", bin, " coordinator --listen 127.0.0.1:0 --data ", data);
  Output first = Shell(Cat("sh -c '", coordinator, " & pid=$!; for i in $(seq 200); do [ -s ", data,
                           "/arbiter.db ] && break; sleep 0.05; done; kill $pid; wait $pid'"));
  EXPECT_EQ(std::filesystem::status(data).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all)
      << first.text;
  EXPECT_EQ(
      std::filesystem::status(Cat(data, "/arbiter.db")).permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_EQ(
      Shell(Cat("rm -rf ", data, " && mkdir ", data, " && : > ", data, "/arbiter.db")).exit_code,
      0);
  Output empty = Shell(coordinator);
  EXPECT_EQ(empty.exit_code, 2) << empty.text;
  EXPECT_NE(empty.text.find("is an empty file, not an arbiter store"), std::string::npos)
      << empty.text;
  ASSERT_EQ(Shell(Cat("rm ", data, "/arbiter.db && python3 -c \"import sqlite3; sqlite3.connect('",
                      data, "/arbiter.db').execute('CREATE TABLE notes (t TEXT)')\""))
                .exit_code,
            0);
  Output foreign = Shell(coordinator);
  EXPECT_EQ(foreign.exit_code, 2) << foreign.text;
  EXPECT_NE(foreign.text.find("its tables are not arbiter's"), std::string::npos) << foreign.text;
}

TEST_F(ServiceCli, AWeakAdminSecretIsRefused) {
  const std::string secret = Cat(dir_, "/admin.token");
  ASSERT_EQ(Shell(Cat("echo aaaaaaaaaaaaaaaaaaaaaaaa > ", secret)).exit_code, 0);
  Output o = Shell(Cat("timeout 20 ", ARBITER_BINARY,
                       " coordinator --listen 127.0.0.1:0 --admin-token-file ", secret, " --data ",
                       dir_, "/data"));
  EXPECT_EQ(o.exit_code, 2) << o.text;
  EXPECT_NE(o.text.find("too weak"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace arbiter
