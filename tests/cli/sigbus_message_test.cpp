// The SIGBUS handler's message for quantize (which maps the model and the imatrix and has no
// --no-mmap): it names both files and advises no option the command lacks. A child process installs
// the guard, names the files and raises SIGBUS; its stderr and exit code are the user's view.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/sigbus_guard.hpp"

namespace {

struct outcome {
    int rc = -1;
    std::string err;
};

outcome sigbus_in_child(const char* model, const char* imatrix) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 2);
        ::close(fds[0]);
        minfer::cli::install_sigbus_guard();
        minfer::cli::sigbus_guard_files(model, imatrix, "the importance matrix");
        ::raise(SIGBUS);
        ::_exit(99);  // not reached: the handler exits 3
    }
    ::close(fds[1]);
    outcome o;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) o.err.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return o;
}

TEST(SigbusMessage, QuantizeNamesTheModelAndTheImatrixAndNoOptionItLacks) {
    const outcome both = sigbus_in_child("model-f16.gguf", "calib.imatrix");
    EXPECT_EQ(both.rc, 3);
    EXPECT_NE(both.err.find("the model model-f16.gguf (or one of its split parts) or the importance matrix calib.imatrix"),
              std::string::npos)
        << both.err;
    EXPECT_EQ(both.err.find("--no-mmap"), std::string::npos) << both.err;
    EXPECT_NE(both.err.find("[io_error]"), std::string::npos) << both.err;
    const outcome model_only = sigbus_in_child("model-f16.gguf", "");
    EXPECT_EQ(model_only.rc, 3);
    EXPECT_EQ(model_only.err.find("importance"), std::string::npos) << model_only.err;
    EXPECT_NE(model_only.err.find("model-f16.gguf"), std::string::npos) << model_only.err;
}

}  // namespace
