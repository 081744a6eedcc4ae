// SIGBUS: the file shrinks while the tool reads its mapping; the tool names it and exits 3.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace minfer_cli_test {

// Start `minfer info <mode>` on a 128 MiB file with stdout to a pipe, read 2 MiB (the file is open and
// being printed; the tool now blocks on the full pipe), truncate the file, drain the pipe.
run_result truncate_while_printing(const std::string& mode) {
    const fs::path p = temp_root() / "sigbus.gguf";
    {
        // 2048 strings of 64 KiB: 128 MiB of metadata. One string repeated, so the test holds only
        // the writer's copy.
        const std::string chunk(65536, 'x');
        const std::vector<std::string_view> items(2048, std::string_view(chunk));
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_strings("big.strings", std::span<const std::string_view>(items));
        must_write(w, p);
    }
    run_result r;
    int fds[2];
    if (pipe(fds) != 0) return r;
    const fs::path err_path = temp_root() / "sigbus.err";
    std::string exe = MINFER_EXE, a1 = "info", a2 = mode, a3 = p.string();
    char* argv[] = {exe.data(), a1.data(), a2.data(), a3.data(), nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (sp != 0) {
        close(fds[0]);
        return r;
    }
    std::vector<char> buf(65536);
    std::size_t got = 0;
    while (got < (2u << 20)) {
        const ssize_t n = read(fds[0], buf.data(), buf.size());
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    fs::resize_file(p, 4096);
    while (read(fds[0], buf.data(), buf.size()) > 0) {
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    r.err = slurp(err_path);
    r.out = p.string();
    fs::remove(p);
    return r;
}

TEST(CliSigbus, TruncatedWhileReadingExitsWithMessage) {
    for (const char* mode : {"--json", "--full"}) {
        const run_result r = truncate_while_printing(mode);
        EXPECT_EQ(r.rc, 3) << mode << (r.rc < 0 ? ": killed by a signal" : "");
        EXPECT_NE(r.err.find("Error: " + r.out + ": the mapped file could not be read (SIGBUS)"), std::string::npos)
            << mode << ": " << r.err;
        EXPECT_NE(r.err.find("--no-mmap"), std::string::npos) << mode;
    }
}

}  // namespace minfer_cli_test
