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

}  // namespace
}  // namespace arbiter
