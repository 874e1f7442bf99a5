// A real engine process on pipes for tests: fork/exec, write command lines, read reply lines
// with a (generous) deadline so that a broken engine fails the test instead of hanging it.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::testing {

class EngineProcess {
 public:
  explicit EngineProcess(std::vector<std::string> argv) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    signal(SIGPIPE, SIG_IGN);
  }
  ~EngineProcess() {
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      // Give the engine a moment to exit on end of input, then make sure it is gone.
      for (int i = 0; i < 200 && !Exited(); ++i) usleep(10'000);
      if (!Exited()) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
      }
    }
  }
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  bool Started() const { return pid_ > 0 && in_ >= 0; }

  bool Send(const std::string& line) {
    std::string s = line + "\n";
    size_t done = 0;
    while (done < s.size()) {
      ssize_t n = write(in_, s.data() + done, s.size() - done);
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }
  void CloseInput() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }

  // The next line, or nullopt at end of output or after `timeout`.
  std::optional<std::string> ReadLine(
      std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{out_, POLLIN, 0};
      if (poll(&pfd, 1, int(left.count())) <= 0) continue;
      char chunk[4096];
      ssize_t n = read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, size_t(n));
    }
  }

  // Lines up to and including the first one starting with `prefix`; empty if it never came.
  std::vector<std::string> ReadUntil(const std::string& prefix,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    std::vector<std::string> lines;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      auto line = ReadLine(left);
      if (!line) return {};
      lines.push_back(*line);
      if (line->rfind(prefix, 0) == 0) return lines;
    }
  }

  // Waits for the process to exit; its exit status, or -1 if it did not exit within `timeout`.
  int WaitExit(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Exited()) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      usleep(5'000);
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }

 private:
  bool Exited() {
    if (exited_) return true;
    if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return exited_;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string buffer_;
};

}  // namespace arbiter::testing
