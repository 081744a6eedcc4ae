// llama.cpp loads what `minfer edit`, `split` and `merge` write (llama_model_load_from_file through
// the dlopen binding, part::llama_model), and a real model decodes to the same logits, bit for bit,
// after each of them: the commands move tensor bytes and metadata, and nothing a model computes may
// change. The files are made by the real binary (MINFER_EXE), so these tests prove the commands.
// Skipped, with the reason, when the library is not available (MINFER_LLAMA_LIB) or ../shared is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "llama_model_ref.hpp"
#include "sample_model.hpp"
#include "toolbox_support.hpp"

namespace minfer_toolbox_test {
namespace {

using minfer::llama_ref::llama_lib;
namespace part = minfer::llama_ref::part;

constexpr unsigned needed_parts = part::llama_model | part::gguf_read;

// The sample model (our writer), made once per process.
const fs::path& sample_model() {
    static temp_dir dir("sample");
    static const fs::path p = [] {
        const fs::path out = dir / "sample.gguf";
        auto r = minfer::sample::make_sample_model(out);
        if (!r) throw std::runtime_error("make_sample_model: " + r.error().message());
        return out;
    }();
    return p;
}

// The sample model as 3 parts written by our writer (minfer-sample's layout, like gguf-split's).
const fs::path& sample_split_part1() {
    static temp_dir dir("sample_split");
    static const fs::path p = [] {
        auto r = minfer::sample::make_sample_model(dir / "split.gguf", 3);
        if (!r) throw std::runtime_error("make_sample_model --split 3: " + r.error().message());
        return r->front().path;
    }();
    return p;
}

struct facts {
    std::uint64_t n_params = 0;
    std::int64_t n_tensors = 0;  // summed over the parts, as llama.cpp's gguf reader counts them
};

// Load with llama.cpp; the tensor count summed over `parts`.
facts facts_of(const llama_lib& lib, const fs::path& entry, const std::vector<fs::path>& parts) {
    facts f;
    std::string why;
    auto m = llama_loaded::load(lib, entry.string(), why);
    EXPECT_TRUE(m.has_value()) << why;
    if (!m) return f;
    f.n_params = m->n_params();
    for (const fs::path& p : parts) {
        const std::int64_t n = llama_gguf_tensor_count(lib, p.string());
        EXPECT_GE(n, 0) << "llama.cpp's gguf reader refuses " << p << ": " << lib.take_log();
        f.n_tensors += n;
    }
    return f;
}

const std::string edited_template = "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}";

TEST(LlamaLoads, SampleModelWrittenByOurWriter) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const facts f = facts_of(*lib, sample_model(), {sample_model()});
    EXPECT_GT(f.n_params, 0u);
    EXPECT_EQ(f.n_tensors, static_cast<std::int64_t>(minfer::sample::tensor_count));
}

TEST(LlamaLoads, SampleModelSplitByOurWriter) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const facts whole = facts_of(*lib, sample_model(), {sample_model()});
    const fs::path p1 = sample_split_part1();
    const std::string prefix = (p1.parent_path() / "split").string();
    const facts split = facts_of(*lib, p1, part_paths(prefix, 3));
    EXPECT_EQ(split.n_params, whole.n_params);
    EXPECT_EQ(split.n_tensors, whole.n_tensors);
}

TEST(LlamaLoads, SplitCommandParts) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir dir("split");
    const facts whole = facts_of(*lib, sample_model(), {sample_model()});
    // 27 tensors, at most 10 per part: 3 parts.
    const run_result r = run({"split", sample_model().string(), (dir / "out").string(), "--split-max-tensors", "10",
                              "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = part_paths(dir / "out", 3);
    for (const fs::path& p : parts) ASSERT_TRUE(fs::exists(p)) << p << " missing; directory: " << joined(list_dir(dir.path()));
    const facts split = facts_of(*lib, parts.front(), parts);
    EXPECT_EQ(split.n_params, whole.n_params);
    EXPECT_EQ(split.n_tensors, whole.n_tensors);
}

// --no-tensor-first-split: part 1 holds the metadata only, as llama-gguf-split writes it.
TEST(LlamaLoads, SplitCommandNoTensorFirstSplit) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir dir("split_no_tensor_first");
    const facts whole = facts_of(*lib, sample_model(), {sample_model()});
    const run_result r = run({"split", sample_model().string(), (dir / "out").string(), "--split-max-tensors", "10",
                              "--no-tensor-first-split", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = find_parts(dir / "out");
    ASSERT_GE(parts.size(), 2u) << "directory: " << joined(list_dir(dir.path()));
    EXPECT_EQ(llama_gguf_tensor_count(*lib, parts.front().string()), 0);
    const facts split = facts_of(*lib, parts.front(), parts);
    EXPECT_EQ(split.n_params, whole.n_params);
    EXPECT_EQ(split.n_tensors, whole.n_tensors);
}

TEST(LlamaLoads, MergeCommandOutput) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir dir("merge");
    const facts whole = facts_of(*lib, sample_model(), {sample_model()});
    const fs::path out = dir / "merged.gguf";
    const run_result r = run({"merge", sample_split_part1().string(), out.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const facts merged = facts_of(*lib, out, {out});
    EXPECT_EQ(merged.n_params, whole.n_params);
    EXPECT_EQ(merged.n_tensors, whole.n_tensors);
}

TEST(LlamaLoads, EditCommandOutput) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir dir("edit");
    const facts whole = facts_of(*lib, sample_model(), {sample_model()});
    const fs::path out = dir / "edited.gguf";
    const run_result r = run({"edit", sample_model().string(), "-o", out.string(), "--name", "Edited sample",
                              "--chat-template", edited_template, "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const facts edited = facts_of(*lib, out, {out});
    EXPECT_EQ(edited.n_params, whole.n_params);
    EXPECT_EQ(edited.n_tensors, whole.n_tensors);
    std::string why;
    auto m = llama_loaded::load(*lib, out.string(), why);
    ASSERT_TRUE(m.has_value()) << why;
    EXPECT_EQ(m->chat_template(), std::optional<std::string>(edited_template));
    EXPECT_EQ(m->meta("general.name"), std::optional<std::string>("Edited sample"));
}

// A key llama.cpp reads keeps its type (issue 21): the edit that would store another is refused and
// writes nothing; the same value with the kept type loads. And the rule's premise: forced with
// --allow-type-change, llama.cpp's loader refuses the file.
TEST(LlamaLoads, EditKeepsTheTypesLlamaCppReads) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir dir("edit_types");
    const fs::path refused = dir / "refused.gguf";
    const run_result no = run({"edit", sample_model().string(), "-o", refused.string(), "--set",
                               "qwen2.context_length:str=8192"});
    EXPECT_EQ(no.rc, 2) << no.err;
    EXPECT_NE(no.err.find("expected u32, given str"), std::string::npos) << no.err;
    EXPECT_FALSE(fs::exists(refused));

    const fs::path kept = dir / "kept.gguf";
    const run_result yes = run({"edit", sample_model().string(), "-o", kept.string(), "--set",
                                "qwen2.context_length:u32=8192", "--set", "qwen2.rope.freq_base=500000", "--quiet"});
    ASSERT_EQ(yes.rc, 0) << yes.err;
    std::string why;
    auto m = llama_loaded::load(*lib, kept.string(), why);
    ASSERT_TRUE(m.has_value()) << why;
    EXPECT_EQ(m->meta("qwen2.context_length"), std::optional<std::string>("8192"));

    const fs::path forced = dir / "forced.gguf";
    const run_result f = run({"edit", sample_model().string(), "-o", forced.string(), "--set",
                              "qwen2.context_length:str=8192", "--allow-type-change", "--quiet"});
    ASSERT_EQ(f.rc, 0) << f.err;
    why.clear();
    EXPECT_FALSE(llama_loaded::load(*lib, forced.string(), why).has_value());
    EXPECT_NE(why.find("wrong type"), std::string::npos) << why;
}

// --- stories260K: a real llama model llama.cpp decodes -------------------------------------------

// 8 tokens of its 512 (1 is <s>).
const std::vector<std::int32_t> probe_tokens{1, 403, 261, 330, 29, 87, 411, 13};
constexpr std::uint32_t stories_tensors = 48;

struct stories_reference {
    std::string skip;  // why the comparison cannot run ("" when it can)
    std::vector<float> logits;
    std::uint64_t n_params = 0;
};

// The original's logits, decoded twice: the comparisons mean something only if llama.cpp is
// deterministic here (same weights, one thread: same bits).
const stories_reference& stories() {
    static const stories_reference ref = [] {
        stories_reference s;
        const llama_lib* lib = llama_lib::require(needed_parts, s.skip);
        if (lib == nullptr) return s;
        if (stories_fixture().empty()) {
            s.skip = "../shared/fixtures/real/cozy-genworker__stories260K__a945bfc.gguf absent (MINFER_SHARED_DIR=" +
                     std::string(MINFER_SHARED_DIR) + "): skipped";
            return s;
        }
        std::string why;
        auto m = llama_loaded::load(*lib, stories_fixture().string(), why);
        if (!m) {
            s.skip = "llama.cpp does not load the original stories260K: " + why;  // a failure, not a skip
            return s;
        }
        s.n_params = m->n_params();
        s.logits = m->last_logits(probe_tokens, why);
        const std::vector<float> again = m->last_logits(probe_tokens, why);
        if (s.logits.empty() || again != s.logits) {
            s.skip = "decoding the original twice does not give the same logits: " + why;
            s.logits.clear();
        }
        return s;
    }();
    return ref;
}

#define MINFER_REQUIRE_STORIES(lib)                                                   \
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);                                    \
    if (stories_fixture().empty()) GTEST_SKIP() << "stories260K fixture absent: skipped"; \
    ASSERT_FALSE(stories().logits.empty()) << stories().skip

// The logits of `entry` equal the original's bit for bit; the loaded model is returned for more checks.
std::optional<llama_loaded> expect_same_logits(const llama_lib& lib, const fs::path& entry) {
    std::string why;
    auto m = llama_loaded::load(lib, entry.string(), why);
    EXPECT_TRUE(m.has_value()) << why;
    if (!m) return m;
    EXPECT_EQ(m->n_params(), stories().n_params);
    const std::vector<float> l = m->last_logits(probe_tokens, why);
    EXPECT_EQ(l.size(), stories().logits.size()) << why;
    if (l.size() == stories().logits.size()) {
        // memcmp: bit for bit, NaNs and signed zeros included.
        const bool same = std::memcmp(l.data(), stories().logits.data(), l.size() * sizeof(float)) == 0;
        std::size_t first = 0;
        while (same == false && first < l.size() && std::memcmp(&l[first], &stories().logits[first], sizeof(float)) == 0) ++first;
        EXPECT_TRUE(same) << "logits differ from the original's, first at token " << first << ": "
                          << (first < l.size() ? l[first] : 0.0f) << " vs "
                          << (first < l.size() ? stories().logits[first] : 0.0f);
    }
    return m;
}

std::vector<fs::path> split_stories_in_three(const temp_dir& dir) {
    // 48 tensors, at most 16 per part: 3 parts.
    const run_result r = run({"split", stories_fixture().string(), (dir / "stories").string(), "--split-max-tensors",
                              "16", "--quiet"});
    EXPECT_EQ(r.rc, 0) << r.err;
    auto parts = part_paths(dir / "stories", 3);
    for (const fs::path& p : parts) EXPECT_TRUE(fs::exists(p)) << p << " missing; directory: " << joined(list_dir(dir.path()));
    return parts;
}

// The comparison can fail: one weight of output_norm changed by a quarter of its value gives other logits.
TEST(StoriesLogits, AChangedWeightChangesTheLogits) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_changed");
    const fs::path copy = dir / "changed.gguf";
    fs::copy_file(stories_fixture(), copy);
    std::uint64_t at = 0;
    {
        auto m = gguf::model::open(copy);
        ASSERT_TRUE(m.has_value()) << m.error().message();
        for (const gguf::tensor_ref& t : m->tensors())
            if (t.info->name == "output_norm.weight") at = m->parts()[0].view.data_offset() + t.info->offset;
        ASSERT_NE(at, 0u) << "no output_norm.weight";
    }
    {
        std::FILE* f = std::fopen(copy.c_str(), "r+b");
        ASSERT_NE(f, nullptr);
        unsigned char b[4];
        ASSERT_EQ(std::fseek(f, static_cast<long>(at), SEEK_SET), 0);
        ASSERT_EQ(std::fread(b, 1, 4, f), 4u);
        b[2] ^= 0x40;  // the top mantissa bit of the first float
        ASSERT_EQ(std::fseek(f, static_cast<long>(at), SEEK_SET), 0);
        ASSERT_EQ(std::fwrite(b, 1, 4, f), 4u);
        ASSERT_EQ(std::fclose(f), 0);
    }
    std::string why;
    auto m = llama_loaded::load(*lib, copy.string(), why);
    ASSERT_TRUE(m.has_value()) << why;
    const std::vector<float> l = m->last_logits(probe_tokens, why);
    ASSERT_EQ(l.size(), stories().logits.size()) << why;
    EXPECT_NE(std::memcmp(l.data(), stories().logits.data(), l.size() * sizeof(float)), 0);
}

TEST(StoriesLogits, SplitInThreeLoadedFromPartOne) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_split");
    const auto parts = split_stories_in_three(dir);
    if (HasFailure()) return;
    std::int64_t n = 0;
    for (const fs::path& p : parts) n += llama_gguf_tensor_count(*lib, p.string());
    EXPECT_EQ(n, stories_tensors);
    expect_same_logits(*lib, parts.front());
}

TEST(StoriesLogits, SplitBySizeLoadedFromPartOne) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_split_size");
    // 1.2 MB, at most 1 MB a part: at least 2 parts.
    const run_result r = run({"split", stories_fixture().string(), (dir / "stories").string(), "--split-max-size", "1M",
                              "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = find_parts(dir / "stories");
    ASSERT_GE(parts.size(), 2u) << "directory: " << joined(list_dir(dir.path()));
    for (const fs::path& p : parts) EXPECT_LE(fs::file_size(p), 1000000u) << p;
    expect_same_logits(*lib, parts.front());
}

TEST(StoriesLogits, SplitThenMerged) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_merge");
    const auto parts = split_stories_in_three(dir);
    if (HasFailure()) return;
    const fs::path out = dir / "merged.gguf";
    const run_result r = run({"merge", parts.front().string(), out.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(llama_gguf_tensor_count(*lib, out.string()), stories_tensors);
    expect_same_logits(*lib, out);
}

TEST(StoriesLogits, Edited) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_edit");
    const fs::path out = dir / "edited.gguf";
    const run_result r = run({"edit", stories_fixture().string(), "-o", out.string(), "--name", "X",
                              "--chat-template", edited_template, "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto m = expect_same_logits(*lib, out);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->chat_template(), std::optional<std::string>(edited_template));
    EXPECT_EQ(m->meta("general.name"), std::optional<std::string>("X"));
}

TEST(StoriesLogits, EditedInPlaceOnACopy) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_in_place");
    const fs::path copy = dir / "copy.gguf";
    fs::copy_file(stories_fixture(), copy);
    // general.name "llama" -> "X": shorter, so it fits in the space before the data section.
    const run_result r = run({"edit", copy.string(), "--in-place", "--name", "X", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"copy.gguf"}) << "an in-place edit leaves only the model";
    EXPECT_EQ(fs::file_size(copy), fs::file_size(stories_fixture())) << "in place: the tensors did not move";
    auto m = expect_same_logits(*lib, copy);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->meta("general.name"), std::optional<std::string>("X"));
}

// --- prune: blocks removed from stories260K (5 layers) ------------------------------------------

// Layers 1 and 3 removed: llama.cpp loads the 3-layer model and decodes; its parameter count is
// the original's less two blocks' weights, and its logits are finite and not the original's (the
// removed blocks did something). The kept tensors are the original's bytes under their new names.
TEST(StoriesLogits, PrunedLayersLoadAndDecode) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_prune");
    const fs::path out = dir / "pruned.gguf";
    const run_result r = run({"prune", stories_fixture().string(), "-o", out.string(), "--layers", "1,3", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(llama_gguf_tensor_count(*lib, out.string()), stories_tensors - 2 * 9);
    std::string why;
    auto m = llama_loaded::load(*lib, out.string(), why);
    ASSERT_TRUE(m.has_value()) << why;
    EXPECT_EQ(m->meta("llama.block_count"), std::optional<std::string>("3"));
    EXPECT_EQ(m->meta("minfer.recipe"), std::optional<std::string>("prune --layers 1,3"));
    const std::uint64_t block_params = 64 * 64 * 2 + 64 * 32 * 2 + 64 * 172 * 3 + 64 * 2;
    EXPECT_EQ(m->n_params(), stories().n_params - 2 * block_params);
    const std::vector<float> l = m->last_logits(probe_tokens, why);
    ASSERT_EQ(l.size(), stories().logits.size()) << why;
    bool finite = true;
    for (float v : l) finite = finite && std::isfinite(v);
    EXPECT_TRUE(finite);
    EXPECT_NE(std::memcmp(l.data(), stories().logits.data(), l.size() * sizeof(float)), 0);
    // blk.2 of the original is blk.1 of the output, byte for byte
    auto in = minfer::gguf::model::open(stories_fixture());
    auto pr = minfer::gguf::model::open(out);
    ASSERT_TRUE(in && pr);
    for (std::string_view role : {"attn_q.weight", "ffn_down.weight", "attn_norm.weight"}) {
        const auto* a = in->find_tensor("blk.2." + std::string(role));
        const auto* b = pr->find_tensor("blk.1." + std::string(role));
        ASSERT_TRUE(a != nullptr && b != nullptr) << role;
        const auto x = in->tensor_data(*a), y = pr->tensor_data(*b);
        ASSERT_EQ(x.size(), y.size());
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0) << role;
    }
    EXPECT_EQ(pr->find_tensor("blk.3.attn_q.weight"), nullptr);
}

// Every bad selection is refused before anything is written, with exit 2 and a sentence naming it.
TEST(StoriesLogits, PruneRefusesBadSelectionsAndWritesNothing) {
    if (stories_fixture().empty()) GTEST_SKIP() << "stories260K fixture absent: skipped";
    temp_dir dir("stories_prune_bad");
    const fs::path out = dir / "never.gguf";
    struct bad {
        std::vector<std::string> args;
        int rc;
        std::string said;
    };
    const std::vector<bad> cases{
        {{"--layers", "5"}, 2, "layer 5 does not exist"},
        {{"--layers", "0-4"}, 2, "names all 5"},
        {{"--layers", "1-"}, 2, "is not an index or a range"},
        {{"--layers", "3-1"}, 2, "is not an index or a range"},
        {{"--experts", "0"}, 2, "has no experts"},
        {{"--mtp"}, 2, "no MTP layers"},
        {{"--tensors", "("}, 2, "--tensors"},
        {{}, 2, "nothing to remove"},
    };
    for (const bad& c : cases) {
        std::vector<std::string> args{"prune", stories_fixture().string(), "-o", out.string()};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const run_result r = run(args);
        EXPECT_EQ(r.rc, c.rc) << joined(c.args) << ": " << r.err;
        EXPECT_NE(r.err.find(c.said), std::string::npos) << joined(c.args) << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << joined(c.args);
    }
    // the output is never the input
    const fs::path copy = dir / "copy.gguf";
    fs::copy_file(stories_fixture(), copy);
    const run_result same = run({"prune", copy.string(), "-o", copy.string(), "--layers", "1", "--force"});
    EXPECT_EQ(same.rc, 2) << same.err;
    EXPECT_NE(same.err.find("never writes over its input"), std::string::npos) << same.err;
    EXPECT_EQ(fs::file_size(copy), fs::file_size(stories_fixture()));
}

}  // namespace
}  // namespace minfer_toolbox_test
