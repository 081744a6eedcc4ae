// Real files (shared/fixtures/real), with llama.cpp's verdicts in REFERENCE.txt.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace minfer_cli_test {

// Real files (shared/fixtures/real), with llama.cpp's verdicts in REFERENCE.txt

fs::path real_dir() { return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real"; }

TEST(CliReal, Stories260K) {
    const fs::path p = real_dir() / "cozy-genworker__stories260K__a945bfc.gguf";
    if (!fs::exists(p)) GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << p.string() << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    const auto r = run({"info", p.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u);
    EXPECT_EQ(lines[1], "File: 1185376 bytes (1.1 MiB) in 1 part");
    EXPECT_EQ(lines[2], "GGUF: 19 KV, 48 tensors");
    EXPECT_EQ(lines[3], "version 3, alignment 32, data offset 14176");
    EXPECT_TRUE(has_squeezed_line(r.out, "general.architecture string \"llama\""));
    EXPECT_TRUE(has_squeezed_line(r.out, "token_embd.weight f32 [64, 512] 131072 14176"));
}

TEST(CliReal, RejectedFile) {
    const fs::path p = real_dir() / "ollama__test__f68a3c4.gguf";
    if (!fs::exists(p)) GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << p.string() << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    const auto r = run({"info", p.string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << r.err;
}

TEST(CliReal, EveryVerdictMatchesReference) {
    const fs::path ref = real_dir() / "REFERENCE.txt";
    if (!fs::exists(ref)) GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << ref.string() << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    int checked = 0;
    for (const std::string& line : lines_of(slurp(ref))) {
        if (line.empty() || line[0] == '#' || line[0] == ' ') continue;
        const std::vector<std::string> fields = split_on(line, '\t');
        if (fields.size() < 2) continue;
        const fs::path p = real_dir() / fields[0];
        if (!fs::exists(p)) continue;
        const auto r = run({"info", p.string()});
        if (fields[1] == "ACCEPTED") {
            EXPECT_EQ(r.rc, 0) << fields[0] << ": " << r.err;
            std::string n_kv, n_tensors;
            for (const std::string& fl : fields) {
                if (fl.rfind("n_kv=", 0) == 0) n_kv = fl.substr(5);
                if (fl.rfind("n_tensors=", 0) == 0) n_tensors = fl.substr(10);
            }
            EXPECT_TRUE(has_line(r.out, "GGUF: " + n_kv + " KV, " + n_tensors + (n_tensors == "1" ? " tensor" : " tensors")))
                << fields[0];
            const auto js = run({"info", "--json", p.string()});
            EXPECT_EQ(js.rc, 0) << fields[0];
            EXPECT_TRUE(json::accept(js.out)) << fields[0];
        } else {
            EXPECT_EQ(r.rc, 1) << fields[0] << ": " << r.out;
            EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << fields[0] << ": " << r.err;
        }
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

}  // namespace minfer_cli_test
