// Test helpers: real child processes with a readable stdout, `arbiter local` on a free port, HTTP
// scrapes of /metrics, and the small text helpers the integration tests share.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "match/process.h"

namespace arbiter::testing {

// A child process (match::Subprocess); stdout is read by the test, stderr goes to `log_path`,
// stdin is closed.
class Process {
 public:
  static std::unique_ptr<Process> Start(const std::vector<std::string>& args,
                                        const std::string& log_path) {
    match::ProcessSpec spec;
    spec.argv = args;
    spec.stderr_path = log_path;
    absl::StatusOr<std::unique_ptr<match::Subprocess>> p = match::Subprocess::Start(spec);
    if (!p.ok()) return nullptr;
    (*p)->CloseInput();
    return std::unique_ptr<Process>(new Process(std::move(*p)));
  }
  pid_t pid() const { return process_->pid(); }
  void Signal(int sig) { process_->Signal(sig); }
  // Exit status (or 128 + signal); waits for the process.
  int Wait() {
    if (exit_code_ < 0) exit_code_ = match::ExitCode(process_->WaitOrKill(std::chrono::hours(1)));
    return exit_code_;
  }
  // Reads stdout until a line contains `needle`; returns that line, or nullopt on timeout/EOF.
  std::optional<std::string> ReadLineWith(const std::string& needle, double timeout_seconds) {
    const auto deadline =
        match::SteadyClock::now() + std::chrono::milliseconds(int64_t(timeout_seconds * 1000));
    match::OutputLine line;
    while (process_->ReadLine(deadline, line) == match::ReadResult::kLine) {
      output_ += line.text + "\n";
      if (line.text.find(needle) != std::string::npos) return line.text;
    }
    return std::nullopt;
  }
  // All of stdout until EOF.
  std::string ReadAll() {
    const auto deadline = match::SteadyClock::now() + std::chrono::hours(1);
    match::OutputLine line;
    while (process_->ReadLine(deadline, line) == match::ReadResult::kLine)
      output_ += line.text + "\n";
    return output_;
  }

 private:
  explicit Process(std::unique_ptr<match::Subprocess> process) : process_(std::move(process)) {}
  std::unique_ptr<match::Subprocess> process_;
  int exit_code_ = -1;
  std::string output_;
};

// `arbiter local` with `workers` workers on a free loopback port, its data and log in `dir`;
// sets `port` (-1: it did not start, and the log says why). The caller unsets
// ARBITER_TOKEN_FILE first when its clients should find arbiter local's own token.
inline std::unique_ptr<Process> StartLocal(const std::filesystem::path& dir, int workers,
                                           int& port) {
  port = -1;
  std::unique_ptr<Process> local =
      Process::Start({ARBITER_BINARY, "local", "--workers", std::to_string(workers), "--listen",
                      "127.0.0.1:0", "--data", (dir / "data").string()},
                     (dir / "local.log").string());
  if (!local) return nullptr;
  constexpr char kLabel[] = "coordinator on 127.0.0.1:";
  if (std::optional<std::string> line = local->ReadLineWith(kLabel, 60)) {
    const size_t at = line->find(kLabel);
    port = std::atoi(line->c_str() + at + sizeof kLabel - 1);
  }
  return local;
}

// How many times `needle` occurs in `text`, not overlapping.
inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(needle, at)) != std::string::npos; at += needle.size()) ++n;
  return n;
}

// A whole file ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// stdout of a shell command and its exit status (-1 when it did not exit).
struct CommandOutput {
  int status = -1;
  std::string text;
};
inline CommandOutput RunCommand(const std::string& cmd) {
  CommandOutput out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.text.append(buf, n);
  const int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The number after `label` in `line` ("... port 1234, ..." -> 1234), or -1.
inline int NumberAfter(const std::string& line, const std::string& label) {
  size_t at = line.find(label);
  if (at == std::string::npos) return -1;
  return std::atoi(line.c_str() + at + label.size());
}

// GET http://127.0.0.1:port/path; the body, or "" on failure.
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (write(fd, req.data(), req.size()) != ssize_t(req.size())) {
    close(fd);
    return "";
  }
  std::string resp;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) resp.append(buf, size_t(n));
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  return body == std::string::npos ? "" : resp.substr(body + 4);
}

// Value of the series written exactly as `series` (name with labels) in a /metrics text.
inline std::optional<double> MetricValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0)
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
  }
  return std::nullopt;
}

}  // namespace arbiter::testing
