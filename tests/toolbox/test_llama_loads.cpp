// llama.cpp loads what `minfer edit`, `split` and `merge` write (llama_model_load_from_file through
// the dlopen binding, part::llama_model), and a real model decodes to the same logits, bit for bit,
// after each of them: the commands move tensor bytes and metadata, and nothing a model computes may
// change. The files are made by the real binary (MINFER_EXE), so these tests prove the commands.
// Skipped, with the reason, when the library is not available (MINFER_LLAMA_LIB) or ../shared is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "llama_model_ref.hpp"
#include "sample_model.hpp"
#include "toolbox_support.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"

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

// --- prune on variants of stories260K that llama.cpp runs ---------------------------------------

// stories260K rewritten: with per-layer arrays for its head counts and feed-forward length, and/or
// with each block's feed-forward network as `experts` experts (Mixtral-style llama MoE, 2 used): the
// experts are the original FFN with their weights scaled by (1 + e * 2^-20) (distinct bytes, nearly the
// same function) and a random router. llama.cpp's llama MoE normalizes the chosen experts' weights,
// so the MoE model's logits are the dense model's within rounding.
fs::path stories_variant(const fs::path& dir, const std::string& name, bool per_layer_arrays, std::uint32_t experts,
                         std::uint32_t mtp_layers = 0) {
    auto in = minfer::gguf::model::open(stories_fixture());
    if (!in) throw std::runtime_error(in.error().message());
    minfer::gguf::writer w;
    const std::uint32_t blocks = 5;
    for (const minfer::gguf::kv& e : in->metadata().metadata()) {
        if (per_layer_arrays && (e.key == "llama.attention.head_count" || e.key == "llama.attention.head_count_kv" ||
                                 e.key == "llama.feed_forward_length")) {
            const std::uint32_t v = *e.as<std::uint32_t>();
            std::vector<std::uint32_t> a(blocks, v);
            w.set_array(e.key, minfer::gguf::value_type::u32, std::span<const std::uint32_t>(a));
            continue;
        }
        w.set(e);
    }
    if (mtp_layers > 0) w.set_u32("llama.nextn_predict_layers", mtp_layers);
    if (experts > 0) {
        w.set_u32("llama.expert_count", experts);
        w.set_u32("llama.expert_used_count", 2);
    }
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.f, 1.f);
    for (const minfer::gguf::tensor_ref& t : in->tensors()) {
        const std::string n(t.info->name);
        const std::span<const std::byte> bytes = in->tensor_data(t);
        std::vector<std::int64_t> ne(t.info->ne.begin(), t.info->ne.begin() + t.info->n_dims);
        const bool ffn = n.find(".ffn_gate.weight") != std::string::npos || n.find(".ffn_up.weight") != std::string::npos ||
                         n.find(".ffn_down.weight") != std::string::npos;
        if (experts == 0 || !ffn) {
            w.add_tensor(n, t.info->type, ne, bytes);
            continue;
        }
        std::vector<float> v(bytes.size() / 4), out;
        std::memcpy(v.data(), bytes.data(), bytes.size());
        for (std::uint32_t e = 0; e < experts; ++e)
            for (float x : v) out.push_back(x * (1.0f + static_cast<float>(e) * 0x1p-20f));
        ne.push_back(experts);
        const std::string role = n.substr(0, n.size() - std::string(".weight").size());  // blk.N.ffn_up
        w.add_tensor(role + "_exps.weight", t.info->type, ne, std::as_bytes(std::span<const float>(out)));
        if (n.find(".ffn_gate.weight") != std::string::npos) {  // one router per block
            std::vector<float> router(64 * experts);
            for (float& r : router) r = g(rng);
            const std::string blk = n.substr(0, n.find(".ffn_gate.weight"));
            const std::vector<std::int64_t> rne{64, experts};
            w.add_tensor(blk + ".ffn_gate_inp.weight", minfer::gguf::tensor_type::f32, rne,
                         std::as_bytes(std::span<const float>(router)));
        }
    }
    const fs::path out = dir / (name + ".gguf");
    auto r = w.write(out);
    if (!r) throw std::runtime_error(r.error().message());
    return out;
}

std::vector<float> logits_of(const llama_lib& lib, const fs::path& p, std::uint64_t* n_params = nullptr) {
    std::string why;
    auto m = llama_loaded::load(lib, p.string(), why);
    EXPECT_TRUE(m.has_value()) << p << ": " << why;
    if (!m) return {};
    if (n_params != nullptr) *n_params = m->n_params();
    auto l = m->last_logits(probe_tokens, why);
    EXPECT_FALSE(l.empty()) << p << ": " << why;
    return l;
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double d = a.size() == b.size() ? 0.0 : 1e30;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
    return d;
}

// Layers pruned from a model whose head counts and feed-forward lengths are per-layer arrays
// (llama-quantize --prune-layers leaves them at 5 entries and llama.cpp refuses its file): the arrays
// lose the removed layers' entries, llama.cpp loads the result, and its logits are bit for bit those
// of the same prune of the scalar model (same weights, same hyperparameters).
TEST(StoriesLogits, PrunedLayersWithPerLayerArrays) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_prune_arrays");
    const fs::path arrays = stories_variant(dir.path(), "arrays", true, 0);
    EXPECT_EQ(max_abs_difference(logits_of(*lib, arrays), stories().logits), 0.0) << "the array model is the original";
    const fs::path a = dir / "arrays-pruned.gguf", b = dir / "scalar-pruned.gguf";
    run_result r = run({"prune", arrays.string(), "-o", a.string(), "--layers", "0,3", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    r = run({"prune", stories_fixture().string(), "-o", b.string(), "--layers", "0,3", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto m = minfer::gguf::model::open(a);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    for (const char* k : {"llama.attention.head_count", "llama.attention.head_count_kv", "llama.feed_forward_length"}) {
        const minfer::gguf::kv* e = m->find(k);
        ASSERT_NE(e, nullptr) << k;
        EXPECT_TRUE(e->is_array()) << k;
        EXPECT_EQ(e->count, 3u) << k;
    }
    const auto la = logits_of(*lib, a), lb = logits_of(*lib, b);
    ASSERT_FALSE(la.empty());
    ASSERT_EQ(la.size(), lb.size());
    EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
}

// Experts pruned from a MoE model: llama.cpp loads the 4-expert model and the pruned 2-expert one;
// both decode to the dense model's logits within 1e-3 of their scale (the experts are nearly the same
// function, so this checks that the cut model loads and runs; which experts were kept is checked on
// the bytes);
// the kept experts' slices and the router's kept rows are the source's bytes, in order.
TEST(StoriesLogits, PrunedExpertsLoadAndKeepTheKeptSlices) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_prune_experts");
    const fs::path moe = stories_variant(dir.path(), "moe", false, 4);
    const auto full = logits_of(*lib, moe);
    ASSERT_FALSE(full.empty());
    // within rounding of the logits' scale (the MoE path multiplies and sums in another order)
    double scale = 0;
    for (float v : stories().logits) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    const double tolerance = 1e-3 * scale;
    EXPECT_LT(max_abs_difference(full, stories().logits), tolerance) << "logits up to " << scale;
    const fs::path out = dir / "pruned.gguf";
    const run_result r = run({"prune", moe.string(), "-o", out.string(), "--experts", "1,2", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::uint64_t params = 0, params_full = 0;
    (void)logits_of(*lib, moe, &params_full);
    const auto pruned = logits_of(*lib, out, &params);
    ASSERT_FALSE(pruned.empty());
    EXPECT_LT(max_abs_difference(pruned, stories().logits), tolerance) << "logits up to " << scale;
    EXPECT_EQ(params_full - params, 5u * (3u * 64u * 172u * 2u + 64u * 2u));  // 2 experts' FFN and router rows, 5 blocks
    auto a = minfer::gguf::model::open(moe);
    auto b = minfer::gguf::model::open(out);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*b->get_as<std::uint32_t>("llama.expert_count"), 2u);
    EXPECT_EQ(*b->get_as<std::uint32_t>("llama.expert_used_count"), 2u);
    for (const char* name : {"blk.0.ffn_up_exps.weight", "blk.4.ffn_down_exps.weight", "blk.2.ffn_gate_inp.weight"}) {
        const auto* ta = a->find_tensor(name);
        const auto* tb = b->find_tensor(name);
        ASSERT_TRUE(ta != nullptr && tb != nullptr) << name;
        const auto x = a->tensor_data(*ta), y = b->tensor_data(*tb);
        const std::size_t slice = x.size() / 4;
        ASSERT_EQ(y.size(), 2 * slice) << name;
        EXPECT_EQ(std::memcmp(y.data(), x.data(), slice), 0) << name << ": expert 0";
        EXPECT_EQ(std::memcmp(y.data() + slice, x.data() + 3 * slice, slice), 0) << name << ": expert 3";
    }
    // used count lowered when it exceeds what is kept, with a warning
    const fs::path one = dir / "one.gguf";
    const run_result r1 = run({"prune", moe.string(), "-o", one.string(), "--experts", "0-2"});
    ASSERT_EQ(r1.rc, 0) << r1.err;
    EXPECT_NE(r1.err.find("expert_used_count was 2"), std::string::npos) << r1.err;
    auto c = minfer::gguf::model::open(one);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(*c->get_as<std::uint32_t>("llama.expert_used_count"), 1u);
}

// --mtp on a model whose last block is marked as its MTP layer ({arch}.nextn_predict_layers = 1, the
// convention of llama.cpp's GLM-4.5 models): the block and the key go; llama.cpp loads the trunk, and
// its logits are bit for bit those of removing that block by --layers.
TEST(StoriesLogits, MtpStripped) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_prune_mtp");
    const fs::path marked = stories_variant(dir.path(), "mtp", false, 0, 1);
    const fs::path a = dir / "trunk.gguf", b = dir / "layers.gguf";
    run_result r = run({"prune", marked.string(), "-o", a.string(), "--mtp", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    r = run({"prune", stories_fixture().string(), "-o", b.string(), "--layers", "4", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto m = minfer::gguf::model::open(a);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->find("llama.nextn_predict_layers"), nullptr);
    EXPECT_EQ(*m->get_as<std::uint32_t>("llama.block_count"), 4u);
    EXPECT_EQ(m->find_tensor("blk.4.attn_q.weight"), nullptr);
    const auto la = logits_of(*lib, a), lb = logits_of(*lib, b);
    ASSERT_FALSE(la.empty());
    ASSERT_EQ(la.size(), lb.size());
    EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
    // removing the MTP layer by --layers keeps the key consistent (0 MTP layers left)
    const fs::path c = dir / "by-layers.gguf";
    r = run({"prune", marked.string(), "-o", c.string(), "--layers", "4", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto mc = minfer::gguf::model::open(c);
    ASSERT_TRUE(mc.has_value());
    EXPECT_EQ(*mc->get_as<std::uint32_t>("llama.nextn_predict_layers"), 0u);

    // --only-mtp: the opposite file, the MTP block alone as block 0 (the key still 1), its bytes the
    // source's. (llama.cpp does not load it: with every layer an MTP layer it skips every layer's
    // trunk tensors, "wrong number of tensors"; the file is for tools that run MTP heads.)
    const fs::path only = dir / "only.gguf";
    r = run({"prune", marked.string(), "-o", only.string(), "--only-mtp", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto mo = minfer::gguf::model::open(only);
    auto mm = minfer::gguf::model::open(marked);
    ASSERT_TRUE(mo.has_value() && mm.has_value());
    EXPECT_EQ(*mo->get_as<std::uint32_t>("llama.block_count"), 1u);
    EXPECT_EQ(*mo->get_as<std::uint32_t>("llama.nextn_predict_layers"), 1u);
    EXPECT_EQ(mo->tensors().size(), 3u + 9u);
    for (const minfer::gguf::tensor_ref& t : mo->tensors()) {
        std::string n(t.info->name);
        if (n.rfind("blk.0.", 0) == 0) n = "blk.4." + n.substr(6);
        const auto* src = mm->find_tensor(n);
        ASSERT_NE(src, nullptr) << n;
        const auto x = mo->tensor_data(t), y = mm->tensor_data(*src);
        ASSERT_EQ(x.size(), y.size()) << n;
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0) << n;
    }
    r = run({"prune", marked.string(), "-o", (dir / "x.gguf").string(), "--only-mtp", "--mtp"});
    EXPECT_EQ(r.rc, 2) << r.err;
}

// --- assemble: mergekit configs on stories260K ----------------------------------------------------

fs::path write_config(const fs::path& dir, const std::string& name, const std::string& yaml) {
    const fs::path p = dir / name;
    std::ofstream(p) << yaml;
    return p;
}

// A passthrough of one model's whole layer range (without provenance keys) is that model, byte for
// byte; a stack of layers [0, 2) of stories and [2, 5) of its per-layer-array twin is the original's
// five layers in order: llama.cpp decodes the same logits, bit for bit, with the head counts rebuilt
// as arrays.
TEST(StoriesLogits, AssemblePassthroughIdentityAndStack) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_assemble");
    const std::string s = stories_fixture().string();
    const fs::path id = dir / "id.gguf";
    const fs::path cfg = write_config(dir.path(), "id.yaml",
                                      "merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s +
                                          "\n        layer_range: [0, 5]\n");
    run_result r = run({"assemble", cfg.string(), "-o", id.string(), "--no-provenance", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(checksum(id), checksum(stories_fixture()));

    const fs::path twin = stories_variant(dir.path(), "twin", true, 0);
    const fs::path stack = dir / "stack.gguf";
    const fs::path cfg2 = write_config(dir.path(), "stack.yaml",
                                       "merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s +
                                           "\n        layer_range: [0, 2]\n  - sources:\n      - model: " + twin.string() +
                                           "\n        layer_range: [2, 5]\n");
    r = run({"assemble", cfg2.string(), "-o", stack.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto m = minfer::gguf::model::open(stack);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    EXPECT_EQ(*m->get_as<std::uint32_t>("general.base_model.count"), 2u);
    const auto l = logits_of(*lib, stack);
    ASSERT_EQ(l.size(), stories().logits.size());
    EXPECT_EQ(std::memcmp(l.data(), stories().logits.data(), l.size() * sizeof(float)), 0);

    // a deeper stack (layers 0,1,2,2,3,4) loads and decodes too, with block_count 6
    const fs::path deep = dir / "deep.gguf";
    const fs::path cfg3 = write_config(dir.path(), "deep.yaml",
                                       "merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s +
                                           "\n        layer_range: [0, 3]\n  - sources:\n      - model: " + twin.string() +
                                           "\n        layer_range: [2, 5]\n");
    r = run({"assemble", cfg3.string(), "-o", deep.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::uint64_t params = 0;
    const auto ld = logits_of(*lib, deep, &params);
    ASSERT_FALSE(ld.empty());
    EXPECT_GT(params, stories().n_params);
    auto md = minfer::gguf::model::open(deep);
    ASSERT_TRUE(md.has_value());
    EXPECT_EQ(*md->get_as<std::uint32_t>("llama.block_count"), 6u);
}

// A per-tensor recipe: stories in f32 with its feed-forward weights taken from its Q8_0 quantization
// (a tensors: rule): the taken tensors are the Q8_0 file's bytes, the rest the f32 file's; llama.cpp
// loads the mix and decodes within 2 % of the logits' scale of the original.
TEST(StoriesLogits, AssembleRecipeTakesTensorsFromAnotherQuantization) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_recipe");
    const fs::path q8 = dir / "stories-q8_0.gguf";
    run_result r = run({"quantize", stories_fixture().string(), q8.string(), "Q8_0", "1", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const fs::path out = dir / "recipe.gguf";
    const fs::path cfg = write_config(dir.path(), "recipe.yaml",
                                      "merge_method: passthrough\nslices:\n  - sources:\n      - model: " + stories_fixture().string() +
                                          "\n        layer_range: [0, 5]\ntensors:\n  - name: ffn_(up|down)\n    model: " + q8.string() + "\n");
    r = run({"assemble", cfg.string(), "-o", out.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto a = minfer::gguf::model::open(out);
    auto b = minfer::gguf::model::open(q8);
    auto c = minfer::gguf::model::open(stories_fixture());
    ASSERT_TRUE(a && b && c);
    int taken = 0;
    for (const minfer::gguf::tensor_ref& t : a->tensors()) {
        const std::string n(t.info->name);
        const bool by_rule = n.find("ffn_up") != std::string::npos || n.find("ffn_down") != std::string::npos;
        const minfer::gguf::model& from = by_rule ? *b : *c;
        const auto* src = from.find_tensor(n);
        ASSERT_NE(src, nullptr) << n;
        EXPECT_EQ(t.info->type, src->info->type) << n;
        const auto x = a->tensor_data(t), y = from.tensor_data(*src);
        ASSERT_EQ(x.size(), y.size()) << n;
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0) << n;
        taken += by_rule ? 1 : 0;
    }
    EXPECT_EQ(taken, 10);
    const auto l = logits_of(*lib, out);
    ASSERT_EQ(l.size(), stories().logits.size());
    double scale = 0;
    for (float v : stories().logits) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    EXPECT_LT(max_abs_difference(l, stories().logits), 0.02 * scale);
    EXPECT_GT(max_abs_difference(l, stories().logits), 0.0) << "the Q8_0 tensors changed nothing";
}

// What assemble refuses, with its exit code, before anything is written.
TEST(StoriesLogits, AssembleRefusals) {
    if (stories_fixture().empty()) GTEST_SKIP() << "stories260K fixture absent: skipped";
    temp_dir dir("stories_assemble_bad");
    const std::string s = stories_fixture().string();
    const fs::path sample = dir / "sample.gguf";
    auto made = minfer::sample::make_sample_model(sample);
    ASSERT_TRUE(made) << made.error().message();
    struct bad {
        std::string yaml;
        int rc;
        std::string said;
    };
    const std::vector<bad> cases{
        {"merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s + "\n        layer_range: [0, 9]\n", 1,
         "beyond the 5 layers"},
        {"merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s + "\n        layer_range: [0, 2]\n  - sources:\n      - model: " +
             sample.string() + "\n        layer_range: [0, 1]\n",
         1, "qwen2"},
        {"merge_method: dare_ties\nbase_model: " + s + "\nmodels:\n  - model: " + s + "\n", 2, "dare_ties"},
        {"merge_method: passthrough\nslices: [\n", 2, "not valid"},
        // a malformed URL (remote sources themselves: tests/remote/test_remote_assemble.cpp)
        {"merge_method: passthrough\nslices:\n  - sources:\n      - model: \"https://exa mple.com/m.gguf\"\n        layer_range: [0, 2]\n", 2,
         "exa mple"},
        {"merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s +
             "\n        layer_range: [0, 5]\ntensors:\n  - name: output_norm\n    model: " + sample.string() + "\n",
         1, "qwen2"},
    };
    const fs::path moe = stories_variant(dir.path(), "moe", false, 4);
    std::vector<bad> all = cases;
    all.push_back({"merge_method: passthrough\nslices:\n  - sources:\n      - model: " + s +
                       "\n        layer_range: [0, 5]\ntensors:\n  - name: ffn_up\n    model: " + moe.string() + "\n",
                   1, "has no such tensor"});
    const fs::path out = dir / "never.gguf";
    int i = 0;
    for (const bad& c : all) {
        const fs::path cfg = write_config(dir.path(), "c" + std::to_string(i++) + ".yaml", c.yaml);
        const run_result r = run({"assemble", cfg.string(), "-o", out.string()});
        EXPECT_EQ(r.rc, c.rc) << c.yaml << r.err;
        EXPECT_NE(r.err.find(c.said), std::string::npos) << c.yaml << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.yaml;
    }
}

// A linear merge (mergekit's formula: weights 0.7 and 0.3, normalized) of stories260K in f32 and its
// Q8_0 quantization: every tensor dequantized exactly, merged, written back as the base model's f32;
// llama.cpp loads it and decodes within 2 % of the logits' scale of the original. The same merge of a
// model with itself is the model, byte for byte (without provenance keys).
TEST(StoriesLogits, AssembleLinearMergeLoads) {
    MINFER_REQUIRE_STORIES(lib);
    temp_dir dir("stories_linear");
    const fs::path q8 = dir / "stories-q8_0.gguf";
    run_result r = run({"quantize", stories_fixture().string(), q8.string(), "Q8_0", "1", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string s = stories_fixture().string();
    const fs::path out = dir / "linear.gguf";
    const fs::path cfg = write_config(dir.path(), "linear.yaml",
                                      "merge_method: linear\nmodels:\n  - model: " + s + "\n    parameters:\n      weight: 0.7\n  - model: " +
                                          q8.string() + "\n    parameters:\n      weight: 0.3\n");
    r = run({"assemble", cfg.string(), "-o", out.string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto l = logits_of(*lib, out);
    ASSERT_EQ(l.size(), stories().logits.size());
    double scale = 0;
    for (float v : stories().logits) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    EXPECT_LT(max_abs_difference(l, stories().logits), 0.02 * scale);
    const fs::path self = dir / "self.gguf";
    const fs::path copy = dir / "copy.gguf";
    fs::copy_file(stories_fixture(), copy);
    const fs::path cfg2 = write_config(dir.path(), "self.yaml",
                                       "merge_method: linear\nmodels:\n  - model: " + s + "\n    parameters:\n      weight: 1\n  - model: " +
                                           copy.string() + "\n    parameters:\n      weight: 3\n");
    r = run({"assemble", cfg2.string(), "-o", self.string(), "--no-provenance", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(checksum(self), checksum(stories_fixture()));
}

}  // namespace
}  // namespace minfer_toolbox_test
