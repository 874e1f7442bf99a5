// Authentication, roles, limits, TLS and loud start-up failures of `arbiter coordinator`, with
// real processes on loopback: each abuse refused with its code and message, and the coordinator
// still serving afterwards.
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "engine/position.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "net/client.h"
#include "net/sha256.h"
#include "proto/arbiter/v1/admin_service.grpc.pb.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {

using testing::NumberAfter;
using testing::Process;

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-auth-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    unsetenv("ARBITER_TOKEN_FILE");
    unsetenv("ARBITER_TOKEN");
    admin_ = testing::WriteTokenFile(dir_ / "admin.token");
  }
  void TearDown() override {
    worker_.reset();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // `arbiter coordinator` with `extra` flags; empty optional when it did not start.
  std::unique_ptr<Process> Coordinator(std::vector<std::string> extra, int& port,
                                       const std::string& log = "coordinator.log") {
    std::vector<std::string> args = {ARBITER_BINARY, "coordinator", "--data",
                                     (dir_ / "data").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = Process::Start(args, (dir_ / log).string());
    auto line = p->ReadLineWith("listening on port", 30);
    port = line ? NumberAfter(*line, "listening on port ") : 0;
    return p;
  }
  void Start(std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--listen", "127.0.0.1:0", "--admin-token-file",
                                 (dir_ / "admin.token").string()});
    server_ = Coordinator(extra, port_);
    ASSERT_GT(port_, 0) << Log("coordinator.log");
  }
  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string Log(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::unique_ptr<v1::RunService::Stub> Runs(const std::string& secret) {
    return v1::RunService::NewStub(
        net::Dial(Address(), net::ClientCredentials{secret, "", "", ""}));
  }
  std::string Token(const std::string& name, v1::Role role) {
    const auto path = dir_ / (name + ".token");
    grpc::Status s = testing::CreateTokenFile(Address(), admin_, name, role, path);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return *net::ReadSecret(path.string());
  }
  static grpc::Status List(v1::RunService::Stub& stub) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListRunsResponse resp;
    return stub.ListRuns(&ctx, v1::ListRunsRequest(), &resp);
  }
  static grpc::Status SubmitPerft(v1::RunService::Stub& stub, int depth, v1::Run* run = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(depth);
    v1::SubmitRunResponse resp;
    grpc::Status s = stub.SubmitPerft(&ctx, req, &resp);
    if (run) *run = resp.run();
    return s;
  }
  // A real perft run with a real worker of a worker token: the coordinator still serves.
  void ExpectServes() {
    if (!worker_) {
      Token("worker-1", v1::ROLE_WORKER);
      worker_ = Process::Start({ARBITER_BINARY, "--token-file", (dir_ / "worker-1.token").string(),
                                "worker", "--coordinator", Address(), "--wait-s", "1"},
                               (dir_ / "worker.log").string());
    }
    auto stub = Runs(admin_);
    v1::Run run;
    ASSERT_TRUE(SubmitPerft(*stub, 4, &run).ok());
    for (int i = 0; i < 600 && run.state() != v1::RUN_STATE_SUCCEEDED; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      grpc::ClientContext ctx;
      v1::GetRunRequest req;
      req.set_run_id(run.id());
      ASSERT_TRUE(stub->GetRun(&ctx, req, &run).ok());
    }
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << Log("worker.log");
    EXPECT_EQ(run.perft().result().nodes(), 197281u);
  }

  std::filesystem::path dir_;
  std::string admin_;
  std::unique_ptr<Process> server_, worker_;
  int port_ = 0;
};

TEST_F(AuthTest, NoTokenOrAnUnknownOneIsUnauthenticated) {
  Start();
  auto none =
      v1::RunService::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  grpc::Status s = List(*none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("no token"), std::string::npos) << s.error_message();
  EXPECT_EQ(List(*Runs("arb_0000000000000000000000000000000000000000")).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // Nor can anyone act as a worker without a worker token.
  auto work =
      v1::WorkService::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::RegisterResponse resp;
  EXPECT_EQ(work->Register(&ctx, v1::RegisterRequest(), &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  ExpectServes();
}

TEST_F(AuthTest, RolesOwnersAndRevocation) {
  Start();
  const std::string viewer = Token("vera", v1::ROLE_VIEWER);
  const std::string alice = Token("alice", v1::ROLE_SUBMITTER);
  const std::string bob = Token("bob", v1::ROLE_SUBMITTER);
  const std::string worker = Token("wendy", v1::ROLE_WORKER);
  EXPECT_TRUE(List(*Runs(viewer)).ok());
  grpc::Status s = SubmitPerft(*Runs(viewer), 3);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("needs role submitter"), std::string::npos) << s.error_message();
  EXPECT_EQ(List(*Runs(worker)).error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << "a worker token is for WorkService only";
  {
    auto work =
        v1::WorkService::NewStub(net::Dial(Address(), net::ClientCredentials{alice, "", "", ""}));
    grpc::ClientContext ctx;
    v1::RegisterResponse resp;
    EXPECT_EQ(work->Register(&ctx, v1::RegisterRequest(), &resp).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  v1::Run run;
  ASSERT_TRUE(SubmitPerft(*Runs(alice), 6, &run).ok());
  EXPECT_EQ(run.owner(), "alice");
  auto cancel = [&](const std::string& secret) {
    grpc::ClientContext ctx;
    v1::CancelRunRequest req;
    req.set_run_id(run.id());
    v1::Run out;
    return Runs(secret)->CancelRun(&ctx, req, &out);
  };
  s = cancel(bob);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("belongs to 'alice'"), std::string::npos) << s.error_message();
  EXPECT_TRUE(cancel(alice).ok());
  // Draining workers is the admin's; a priority above 0 too.
  {
    auto drain = Process::Start({ARBITER_BINARY, "--token-file", (dir_ / "alice.token").string(),
                                 "workers", "--coordinator", Address(), "drain", "host-a"},
                                (dir_ / "cli.log").string());
    EXPECT_EQ(drain->Wait(), 3) << "alice may not drain workers";
    grpc::ClientContext ctx;
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen("8/8/8/8/8/8/8/K6k w - - 0 1");
    req.mutable_perft()->set_depth(2);
    req.mutable_scheduling()->set_priority(5);
    v1::SubmitRunResponse resp;
    s = Runs(alice)->SubmitPerft(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
    EXPECT_NE(s.error_message().find("only an admin"), std::string::npos) << s.error_message();
  }
  // Token management is the admin's, through the CLI.
  auto list = Process::Start({ARBITER_BINARY, "--token-file", (dir_ / "alice.token").string(),
                              "tokens", "--coordinator", Address(), "list"},
                             (dir_ / "cli.log").string());
  EXPECT_EQ(list->Wait(), 3) << "alice may not list tokens";
  list = Process::Start({ARBITER_BINARY, "--token-file", (dir_ / "admin.token").string(), "tokens",
                         "--coordinator", Address(), "list"},
                        (dir_ / "cli.log").string());
  const std::string listed = list->ReadAll();
  EXPECT_EQ(list->Wait(), 0);
  for (const char* name : {"admin", "alice", "bob", "vera", "wendy"})
    EXPECT_NE(listed.find(name), std::string::npos) << listed;
  EXPECT_EQ(listed.find(alice), std::string::npos) << "secrets are never listed";
  auto revoke = Process::Start({ARBITER_BINARY, "--token-file", (dir_ / "admin.token").string(),
                                "tokens", "--coordinator", Address(), "revoke", "bob"},
                               (dir_ / "cli.log").string());
  EXPECT_EQ(revoke->Wait(), 0);
  EXPECT_EQ(List(*Runs(bob)).error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << "revocation takes effect on the next call";
  ExpectServes();
}

// Only an admin decides on a worker's set-aside match games; the others are refused before the
// run is looked at, and an oversized worker id before it reaches the coordinator.
TEST_F(AuthTest, OnlyAnAdminDecidesOnSetAsideGames) {
  Start();
  auto decide = [&](const std::string& secret, const std::string& worker_id) {
    auto stub =
        v1::AdminService::NewStub(net::Dial(Address(), net::ClientCredentials{secret, "", "", ""}));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::DecideResidualRequest req;
    req.set_run_id(12345);
    req.set_worker_id(worker_id);
    req.set_decision(v1::RESIDUAL_STATE_VOIDED);
    v1::DecideResidualResponse resp;
    return stub->DecideResidual(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(decide("", "w"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(decide(std::string(43, 'x'), "w"), grpc::StatusCode::UNAUTHENTICATED);
  for (v1::Role role : {v1::ROLE_VIEWER, v1::ROLE_SUBMITTER, v1::ROLE_WORKER})
    EXPECT_EQ(decide(Token("r" + std::to_string(int(role)), role), "w"),
              grpc::StatusCode::PERMISSION_DENIED)
        << v1::Role_Name(role);
  EXPECT_EQ(decide(admin_, std::string(257, 'w')), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decide(admin_, "w"), grpc::StatusCode::NOT_FOUND) << "the admin gets to the run";
}

TEST_F(AuthTest, NoAuthOnlyOnLoopback) {
  int port = 0;
  auto open = Coordinator({"--listen", "0.0.0.0:0", "--no-auth"}, port);
  EXPECT_EQ(open->Wait(), 2);
  EXPECT_NE(Log("coordinator.log").find("loopback"), std::string::npos);
  auto loopback = Coordinator({"--listen", "127.0.0.1:0", "--no-auth"}, port, "loopback.log");
  ASSERT_GT(port, 0);
  port_ = port;
  auto stub =
      v1::RunService::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  EXPECT_TRUE(List(*stub).ok());
}

// Every start-up failure: one line naming the cause, exit code 2 (never a signal).
TEST_F(AuthTest, StartupFailuresAreLoudAndOneCoordinatorPerPortAndDirectory) {
  Start();
  int port = 0;
  // The same data directory, another port.
  auto second = Coordinator({"--listen", "127.0.0.1:0"}, port, "second.log");
  EXPECT_EQ(second->Wait(), 2);
  EXPECT_NE(Log("second.log").find("in use by another coordinator"), std::string::npos)
      << Log("second.log");
  // The same port, another data directory.
  auto same_port = Process::Start(
      {ARBITER_BINARY, "coordinator", "--data", (dir_ / "d2").string(), "--listen", Address()},
      (dir_ / "port.log").string());
  EXPECT_EQ(same_port->Wait(), 2);
  EXPECT_NE(Log("port.log").find("cannot listen"), std::string::npos) << Log("port.log");
  ExpectServes();
  worker_.reset();
  server_.reset();
  // Metrics port taken.
  const int taken = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(taken, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(taken, reinterpret_cast<sockaddr*>(&addr), &len);
  auto metrics = Coordinator(
      {"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:" + std::to_string(ntohs(addr.sin_port))},
      port, "metrics.log");
  EXPECT_EQ(metrics->Wait(), 2) << Log("metrics.log");
  EXPECT_NE(Log("metrics.log").find("error:"), std::string::npos);
  close(taken);
  // A data directory that cannot be created.
  std::ofstream(dir_ / "file") << "x";
  auto bad_dir = Process::Start({ARBITER_BINARY, "coordinator", "--data",
                                 (dir_ / "file" / "sub").string(), "--listen", "127.0.0.1:0"},
                                (dir_ / "dir.log").string());
  EXPECT_EQ(bad_dir->Wait(), 2);
  EXPECT_NE(Log("dir.log").find("cannot create data dir"), std::string::npos) << Log("dir.log");
  const auto set_version = [&](int version) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "data" / "arbiter.db").c_str(), &db), SQLITE_OK);
    const std::string pragma = "PRAGMA user_version = " + std::to_string(version);
    ASSERT_EQ(sqlite3_exec(db, pragma.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  };
  // A database of version 4 (no streamed perft runs, requests without GamesSettings) is upgraded
  // in place to 6, and is then refused by older arbiters.
  set_version(4);
  {
    auto upgraded = Coordinator({"--listen", "127.0.0.1:0"}, port, "schema4.log");
    EXPECT_GT(port, 0) << Log("schema4.log");
    upgraded->Signal(SIGTERM);
    EXPECT_EQ(upgraded->Wait(), 0) << Log("schema4.log");
    EXPECT_NE(Log("schema4.log").find("upgraded from schema version 4 to 6"), std::string::npos)
        << Log("schema4.log");
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "data" / "arbiter.db").c_str(), &db), SQLITE_OK);
    int version = 0;
    ASSERT_EQ(sqlite3_exec(
                  db, "PRAGMA user_version",
                  [](void* v, int, char** values, char**) {
                    *static_cast<int*>(v) = std::atoi(values[0]);
                    return 0;
                  },
                  &version, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    EXPECT_EQ(version, 6);
  }
  // A database of an older schema (3: games stored with text ends and results) or of a newer one
  // is refused, naming the version found and the version expected.
  for (int version : {3, 99}) {
    set_version(version);
    const std::string log = "schema" + std::to_string(version) + ".log";
    auto refused = Coordinator({"--listen", "127.0.0.1:0"}, port, log);
    EXPECT_EQ(refused->Wait(), 2);
    EXPECT_NE(Log(log).find("has schema version " + std::to_string(version) +
                            "; this arbiter reads version 6"),
              std::string::npos)
        << Log(log);
  }
  // A corrupt database: pages of garbage in the middle of the file.
  {
    std::fstream f(dir_ / "data" / "arbiter.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << std::string(4096, '\x5a');
  }
  auto corrupt = Coordinator({"--listen", "127.0.0.1:0"}, port, "corrupt.log");
  EXPECT_EQ(corrupt->Wait(), 2);
  EXPECT_NE(Log("corrupt.log").find("corrupt"), std::string::npos) << Log("corrupt.log");
}

// TLS on the gRPC port: a plaintext client fails; a client with the CA succeeds; with mutual TLS
// a client without a certificate is refused.
TEST_F(AuthTest, TlsAndMutualTls) {
  const auto certs = dir_ / "certs";
  ASSERT_EQ(std::system(("scripts/dev-certs.sh " + certs.string() + " >/dev/null").c_str()), 0);
  auto pem = [&](const char* name) { return *net::ReadSecret((certs / name).string()) + "\n"; };
  Start({"--tls-cert", (certs / "server.pem").string(), "--tls-key",
         (certs / "server.key").string(), "--tls-client-ca", (certs / "ca.pem").string()});
  auto plaintext = Runs(admin_);
  grpc::Status s = List(*plaintext);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  auto no_cert = v1::RunService::NewStub(
      net::Dial(Address(), net::ClientCredentials{admin_, pem("ca.pem"), "", ""}));
  EXPECT_EQ(List(*no_cert).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "mutual TLS: a client without a certificate is refused";
  auto with_cert = v1::RunService::NewStub(net::Dial(
      Address(),
      net::ClientCredentials{admin_, pem("ca.pem"), pem("client.pem"), pem("client.key")}));
  EXPECT_TRUE(List(*with_cert).ok());
  // The CLI with the same files.
  auto cli = Process::Start(
      {ARBITER_BINARY, "--token-file", (dir_ / "admin.token").string(), "--tls-ca",
       (certs / "ca.pem").string(), "--tls-cert", (certs / "client.pem").string(), "--tls-key",
       (certs / "client.key").string(), "runs", "--coordinator", Address(), "list"},
      (dir_ / "cli.log").string());
  EXPECT_EQ(cli->Wait(), 0) << Log("cli.log");
}

// Uploads: the stored bytes must hash to what the client sent; each token has a quota; only the
// uploader or an admin deletes.
TEST_F(AuthTest, UploadsAreCheckedQuotaedAndDeletable) {
  Start({"--upload-quota-mb", "1"});
  const std::string alice = Token("alice", v1::ROLE_SUBMITTER);
  const std::string bob = Token("bob", v1::ROLE_SUBMITTER);
  auto upload = [&](const std::string& secret, const std::string& bytes, const std::string& sha,
                    v1::UploadEngineResponse& resp) {
    auto stub = Runs(secret);
    grpc::ClientContext ctx;
    auto writer = stub->UploadEngine(&ctx, &resp);
    v1::UploadEngineRequest part;
    part.set_name("e");
    part.set_sha256(sha);
    writer->Write(part);
    part.clear_sha256();
    part.set_chunk(bytes);
    writer->Write(part);
    writer->WritesDone();
    return writer->Finish();
  };
  const std::string small(600 << 10, 'a');
  v1::UploadEngineResponse resp;
  grpc::Status s = upload(alice, small, std::string(64, '0'), resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DATA_LOSS) << s.error_message();
  ASSERT_TRUE(upload(alice, small, net::Sha256Hex(small), resp).ok());
  EXPECT_EQ(resp.engine().owner(), "alice");
  const std::string sha = resp.engine().sha256();
  const std::string other(600 << 10, 'b');
  s = upload(alice, other, net::Sha256Hex(other), resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("quota"), std::string::npos) << s.error_message();
  auto del = [&](const std::string& secret) {
    grpc::ClientContext ctx;
    v1::DeleteEngineRequest req;
    req.set_sha256(sha);
    v1::DeleteEngineResponse out;
    return Runs(secret)->DeleteEngine(&ctx, req, &out);
  };
  EXPECT_EQ(del(bob).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(del(alice).ok());
  EXPECT_EQ(del(alice).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(upload(alice, other, net::Sha256Hex(other), resp).ok()) << "deleting freed quota";
  ExpectServes();
}

// An upload in progress counts against its token's quota before its bytes are written (its
// temporary file is the coordinator's disk too), and one cut short is never stored.
TEST_F(AuthTest, UploadsInProgressCountAndACancelledOneIsNotKept) {
  Start({"--upload-quota-mb", "1"});
  const std::string alice = Token("alice", v1::ROLE_SUBMITTER);
  const std::filesystem::path tmp = dir_ / "data" / "engines" / "tmp";
  auto temp_bytes = [&] {
    uint64_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp)) n += e.file_size();
    return n;
  };
  // Until `done` holds, asking the coordinator's disk (no sleep that hopes to be long enough).
  auto wait_for = [&](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
  };
  const std::string first(600 << 10, 'a'), second(600 << 10, 'b');
  auto stub = Runs(alice);
  grpc::ClientContext held;
  v1::UploadEngineResponse held_resp;
  auto writer = stub->UploadEngine(&held, &held_resp);
  v1::UploadEngineRequest part;
  part.set_name("held");
  part.set_sha256(net::Sha256Hex(first + first));  // more is announced than will come
  ASSERT_TRUE(writer->Write(part));
  part.clear_sha256();
  part.set_chunk(first);
  ASSERT_TRUE(writer->Write(part));
  ASSERT_TRUE(wait_for([&] { return temp_bytes() == first.size(); }));

  auto upload = [&](const std::string& bytes, const std::string& sha) {
    grpc::ClientContext ctx;
    v1::UploadEngineResponse resp;
    auto w = stub->UploadEngine(&ctx, &resp);
    v1::UploadEngineRequest p;
    p.set_name("e");
    if (!sha.empty()) p.set_sha256(sha);
    w->Write(p);
    p.clear_sha256();
    p.set_chunk(bytes);
    w->Write(p);
    w->WritesDone();
    return w->Finish();
  };
  grpc::Status s = upload(second, net::Sha256Hex(second));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("uploading"), std::string::npos) << s.error_message();
  s = upload(second, "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "no sha256, no upload";

  held.TryCancel();
  EXPECT_FALSE(writer->Finish().ok());
  ASSERT_TRUE(wait_for([&] { return temp_bytes() == 0; }));
  s = upload(second, net::Sha256Hex(second));
  EXPECT_TRUE(s.ok()) << "the cancelled upload gave its room back: " << s.error_message();
  grpc::ClientContext ctx;
  v1::ListEnginesResponse engines;
  ASSERT_TRUE(stub->ListEngines(&ctx, {}, &engines).ok());
  ASSERT_EQ(engines.engines_size(), 1) << "the cancelled upload is not kept";
  EXPECT_EQ(engines.engines(0).sha256(), net::Sha256Hex(second));
}

}  // namespace
}  // namespace arbiter
