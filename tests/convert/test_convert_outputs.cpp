// minfer convert (toolbox::convert) against convert_hf_to_gguf.py's outputs, byte for byte: every
// model of tests/convert/make_models.py × every --outtype, with --model-name "minfer convert test",
// must have the SHA-256 and size the reference's output has in tests/convert/reference.tsv (written by
// tests/convert/run_reference.py from the reference itself, with the command that reproduces each;
// docs/CONVERT_REFERENCE.md). The models come from MINFER_CONVERT_MODELS (scripts/convert-models.sh
// makes them and checks them against tests/convert/models.sha256); without it the test skips, saying
// why, and fails under MINFER_REQUIRE_REFERENCE (CI). The conversions also run through the command
// line once (the CLI's options are the reference's).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "minfer/check/digest.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/merge.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/toolbox/convert.hpp"
#include "checkpoint_writer.hpp"
#include "scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace tb = minfer::toolbox;

struct reference_row {
    std::string model, outtype, sha256;
    std::uint64_t size = 0;
};

std::vector<reference_row> reference_rows() {
    std::ifstream in(fs::path(MINFER_SOURCE_DIR) / "tests" / "convert" / "reference.tsv");
    std::vector<reference_row> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("model\t", 0) == 0) continue;
        std::istringstream s(line);
        reference_row r;
        std::string size;
        std::getline(s, r.model, '\t');
        std::getline(s, r.outtype, '\t');
        std::getline(s, r.sha256, '\t');
        std::getline(s, size, '\t');
        r.size = std::stoull(size);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string sha256_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto d = minfer::check::hash_bytes(minfer::check::hash_kind::sha256,
                                       std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    return d ? d->text() : "(hash failed)";
}

bool reference_required() {
    const char* v = std::getenv("MINFER_REQUIRE_REFERENCE");
    return v != nullptr && std::string(v) != "0";
}

#define REQUIRE_MODELS(dir)                                                                                          \
    const char* dir##_env = std::getenv("MINFER_CONVERT_MODELS");                                                  \
    if (dir##_env == nullptr || !fs::is_directory(dir##_env)) {                                                    \
        if (reference_required()) FAIL() << "MINFER_REQUIRE_REFERENCE is set and MINFER_CONVERT_MODELS is not";    \
        GTEST_SKIP() << "MINFER_CONVERT_MODELS unset (scripts/convert-models.sh makes the models)";                \
    }                                                                                                              \
    const fs::path dir(dir##_env)

TEST(ConvertOutputs, EveryModelAndOuttypeIsTheReferencesFile) {
    REQUIRE_MODELS(models);
    const auto rows = reference_rows();
    ASSERT_EQ(rows.size(), 45u);
    minfer::test_support::temp_dir tmp;
    for (const reference_row& r : rows) {
        SCOPED_TRACE(r.model + " --outtype " + r.outtype);
        tb::convert_request rq;
        rq.input = models / r.model;
        rq.output = tmp / (r.model + "-" + r.outtype + ".gguf");
        rq.outtype = r.outtype;
        rq.model_name = "minfer convert test";
        auto rep = tb::convert(rq);
        ASSERT_TRUE(rep.has_value()) << rep.error().message();
        EXPECT_TRUE(rep->written);
        EXPECT_EQ(fs::file_size(rq.output), r.size);
        EXPECT_EQ(sha256_of(rq.output), r.sha256);
        ASSERT_EQ(rep->outputs.size(), 1u);
        EXPECT_EQ(rep->outputs[0].file_size, r.size);  // the plan's size is the file's
        fs::remove(rq.output);
    }
}

// The command line with the reference's option names: the same bytes; --dry-run writes nothing and
// gives the exact size.
TEST(ConvertOutputs, TheCommandLineWritesTheSameFile) {
    REQUIRE_MODELS(models);
    const auto rows = reference_rows();
    minfer::test_support::temp_dir tmp;
    for (const reference_row& r : rows) {
        if (r.model != "Tiny-Llama-SPM-Sharded" || (r.outtype != "q8_0" && r.outtype != "auto")) continue;
        SCOPED_TRACE(r.model + " --outtype " + r.outtype);
        const fs::path out = tmp / ("cli-" + r.outtype + ".gguf");
        const std::string base = std::string(MINFER_CLI) + " convert '" + (models / r.model).string() + "' --outfile '" +
                                 out.string() + "' --outtype " + r.outtype + " --model-name 'minfer convert test' -f";
        ASSERT_EQ(std::system((base + " --dry-run --json > '" + (tmp / "plan.json").string() + "'").c_str()), 0);
        EXPECT_FALSE(fs::exists(out));
        std::ifstream plan(tmp / "plan.json");
        const std::string text((std::istreambuf_iterator<char>(plan)), std::istreambuf_iterator<char>());
        EXPECT_NE(text.find("\"file_size\": " + std::to_string(r.size)), std::string::npos) << text.substr(0, 400);
        ASSERT_EQ(std::system((base + " --quiet").c_str()), 0);
        EXPECT_EQ(sha256_of(out), r.sha256);
    }
}

// Refused before anything is written: the output is one of the checkpoint's files; an unknown type.
TEST(ConvertOutputs, RefusalsWriteNothing) {
    REQUIRE_MODELS(models);
    minfer::test_support::temp_dir tmp;
    const fs::path ckpt = tmp / "Tiny-Llama-SPM";
    fs::copy(models / "Tiny-Llama-SPM", ckpt);
    const auto before = sha256_of(ckpt / "model.safetensors");
    tb::convert_request rq;
    rq.input = ckpt;
    rq.output = ckpt / "model.safetensors";
    rq.outtype = "f16";
    rq.overwrite = true;
    auto r = tb::convert(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(sha256_of(ckpt / "model.safetensors"), before);
    rq.output = tmp / "out.gguf";
    rq.outtype = "q9_9";
    r = tb::convert(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, minfer::gguf::errc::bad_value_text);
    EXPECT_FALSE(fs::exists(rq.output));
    // a tensor whose shape does not match config.json
    std::ifstream cin(ckpt / "config.json");
    std::string config((std::istreambuf_iterator<char>(cin)), std::istreambuf_iterator<char>());
    cin.close();
    const auto at = config.find("\"intermediate_size\": 128");
    ASSERT_NE(at, std::string::npos) << config;
    config.replace(at, 24, "\"intermediate_size\": 96");
    std::ofstream(ckpt / "config.json") << config;
    rq.outtype = "f16";
    r = tb::convert(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, minfer::convert::codes::bad_tensor) << r.error().message();
    EXPECT_NE(r.error().message().find("intermediate_size 96"), std::string::npos) << r.error().message();
    EXPECT_FALSE(fs::exists(rq.output));
}


// Split output in the same pass: every part within the limit, loadable as a set, and merged back
// into one file it is the reference's file byte for byte.
TEST(ConvertOutputs, ASplitSetMergesIntoTheReferencesFile) {
    REQUIRE_MODELS(models);
    minfer::test_support::temp_dir tmp;
    for (const reference_row& r : reference_rows()) {
        if (!((r.model == "Tiny-Qwen3-MoE" && r.outtype == "q8_0") || (r.model == "Tiny-Llama-SPM" && r.outtype == "f16"))) continue;
        SCOPED_TRACE(r.model + " --outtype " + r.outtype);
        tb::convert_request rq;
        rq.input = models / r.model;
        rq.output = tmp / (r.model + ".gguf");
        rq.outtype = r.outtype;
        rq.model_name = "minfer convert test";
        rq.split_max_tensors = 7;
        auto rep = tb::convert(rq);
        ASSERT_TRUE(rep.has_value()) << rep.error().message();
        ASSERT_GE(rep->outputs.size(), 3u);
        for (const auto& o : rep->outputs) {
            EXPECT_LE(o.tensor_count, 7u);
            EXPECT_EQ(fs::file_size(o.path), o.file_size);
        }
        auto set = minfer::gguf::model::open(rep->outputs.front().path);
        ASSERT_TRUE(set.has_value()) << set.error().message();
        ASSERT_TRUE(minfer::gguf::check_merge(*set).has_value());
        auto src = minfer::gguf::model_source::open(*set);
        ASSERT_TRUE(src.has_value());
        auto w = minfer::gguf::merge_writer(*set, *src);
        ASSERT_TRUE(w.has_value());
        const fs::path merged = tmp / "merged.gguf";
        ASSERT_TRUE(w->write(merged).has_value());
        EXPECT_EQ(sha256_of(merged), r.sha256);
        for (const auto& o : rep->outputs) fs::remove(o.path);
        fs::remove(merged);
    }
}


int exit_code_of(const std::string& command) {
    const int status = std::system((command + " > /dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The documented exit codes (docs/CLI.md): 0 written, 1 an invalid checkpoint or one not converted
// here, 2 usage, with a checkpoint written by the test (no environment needed).
TEST(ConvertCommand, ExitCodes) {
    minfer::test_support::temp_dir tmp;
    const fs::path ckpt = minfer::test::write_llama_checkpoint(tmp / "Tiny-Llama", false);
    const std::string cli = std::string(MINFER_CLI) + " convert ";
    const std::string out = (tmp / "out.gguf").string();
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " --outtype q8_0 --quiet"), 0);
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " --outtype q8_0 --quiet"), 2);  // exists, no --force
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " --outtype q9 -f"), 2);         // not a type
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " --imatrix x.gguf --outtype f16 -f"), 2);
    EXPECT_EQ(exit_code_of(cli + (tmp / "nowhere").string() + " -o " + out + " -f"), 1);          // no config.json
    fs::remove(ckpt / "model.safetensors");
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " -f"), 1);                      // no weights
    std::ofstream(ckpt / "config.json") << R"({"architectures": ["MixtralForCausalLM"]})";
    EXPECT_EQ(exit_code_of(cli + ckpt.string() + " -o " + out + " -f"), 1);                      // not converted here
}


// --outfile a directory: the reference's default name (gguf-py's naming_convention); a {ftype}
// template filled. The names are what convert_hf_to_gguf.py wrote for the same commands
// (`run_convert.py build/convert-models/Tiny-Qwen3 --outfile DIR --outtype f16`, and
// `--outfile 'DIR/x-{ftype}.gguf' --outtype q8_0`), the bytes the recorded ones.
TEST(ConvertOutputs, ADirectoryOrATemplateNamesTheFileAsTheReference) {
    REQUIRE_MODELS(models);
    minfer::test_support::temp_dir tmp;
    std::map<std::string, std::string> sha;
    for (const reference_row& r : reference_rows())
        if (r.model == "Tiny-Qwen3") sha[r.outtype] = r.sha256;
    tb::convert_request rq;
    rq.input = models / "Tiny-Qwen3";
    rq.output = tmp.path();
    rq.outtype = "f16";
    rq.model_name = "minfer convert test";
    auto rep = tb::convert(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    ASSERT_EQ(rep->outputs.size(), 1u);
    // with --model-name the reference names it after general.name: "minfer convert test" → dashes
    EXPECT_EQ(rep->outputs[0].path.filename(), "minfer-convert-test-10M-F16.gguf");
    EXPECT_EQ(sha256_of(rep->outputs[0].path), sha["f16"]);
    rq.model_name.reset();
    rep = tb::convert(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_EQ(rep->outputs[0].path.filename(), "Tiny-Qwen3-10M-F16.gguf");
    rq.output = tmp / "x-{ftype}.gguf";
    rq.outtype = "q8_0";
    rq.model_name = "minfer convert test";
    rep = tb::convert(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_EQ(rep->outputs[0].path, tmp / "x-q8_0.gguf");
    EXPECT_EQ(sha256_of(tmp / "x-q8_0.gguf"), sha["q8_0"]);
}

}  // namespace
