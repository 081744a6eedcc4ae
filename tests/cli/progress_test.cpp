// The progress line's text (unit), and that it is drawn on a terminal only (end to end, under a
// pseudo-terminal made by util-linux's `script`; skipped, saying so, where it is missing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "common/progress.hpp"

using minfer::cli::progress;

TEST(Progress, LineSaysDoneTotalPercentRateAndTimeLeft) {
    EXPECT_EQ(progress::line("writing m.gguf", 512u << 20, 1u << 30, 2.0),
              "writing m.gguf  512.0 MiB / 1.0 GiB   50%  256.0 MiB/s  0:02 left");
    // No rate before a fifth of a second, nor when nothing is done yet.
    EXPECT_EQ(progress::line("x", 0, 1000, 5.0), "x  0 B / 1000 B    0%");
    EXPECT_EQ(progress::line("x", 10, 1000, 0.1), "x  10 B / 1000 B    1%");
    // Done: no time left.
    EXPECT_EQ(progress::line("x", 3u << 10, 3u << 10, 1.0), "x  3.0 KiB / 3.0 KiB  100%  3.0 KiB/s");
    // Minutes.
    EXPECT_EQ(progress::line("x", 1u << 20, 601u << 20, 1.0), "x  1.0 MiB / 601.0 MiB    0%  1.0 MiB/s  10:00 left");
}

TEST(Progress, SilentWhenStderrIsNotATerminal) {
    if (::isatty(2) == 1) GTEST_SKIP() << "stderr is a terminal here (run under ctest to check this)";
    progress p("x", false);
    EXPECT_FALSE(p.enabled());
    progress q("x", true);
    EXPECT_FALSE(q.enabled());
}

#if defined(MINFER_EXE) && defined(MINFER_SAMPLE)
namespace {
std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

// On a terminal, split draws "\r<label> … \33[K" and erases it at the end; --quiet draws nothing.
TEST(Progress, DrawnOnATerminalOnly) {
    if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux `script` not found";
    const auto dir = std::filesystem::temp_directory_path() / ("minfer-progress-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto model = dir / "m.gguf";
    ASSERT_EQ(std::system((std::string("'") + MINFER_SAMPLE + "' '" + model.string() + "' >/dev/null").c_str()), 0);
    auto split_under_tty = [&](const std::string& extra, const std::string& prefix) {
        const auto out = dir / (prefix + ".tty");
        const std::string inner = std::string("'") + MINFER_EXE + "' split '" + model.string() + "' '" +
                                  (dir / prefix).string() + "' --split-max-tensors 10 " + extra;
        const std::string cmd = "script -qec \"" + inner + "\" /dev/null > '" + out.string() + "' 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
        return slurp(out);
    };
    const std::string drawn = split_under_tty("", "a");
    EXPECT_NE(drawn.find("\rsplitting "), std::string::npos) << drawn;
    EXPECT_NE(drawn.find("\r\33[K"), std::string::npos) << "the line is erased at the end";
    const std::string quiet = split_under_tty("--quiet", "b");
    EXPECT_EQ(quiet.find("splitting"), std::string::npos) << quiet;
    EXPECT_EQ(quiet.find('\r'), std::string::npos) << quiet;
    std::filesystem::remove_all(dir);
}
#endif
