// Runs the real akview binary with arguments, capturing stdout, stderr and the exit code.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

namespace akview::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Starts akview with `args` (and `env` entries "K=V" added), its stdout and stderr on the given
// descriptors (closed here after the fork) and stdin on /dev/null; returns its pid.
inline pid_t spawn_akview(const std::vector<std::string>& args, int out_fd, int err_fd,
                          const std::vector<std::string>& env = {}) {
  // Everything the child needs is made before the fork: a test process has other threads, and one of
  // them may hold the allocator's lock at the fork, so the child only calls what is async-signal-safe.
  std::string bin = AKVIEW_BINARY;
  std::vector<char*> argv{bin.data()};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The environment with `env`'s entries in place of those of the same name (the last one given wins).
  auto same_name = [](std::string_view a, std::string_view b) {
    return a.substr(0, a.find('=') + 1) == b.substr(0, b.find('=') + 1);
  };
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::none_of(env.begin(), env.end(), [&](const std::string& kv) { return same_name(*e, kv); }))
      envp.push_back(*e);
  for (auto kv = env.begin(); kv != env.end(); ++kv)
    if (std::none_of(kv + 1, env.end(), [&](const std::string& later) { return same_name(*kv, later); }))
      envp.push_back(const_cast<char*>(kv->c_str()));
  envp.push_back(nullptr);
  const std::string exec_failed = "spawn_akview: execve " + bin + " failed, errno ";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execve(bin.c_str(), argv.data(), envp.data());
    // Said on stderr (the test prints it): an exit code of 127 alone does not say why.
    char digits[16];
    int n = 0;
    for (int e = errno; n == 0 || e > 0; e /= 10) digits[n++] = static_cast<char>('0' + e % 10);
    [[maybe_unused]] ssize_t w = write(2, exec_failed.data(), exec_failed.size());
    while (n > 0) w = write(2, &digits[--n], 1);
    w = write(2, "\n", 1);
    _exit(127);
  }
  close(out_fd);
  if (err_fd != out_fd) close(err_fd);
  return pid;
}

inline ProcessResult run_akview(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return {};
  const pid_t pid = spawn_akview(args, out_pipe[1], err_pipe[1], env);
  ProcessResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, 60000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}   // namespace akview::testing
