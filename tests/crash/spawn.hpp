#pragma once
// Running a command for the crash tests: argv with extra environment entries (the kill shim's
// LD_PRELOAD, MINFER_KILL_AT, MINFER_TRACE, ...), stdout and stderr to /dev/null, and how it ended.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace minfer::test {

struct outcome {
    bool killed = false;
    int rc = -1;
};

// Run argv with extra environment entries; stdout/stderr to /dev/null.
inline outcome run_with(const std::vector<std::string>& argv, const std::vector<std::string>& env_extra) {
    std::vector<std::string> env_s(env_extra);
    for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
    std::vector<char*> envp, args;
    for (auto& s : env_s) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_s(argv);
    for (auto& s : argv_s) args.push_back(s.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("posix_spawn failed");
    int status = 0;
    ::waitpid(pid, &status, 0);
    outcome o;
    o.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

}  // namespace minfer::test
