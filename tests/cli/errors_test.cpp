// Errors and exit codes: invalid files, missing files and parts, usage, stdout that cannot be written,
// memory that runs out.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace minfer_cli_test {

TEST(CliErrors, BadMagicIsParseError) {
    const auto r = run({"info", fx().bad_magic.string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "Loading model: " + fx().bad_magic.string() + "\n");
    EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("invalid magic characters: 'PK\\x03\\x04', expected 'GGUF'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[bad_magic]"), std::string::npos);
    const auto js = run({"info", "--json", fx().bad_magic.string()});
    EXPECT_EQ(js.rc, 1);
    EXPECT_EQ(js.out, "");
}

TEST(CliErrors, MissingFileIsIoError) {
    const std::string p = (fx().root / "no-such-file.gguf").string();
    const auto r = run({"info", p});
    EXPECT_EQ(r.rc, 3);
    EXPECT_EQ(r.err.rfind("Error: ", 0), 0u);
    EXPECT_EQ(r.err.find("failed to parse"), std::string::npos);
    EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[io_error]"), std::string::npos);
}

TEST(CliErrors, MissingSplitPartIsIoError) {
    const auto r = run({"info", fx().split_missing1.string()});
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("y-00003-of-00003.gguf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[split_part_missing]"), std::string::npos);
}

TEST(CliErrors, LaterSplitPartIsRejected) {
    const auto r = run({"info", (fx().dir / "x-00002-of-00003.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("[split_not_first]"), std::string::npos) << r.err;
}

TEST(CliErrors, UsageErrors) {
    EXPECT_EQ(run({"info", "--bogus", fx().model.string()}).rc, 2);
    EXPECT_EQ(run({"info"}).rc, 2);
    EXPECT_EQ(run({}).rc, 2);
    EXPECT_EQ(run({"frobnicate"}).rc, 2);
    EXPECT_EQ(run({"info", fx().model.string(), "extra"}).rc, 2);
}

TEST(CliErrors, UnwritableStdoutIsIoError) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    for (const char* mode : {"--full", "--json"}) {
        const auto r = run({"info", mode, fx().model.string()}, "/dev/full");
        EXPECT_EQ(r.rc, 3) << mode;
        EXPECT_EQ(r.err, "Error: cannot write to standard output\n") << mode;
    }
}

TEST(CliErrors, HelpAndVersion) {
    const auto h = run({"--help"});
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("info"), std::string::npos);
    EXPECT_NE(h.out.find("Exit codes"), std::string::npos);
    const auto ih = run({"info", "--help"});
    EXPECT_EQ(ih.rc, 0);
    EXPECT_NE(ih.out.find("--no-mmap"), std::string::npos);
    EXPECT_NE(ih.out.find("SIGBUS"), std::string::npos);
    EXPECT_NE(ih.out.find("  3  I/O error"), std::string::npos);
    const auto v = run({"--version"});
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, std::string("minfer ") + MINFER_VERSION + "\n");
}

// RLIMIT_AS cannot bound an ASan build: it reserves terabytes of address space.
#ifdef MINFER_ASAN
#define MINFER_SKIP_UNDER_ASAN() GTEST_SKIP() << "ASan reserves terabytes of address space: RLIMIT_AS cannot be used"
#else
#define MINFER_SKIP_UNDER_ASAN() static_cast<void>(0)
#endif

// Runs each command under each address-space limit, largest first, until the tool cannot start at
// all: each ends with exit 0, or exit 3 saying that memory (or I/O) ran out; never an abort or a signal.
void expect_memory_errors_not_aborts(const std::vector<std::vector<std::string>>& commands,
                                     std::initializer_list<long> limits_mib) {
    int tried = 0;
    for (const long mib : limits_mib) {
        // Below the size the tool needs to start at all, the loader fails first: not our concern.
        if (measure({"--version"}, "/dev/null", mib).rc != 0) break;
        for (const std::vector<std::string>& args : commands) {
            const peak r = measure(args, "/dev/null", mib);
            ++tried;
            std::string what;
            for (const std::string& a : args) what += a + " ";
            what += "at " + std::to_string(mib) + " MiB";
            EXPECT_TRUE(r.rc == 0 || r.rc == 3) << what << ": rc " << r.rc << "\n" << r.err;
            if (r.rc == 3) {
                EXPECT_TRUE(r.err.find("out of memory") != std::string::npos ||
                            r.err.find("[out_of_memory]") != std::string::npos ||
                            r.err.find("[io_error]") != std::string::npos)
                    << what << ": " << r.err;
            }
        }
    }
    EXPECT_GT(tried, 0);
}

// Under memory pressure the tool says so and exits 3; it never aborts ("terminate called after
// throwing std::bad_alloc", as the old --json did from 128 MiB down on this file) or dies by a signal.
// The address space is squeezed from enough for the 10^5-tensor table down to too little to map it.
TEST(CliErrors, OutOfMemoryIsAnErrorNotAnAbort) {
    MINFER_SKIP_UNDER_ASAN();
    const fs::path p = temp_root() / "oom_tensors.gguf";
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        const std::array<std::int64_t, 1> ne{32};
        for (int i = 0; i < 100000; ++i)
            w.add_zero_tensor(std::string("blk.").append(std::to_string(i)).append(".w"), gguf::tensor_type::f32, ne);
        must_write(w, p);
    }
    expect_memory_errors_not_aborts({{"info", "--json", p.string()}, {"info", "--full", p.string()}},
                                    {128L, 96L, 64L, 48L, 40L, 32L, 24L, 16L});
    fs::remove(p);
}

// quantize under an address-space limit: the codebook lattices, the batch, the threads and the
// writer's chunk all allocate; a failure is out_of_memory (exit 3), never std::terminate (a lattice
// built lazily inside a noexcept row quantizer once aborted there).
TEST(CliErrors, QuantizeUnderMemoryPressureIsAnErrorNotAnAbort) {
    MINFER_SKIP_UNDER_ASAN();
    const fs::path p = temp_root() / "oom_quantize.gguf";
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 1);
        const std::array<std::int64_t, 2> ne{256, 256};
        std::vector<float> v(256 * 256);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
        for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.ffn_up.weight"})
            w.add_tensor(name, gguf::tensor_type::f32, ne, std::as_bytes(std::span<const float>(v)));
        must_write(w, p);
    }
    const fs::path out = temp_root() / "oom_quantize-out.gguf";
    std::vector<std::vector<std::string>> runs;
    for (const char* type : {"IQ3_S", "IQ4_XS", "Q4_K_M"})
        runs.push_back({"quantize", p.string(), out.string(), type, "2", "--force", "--quiet"});
    expect_memory_errors_not_aborts(runs, {256L, 128L, 96L, 64L, 48L, 40L, 32L});
    fs::remove(p);
    fs::remove(out);
}

// An undo journal beside a model means an in-place edit was interrupted: every command that opens
// the model says so (the header may be partly new), and how to resolve it.
TEST(CliErrors, AnInterruptedInPlaceEditIsReported) {
    const fs::path dir = temp_root() / "journal";
    fs::create_directories(dir);
    const fs::path m = dir / "m.gguf";
    fs::copy_file(fx().model, m, fs::copy_options::overwrite_existing);
    const auto clean = run({"info", m.string(), "--no-tensors"});
    EXPECT_EQ(clean.rc, 0);
    EXPECT_EQ(clean.err, "");
    write_file(fs::path(m.string() + ".minfer-undo"), "x");
    const auto r = run({"info", m.string(), "--no-tensors"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.err.find("Warning: an interrupted in-place edit left"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("minfer edit --recover \"" + m.string() + "\""), std::string::npos) << r.err;
    fs::remove_all(dir);
}

}  // namespace minfer_cli_test
