// `minfer split` and `minfer merge`, through the real binary: every option and every refusal with
// its smallest trigger, the parts as the loader sees them (keys, types, sizes, alignment, bytes),
// and split-then-merge giving back the same bytes (files made here and the real fixtures).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include <optional>
#include <set>

#include "cli_support.hpp"
#include "special_files.hpp"
#include "minfer/gguf_write/merge.hpp"

namespace minfer_cli_test {
namespace {

// A fresh, empty directory per test (under the fixtures' root, removed with it).
fs::path fresh_dir(const std::string& name) {
    const fs::path d = temp_root() / ("sm." + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::set<std::string> listing(const fs::path& d) {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(d)) s.insert(e.path().filename().string());
    return s;
}

std::vector<std::byte> random_data(std::size_t n, std::uint32_t seed) {
    std::vector<std::byte> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = static_cast<std::byte>(x & 0xFF);
    }
    return v;
}

// A model of `n` tensors of random bytes and assorted sizes (f32 [16 * (i % 5 + 1)]), plus metadata.
fs::path make_model(const fs::path& p, std::size_t n, std::optional<std::uint32_t> alignment = {},
                    std::size_t big_at = SIZE_MAX, std::size_t big_elems = 0) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    if (alignment) w.set_u32("general.alignment", *alignment);
    w.set_string("general.name", "split test");
    w.set_u32("llama.block_count", 3);
    const std::vector<std::string> toks{"a", "b", "c"};
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t elems = i == big_at ? static_cast<std::int64_t>(big_elems) : 16 * static_cast<std::int64_t>(i % 5 + 1);
        const std::array<std::int64_t, 1> ne{elems};
        w.add_tensor(std::string("blk.").append(std::to_string(i)) + ".weight", gguf::tensor_type::f32, ne,
                     random_data(static_cast<std::size_t>(elems) * 4, static_cast<std::uint32_t>(i + 1)));
    }
    must_write(w, p);
    return p;
}

gguf::model open_ok(const fs::path& p) {
    auto m = gguf::model::open(p);
    if (!m) throw std::runtime_error("open failed: " + m.error().message());
    return std::move(*m);
}

std::string part(const fs::path& dir, const std::string& prefix, std::uint32_t i, std::uint32_t n) {
    return (dir / gguf::split_file_name(prefix, i, n)).string();
}

// The set at `part1` against the input `in`: it opens; every tensor's bytes are the input's;
// every part has split.no (u16), split.tensors.count (i32), split.count (u16) last; part 1's other
// keys are the input's in order; later parts hold nothing else but general.alignment when the
// input has one.
void check_set(const fs::path& in_path, const fs::path& part1, std::uint32_t n_parts) {
    const gguf::model in = open_ok(in_path);
    const gguf::model set = open_ok(part1);
    ASSERT_EQ(set.parts().size(), n_parts);
    ASSERT_EQ(set.tensors().size(), in.tensors().size());
    for (std::size_t i = 0; i < in.tensors().size(); ++i) {
        const auto a = in.tensor_data(in.tensors()[i]);
        const auto b = set.tensor_data(set.tensors()[i]);
        EXPECT_EQ(in.tensors()[i].info->name, set.tensors()[i].info->name);
        ASSERT_EQ(a.size(), b.size());
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << in.tensors()[i].info->name;
    }
    const gguf::kv* align = in.find("general.alignment");
    std::vector<const gguf::kv*> in_keys;
    for (const gguf::kv& k : in.metadata().metadata())
        if (!k.key.starts_with("split.")) in_keys.push_back(&k);
    for (std::uint32_t p = 0; p < n_parts; ++p) {
        const auto md = set.parts()[p].view.metadata();
        const std::size_t others = p == 0 ? in_keys.size() : (align != nullptr ? 1 : 0);
        ASSERT_EQ(md.size(), others + 3) << "part " << p + 1;
        EXPECT_EQ(md[others].key, "split.no");
        EXPECT_EQ(md[others].type, gguf::value_type::u16);
        EXPECT_EQ(*md[others].get<std::uint16_t>(), p);
        EXPECT_EQ(md[others + 1].key, "split.tensors.count");
        EXPECT_EQ(md[others + 1].type, gguf::value_type::i32);
        EXPECT_EQ(*md[others + 1].get<std::int32_t>(), static_cast<std::int32_t>(in.tensors().size()));
        EXPECT_EQ(md[others + 2].key, "split.count");
        EXPECT_EQ(md[others + 2].type, gguf::value_type::u16);
        EXPECT_EQ(*md[others + 2].get<std::uint16_t>(), n_parts);
        if (p == 0) {
            for (std::size_t k = 0; k < in_keys.size(); ++k) {
                EXPECT_EQ(md[k].key, in_keys[k]->key);
                EXPECT_EQ(md[k].type, in_keys[k]->type);
                EXPECT_TRUE(std::equal(md[k].payload.begin(), md[k].payload.end(), in_keys[k]->payload.begin(),
                                       in_keys[k]->payload.end()));
            }
        } else if (align != nullptr) {
            EXPECT_EQ(md[0].key, "general.alignment");
            EXPECT_EQ(md[0].type, gguf::value_type::u32);
            EXPECT_EQ(*md[0].get<std::uint32_t>(), *align->get<std::uint32_t>());
        }
        EXPECT_EQ(set.parts()[p].view.alignment(), in.metadata().alignment());
    }
}

// ---- usage -------------------------------------------------------------------------------------

struct usage_case {
    std::vector<std::string> args;  // after "split IN PREFIX"
    std::string message;            // a piece of stderr
};

TEST(CliSplit, UsageErrorsExit2AndWriteNothing) {
    const fs::path d = fresh_dir("usage");
    const fs::path in = make_model(d / "in.gguf", 4);
    const std::vector<usage_case> cases{
        {{"--split-max-tensors", "0"}, "--split-max-tensors must be at least 1"},
        {{"--split-max-tensors", "-1"}, "is not a whole number"},
        {{"--split-max-tensors", "2x"}, "is not a whole number"},
        {{"--split-max-tensors", "18446744073709551616"}, "is not a whole number"},
        {{"--split-max-tensors", "2", "--split-max-size", "1M"}, "excludes"},
        {{"--split-max-size", "G"}, "it must start with a number"},
        {{"--split-max-size", "0"}, "at least 1 byte"},
        {{"--split-max-size", "0.0001K"}, "at least 1 byte"},
        {{"--split-max-size", "-1"}, "it must start with a number"},
        {{"--split-max-size", "10X"}, "unknown unit 'X'"},
        {{"--split-max-size", "10k"}, "unknown unit 'k'"},
        {{"--split-max-size", "1.5"}, "a number of bytes must be whole"},
        {{"--split-max-size", "1."}, "a '.' must be followed by digits"},
        {{"--split-max-size", "18446744073709551616"}, "too large"},
        {{"--split-max-size", "20000000T"}, "too large"},
        {{"--split-max-size", ""}, "it must start with a number"},
        {{"--split-max-tensors", ""}, "is not a whole number"},
    };
    for (const usage_case& c : cases) {
        std::vector<std::string> args{"split", in.string(), (d / "out").string()};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run(args);
        EXPECT_EQ(r.rc, 2) << c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "") << ": " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
        EXPECT_EQ(listing(d), std::set<std::string>{"in.gguf"});
    }
    // Missing prefix.
    EXPECT_EQ(run({"split", in.string()}).rc, 2);
    EXPECT_EQ(run({"merge", in.string()}).rc, 2);
}

TEST(CliSplit, Help) {
    const auto h = run({"--help"});
    EXPECT_NE(h.out.find("split"), std::string::npos);
    EXPECT_NE(h.out.find("merge"), std::string::npos);
    const auto s = run({"split", "--help"});
    EXPECT_EQ(s.rc, 0);
    for (const char* o : {"--split-max-tensors", "--split-max-size", "--no-tensor-first-split", "--dry-run", "--force",
                          "--quiet", "KiB", "  2  usage error"})
        EXPECT_NE(s.out.find(o), std::string::npos) << o;
    const auto m = run({"merge", "--help"});
    EXPECT_EQ(m.rc, 0);
    for (const char* o : {"--dry-run", "--force", "--quiet"}) EXPECT_NE(m.out.find(o), std::string::npos) << o;
}

TEST(CliSplit, SizeSyntax) {
    const fs::path d = fresh_dir("sizes");
    const fs::path in = make_model(d / "in.gguf", 2);
    const std::vector<std::pair<std::string, std::uint64_t>> cases{
        {"500", 500},           {"1K", 1000},         {"1KiB", 1024},           {"1.5K", 1500},
        {"2M", 2000000},        {"2MiB", 2097152},    {"1.5GiB", 1610612736},   {"3G", 3000000000},
        {"1T", 1000000000000},  {"1TiB", 1ull << 40}, {"1.0001K", 1000},        {"18446744073709551615", UINT64_MAX}};
    for (const auto& [text, bytes] : cases) {
        const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-size", text, "--dry-run"});
        EXPECT_EQ(r.rc, 0) << text << ": " << r.err;
        EXPECT_NE(r.out.find(std::string("; at most ").append(std::to_string(bytes)) + " bytes per part file:"), std::string::npos)
            << text << ": " << r.out;
    }
}

// ---- split -------------------------------------------------------------------------------------

TEST(CliSplit, ByTensorCount) {
    const fs::path d = fresh_dir("count");
    const fs::path in = make_model(d / "in.gguf", 7);
    const auto r = run({"split", in.string(), (d / "out").string(), "--split-max-tensors", "3"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines[0].rfind("Wrote 3 parts, 7 tensors, ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("; at most 3 tensors per part:"), std::string::npos);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const std::string name = part(d, "out", i, 3);
        const std::uint64_t size = fs::file_size(name);
        EXPECT_NE(lines[i + 1].find(std::to_string(size) + " bytes"), std::string::npos) << lines[i + 1];
        EXPECT_NE(lines[i + 1].find(i < 2 ? "3 tensors" : "1 tensor "), std::string::npos) << lines[i + 1];
    }
    EXPECT_NE(lines[1].find("blk.0.weight .. blk.2.weight"), std::string::npos) << lines[1];
    check_set(in, part(d, "out", 0, 3), 3);
    EXPECT_EQ(listing(d).size(), 4u);
}

TEST(CliSplit, DefaultIs128Tensors) {
    const fs::path d = fresh_dir("default");
    const fs::path in = make_model(d / "in.gguf", 130);
    const auto r = run({"split", in.string(), (d / "out").string(), "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");  // --quiet: no summary
    const gguf::model set = open_ok(part(d, "out", 0, 2));
    EXPECT_EQ(set.parts()[0].view.tensors().size(), 128u);
    check_set(in, part(d, "out", 0, 2), 2);
}

// The parts written under dir with file-name prefix `leaf`, in order (from their names).
std::vector<fs::path> parts_of(const fs::path& dir, const std::string& leaf) {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(dir)) {
        const auto info = gguf::split_file_info(e.path().filename().string());
        if (info && info->prefix == leaf) v.push_back(e.path());
    }
    std::sort(v.begin(), v.end());
    return v;
}

TEST(CliSplit, BySizeEveryPartFitsTheLimit) {
    const fs::path d = fresh_dir("size");
    const fs::path in = make_model(d / "in.gguf", 20);
    for (std::uint64_t limit : {1000u, 1500u, 2345u, 4096u}) {
        const std::string leaf = std::string("s").append(std::to_string(limit));
        const auto r = run({"split", in.string(), (d / leaf).string(), "--split-max-size", std::to_string(limit)});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.err, "") << limit;  // nothing oversized
        const auto parts = parts_of(d, leaf);
        ASSERT_GE(parts.size(), 2u) << limit;
        std::uint64_t total = 0;
        for (const fs::path& p : parts) {
            EXPECT_LE(fs::file_size(p), limit) << p;
            total += fs::file_size(p);
        }
        EXPECT_NE(r.out.find(std::string(", ").append(std::to_string(total)) + " bytes ("), std::string::npos) << r.out;
        check_set(in, parts[0], static_cast<std::uint32_t>(parts.size()));
    }
}

TEST(CliSplit, OversizedTensorGetsItsOwnPartAndAWarning) {
    const fs::path d = fresh_dir("oversized");
    const fs::path in = make_model(d / "in.gguf", 5, {}, 2, 1000);  // tensor 2: 4000 bytes
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-size", "1500"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = parts_of(d, "o");
    ASSERT_EQ(parts.size(), 3u);
    const gguf::model set = open_ok(parts[0]);
    EXPECT_EQ(set.parts()[0].view.tensors().size(), 2u);
    ASSERT_EQ(set.parts()[1].view.tensors().size(), 1u);
    EXPECT_EQ(set.parts()[1].view.tensors()[0].name, "blk.2.weight");
    EXPECT_EQ(set.parts()[2].view.tensors().size(), 2u);
    EXPECT_GT(fs::file_size(parts[1]), 1500u);
    EXPECT_LE(fs::file_size(parts[0]), 1500u);
    EXPECT_LE(fs::file_size(parts[2]), 1500u);
    EXPECT_EQ(r.err, "Warning: part 2 (" + parts[1].string() + std::string(") is ").append(std::to_string(fs::file_size(parts[1]))) +
                         " bytes, over the --split-max-size limit of 1500 bytes: tensor 'blk.2.weight' does not fit\n");
    check_set(in, parts[0], 3);
}

TEST(CliSplit, NoTensorFirstSplit) {
    const fs::path d = fresh_dir("ntf");
    const fs::path in = make_model(d / "in.gguf", 4);
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--no-tensor-first-split"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("(metadata only)"), std::string::npos) << r.out;
    const gguf::model set = open_ok(part(d, "o", 0, 3));
    EXPECT_EQ(set.parts()[0].view.tensors().size(), 0u);
    EXPECT_EQ(set.parts()[1].view.tensors().size(), 2u);
    EXPECT_EQ(set.parts()[2].view.tensors().size(), 2u);
    check_set(in, part(d, "o", 0, 3), 3);
}

TEST(CliSplit, AlignmentHonouredInEveryPart) {
    const fs::path d = fresh_dir("align");
    const fs::path in = make_model(d / "in.gguf", 5, 64);
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"});
    ASSERT_EQ(r.rc, 0) << r.err;
    check_set(in, part(d, "o", 0, 3), 3);
    const gguf::model set = open_ok(part(d, "o", 0, 3));
    for (const gguf::model_part& p : set.parts()) {
        EXPECT_EQ(p.view.alignment(), 64u);
        EXPECT_EQ(p.view.data_offset() % 64, 0u);
        EXPECT_EQ(p.trailing_bytes(), 0u);
        for (const gguf::tensor_info& t : p.view.tensors()) EXPECT_EQ(t.offset % 64, 0u);
    }
    // And it merges back to the same bytes.
    ASSERT_EQ(run({"merge", part(d, "o", 0, 3), (d / "m.gguf").string()}).rc, 0);
    EXPECT_EQ(slurp(d / "m.gguf"), slurp(in));
}

TEST(CliSplit, DryRunWritesNothing) {
    const fs::path d = fresh_dir("dry");
    const fs::path in = make_model(d / "in.gguf", 5);
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--dry-run"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(listing(d), std::set<std::string>{"in.gguf"});
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines[0].rfind("Would write 3 parts, 5 tensors, ", 0), 0u) << lines[0];
    EXPECT_NE(lines[1].find(gguf::split_file_name((d / "o").string(), 0, 3)), std::string::npos) << lines[1];
    EXPECT_NE(lines[3].find("1 tensor "), std::string::npos) << lines[3];
    EXPECT_NE(lines[3].find("blk.4.weight"), std::string::npos) << lines[3];
    // The sizes it announces are the sizes a real run writes.
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    for (std::uint32_t i = 0; i < 3; ++i)
        EXPECT_NE(lines[i + 1].find(std::string(" ").append(std::to_string(fs::file_size(part(d, "o", i, 3)))) + " bytes"), std::string::npos);
}

TEST(CliSplit, ExistingPartIsRefusedUnlessForce) {
    const fs::path d = fresh_dir("exists");
    const fs::path in = make_model(d / "in.gguf", 4);
    write_file(part(d, "o", 1, 2), "old");
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: " + part(d, "o", 1, 2) + " already exists (use --force to replace it)\n");
    EXPECT_FALSE(fs::exists(part(d, "o", 0, 2)));  // nothing written
    EXPECT_EQ(slurp(part(d, "o", 1, 2)), "old");
    // A dry run says the same.
    EXPECT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--dry-run"}).rc, 2);
    // A dangling symlink is an existing name too.
    fs::create_symlink(d / "nowhere", part(d, "p", 0, 2));
    EXPECT_EQ(run({"split", in.string(), (d / "p").string(), "--split-max-tensors", "2"}).rc, 2);

    const auto f = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--force"});
    ASSERT_EQ(f.rc, 0) << f.err;
    check_set(in, part(d, "o", 0, 2), 2);
}

// A part name that is a FIFO, a device, a socket or a directory: refused even with --force, before
// anything is written (part 1's old file is not removed either), exit 2, the thing still there.
TEST(CliSplit, PartThatIsNoRegularFileIsNeverReplaced) {
    const fs::path d = fresh_dir("special");
    const fs::path in = make_model(d / "in.gguf", 4);
    for (const std::uint32_t at : {0u, 1u}) {
        for (const fs::file_type type : special_types) {
            SCOPED_TRACE(kind_name(type) + " as part " + std::to_string(at + 1));
            const fs::path special = part(d, "o", at, 2);
            const fs::path other = part(d, "o", 1 - at, 2);
            if (!make_special(special, type)) continue;
            write_file(other, "old");
            const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--force"});
            EXPECT_EQ(r.rc, 2) << r.err;
            EXPECT_EQ(r.err.rfind("Error: " + special.string() + ": cannot write the output: it is a " + kind_name(type), 0),
                      0u)
                << r.err;
            EXPECT_EQ(fs::symlink_status(special).type(), type);
            EXPECT_EQ(slurp(other), "old");  // nothing written, nothing removed
            fs::remove(special);
            fs::remove(other);
        }
    }
}

// A part name that is a link to a regular file: with --force the part is written at the target and
// the link stays (the set opens through it); a dangling link is refused.
TEST(CliSplit, PartLinkReplacesItsTarget) {
    const fs::path d = fresh_dir("linkpart");
    const fs::path in = make_model(d / "in.gguf", 4);
    fs::create_directories(d / "store");
    write_file(d / "store" / "p1", "old 1");
    write_file(d / "store" / "p2", "old 2");
    fs::create_symlink(fs::path("store") / "p1", part(d, "o", 0, 2));
    fs::create_symlink(d / "store" / "p2", part(d, "o", 1, 2));
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2", "--force", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(part(d, "o", 0, 2)));
    EXPECT_TRUE(fs::is_symlink(part(d, "o", 1, 2)));
    EXPECT_EQ(listing(d / "store"), (std::set<std::string>{"p1", "p2"}));
    check_set(in, part(d, "o", 0, 2), 2);
    EXPECT_EQ(slurp(d / "store" / "p2").substr(0, 4), "GGUF");  // the target is a part file now

    fs::create_symlink(d / "nowhere", part(d, "q", 1, 2));
    const auto dangling = run({"split", in.string(), (d / "q").string(), "--split-max-tensors", "2", "--force"});
    EXPECT_EQ(dangling.rc, 2);
    EXPECT_NE(dangling.err.find("it is a symbolic link to a missing file"), std::string::npos) << dangling.err;
    EXPECT_FALSE(fs::exists(d / "nowhere"));
    EXPECT_FALSE(fs::exists(part(d, "q", 0, 2)));
}

TEST(CliSplit, FailedSplitLeavesNoPart) {
    const fs::path d = fresh_dir("fail");
    // Part 1 (metadata and the first two tensors) is far larger than parts 2 and 3: with a file size
    // limit between them (RLIMIT_FSIZE stands in for a full disk; SIGXFSZ ignored, so the write
    // fails with EFBIG), part 1 cannot be written; parts 2 and 3 are written to unnamed temporaries,
    // and since no part is named until all are complete, none appears. (A directory as part 1 no longer gets this far: it
    // is refused before anything is written, CliSplit.PartThatIsNoRegularFileIsNeverReplaced.)
    const fs::path in = d / "in.gguf";
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_string("general.description", std::string(200000, 'd'));
        for (int i = 0; i < 6; ++i) {
            const std::array<std::int64_t, 1> ne{16};
            w.add_tensor("blk." + std::to_string(i) + ".weight", gguf::tensor_type::f32, ne,
                         random_data(64, static_cast<std::uint32_t>(i + 1)));
        }
        must_write(w, in);
    }
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    rlimit limit = old_limit;
    limit.rlim_cur = 100000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
    const auto r = run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"});
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("Error: writing part 1 of 3: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("No part was written: the parts are named only once all of them are complete."),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(listing(d), (std::set<std::string>{"in.gguf"}));
}

TEST(CliSplit, NeverWritesOverItsInput) {
    const fs::path d = fresh_dir("selfsplit");
    const fs::path in = make_model(d / "in.gguf", 4);
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    const std::string p1 = slurp(part(d, "o", 0, 2)), p2 = slurp(part(d, "o", 1, 2));
    // Re-splitting the set onto its own names: refused even with --force.
    const auto r = run({"split", part(d, "o", 0, 2), (d / "o").string(), "--split-max-tensors", "2", "--force"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("is a file of the input model; split never writes over its input"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(part(d, "o", 0, 2)), p1);
    EXPECT_EQ(slurp(part(d, "o", 1, 2)), p2);
}

TEST(CliSplit, ResplitASplitSet) {
    const fs::path d = fresh_dir("resplit");
    const fs::path in = make_model(d / "in.gguf", 7, 64);
    ASSERT_EQ(run({"split", in.string(), (d / "a").string(), "--split-max-tensors", "2"}).rc, 0);
    const auto r = run({"split", part(d, "a", 0, 4), (d / "b").string(), "--split-max-tensors", "3"});
    ASSERT_EQ(r.rc, 0) << r.err;
    check_set(in, part(d, "b", 0, 3), 3);  // part 1: the original's metadata and the new split keys only
    ASSERT_EQ(run({"merge", part(d, "b", 0, 3), (d / "m.gguf").string()}).rc, 0);
    EXPECT_EQ(slurp(d / "m.gguf"), slurp(in));
}

TEST(CliSplit, TooManyPartsIsAUsageError) {
    const fs::path d = fresh_dir("toomany");
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    const std::array<std::int64_t, 1> ne{1};
    for (int i = 0; i < 65535; ++i) w.add_zero_tensor(std::string("t").append(std::to_string(i)), gguf::tensor_type::f32, ne);
    must_write(w, d / "in.gguf");
    // 65535 one-tensor parts fit split.count; a metadata-only part 1 in front is one too many.
    auto r = run({"split", (d / "in.gguf").string(), (d / "o").string(), "--split-max-tensors", "1", "--dry-run"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.rfind("Would write 65535 parts, 65535 tensors, ", 0), 0u);
    r = run({"split", (d / "in.gguf").string(), (d / "o").string(), "--split-max-tensors", "1", "--no-tensor-first-split"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: the split needs 65536 parts but split.count (u16) can count at most 65535 [too_many_parts]\n");
    EXPECT_EQ(listing(d), std::set<std::string>{"in.gguf"});
}

TEST(CliSplit, InvalidInput) {
    const fs::path d = fresh_dir("badin");
    EXPECT_EQ(run({"split", fx().bad_magic.string(), (d / "o").string()}).rc, 1);
    EXPECT_EQ(run({"split", (d / "nope.gguf").string(), (d / "o").string()}).rc, 3);
    EXPECT_EQ(run({"split", fx().split_missing1.string(), (d / "o").string()}).rc, 3);
    EXPECT_TRUE(listing(d).empty());
}

// ---- merge -------------------------------------------------------------------------------------

TEST(CliMerge, RoundTripIsByteIdentical) {
    const fs::path d = fresh_dir("roundtrip");
    const fs::path in = make_model(d / "in.gguf", 9);
    const std::vector<std::vector<std::string>> variants{{"--split-max-tensors", "1"},
                                                         {"--split-max-tensors", "4", "--no-tensor-first-split"},
                                                         {"--split-max-size", "1200"},
                                                         {"--split-max-size", "1K", "--no-tensor-first-split"},
                                                         {}};
    int v = 0;
    for (const auto& opts : variants) {
        const std::string leaf = std::string("v").append(std::to_string(v++));
        std::vector<std::string> args{"split", in.string(), (d / leaf).string(), "--quiet"};
        args.insert(args.end(), opts.begin(), opts.end());
        ASSERT_EQ(run(args).rc, 0) << leaf;
        const auto parts = parts_of(d, leaf);
        ASSERT_FALSE(parts.empty());
        const fs::path out = d / (leaf + ".merged.gguf");
        const auto r = run({"merge", parts[0].string(), out.string()});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, "Wrote " + out.string() + std::string(": 9 tensors from ").append(std::to_string(parts.size())) +
                             (parts.size() == 1 ? " part, " : " parts, ") +
                             std::to_string(fs::file_size(in)) + " bytes (" + mb_text(fs::file_size(in)) + ")\n");
        EXPECT_EQ(slurp(out), slurp(in)) << leaf;
    }
}

// A merge holds one part's descriptor at a time: 300 parts merge under `ulimit -n 64` (it opened
// all of them at once, so 5,000 parts failed at 256), byte-identical to the model split.
TEST(CliMerge, ManyPartsUnderASmallDescriptorLimit) {
    const fs::path d = fresh_dir("manyparts");
    const fs::path in = make_model(d / "in.gguf", 300);
    ASSERT_EQ(run({"split", in.string(), (d / "p").string(), "--quiet", "--split-max-tensors", "1"}).rc, 0);
    const auto parts = parts_of(d, "p");
    ASSERT_EQ(parts.size(), 300u);
    const fs::path out = d / "merged.gguf";
    const std::string cmd = "ulimit -n 64 && '" + std::string(MINFER_EXE) + "' merge '" + parts[0].string() + "' '" +
                            out.string() + "' > '" + (d / "merge.err").string() + "' 2>&1";
    const int status = std::system(("sh -c \"" + cmd + "\"").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(d / "merge.err");
    ASSERT_TRUE(fs::exists(out)) << slurp(d / "merge.err");
    const int same = std::system(("cmp -s '" + in.string() + "' '" + out.string() + "'").c_str());
    EXPECT_EQ(same, 0) << "the merged file differs from the model split";
}

TEST(CliMerge, DryRunWritesNothing) {
    const fs::path d = fresh_dir("mdry");
    const fs::path in = make_model(d / "in.gguf", 4);
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    const auto before = listing(d);
    const auto r = run({"merge", part(d, "o", 0, 2), (d / "m.gguf").string(), "--dry-run"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "Would write " + (d / "m.gguf").string() + ": 4 tensors from 2 parts, " +
                         std::to_string(fs::file_size(in)) + " bytes (" + mb_text(fs::file_size(in)) + ")\n");
    EXPECT_EQ(listing(d), before);
}

TEST(CliMerge, OutputExistsIsRefusedUnlessForceAndNeverAPart) {
    const fs::path d = fresh_dir("mexists");
    const fs::path in = make_model(d / "in.gguf", 4);
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    const std::string p1 = slurp(part(d, "o", 0, 2)), p2 = slurp(part(d, "o", 1, 2));
    write_file(d / "m.gguf", "old");
    auto r = run({"merge", part(d, "o", 0, 2), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: " + (d / "m.gguf").string() + " already exists (use --force to replace it)\n");
    EXPECT_EQ(slurp(d / "m.gguf"), "old");
    r = run({"merge", part(d, "o", 0, 2), (d / "m.gguf").string(), "--force", "--quiet"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(slurp(d / "m.gguf"), slurp(in));
    // One of the parts, by another name too (a hard link): refused even with --force.
    for (const fs::path& target : {fs::path(part(d, "o", 1, 2)), fs::path(part(d, "o", 0, 2))}) {
        r = run({"merge", part(d, "o", 0, 2), target.string(), "--force"});
        EXPECT_EQ(r.rc, 2);
        EXPECT_NE(r.err.find("of the input set; merge never writes over its input"), std::string::npos) << r.err;
    }
    fs::create_hard_link(part(d, "o", 1, 2), d / "link.gguf");
    r = run({"merge", part(d, "o", 0, 2), (d / "link.gguf").string(), "--force"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("is part 2 of the input set"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(part(d, "o", 0, 2)), p1);
    EXPECT_EQ(slurp(part(d, "o", 1, 2)), p2);
}

// The merged output is a FIFO, a device, a socket, a directory: refused even with --force, exit 2,
// the thing still there. A link to a regular file: its target is replaced, the link stays.
TEST(CliMerge, OutputThatIsNoRegularFileIsNeverReplacedALinksTargetIs) {
    const fs::path d = fresh_dir("mspecial");
    const fs::path in = make_model(d / "in.gguf", 4);
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    for (const special_file& s : make_special_files(d, "m")) {
        SCOPED_TRACE(s.kind);
        const auto r = run({"merge", part(d, "o", 0, 2), s.path.string(), "--force"});
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_EQ(r.err.rfind("Error: " + s.path.string() + ": cannot write the output: it is a " + s.kind, 0), 0u)
            << r.err;
        EXPECT_EQ(fs::symlink_status(s.path).type(), s.type);
    }
    write_file(d / "real.gguf", "old");
    fs::create_symlink("real.gguf", d / "link.gguf");
    const auto r = run({"merge", part(d, "o", 0, 2), (d / "link.gguf").string(), "--force", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(d / "link.gguf"));
    EXPECT_EQ(slurp(d / "real.gguf"), slurp(in));
}

TEST(CliMerge, NotASplitSet) {
    const fs::path d = fresh_dir("notset");
    const fs::path in = make_model(d / "in.gguf", 2);
    const auto r = run({"merge", in.string(), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("key 'split.count' is absent: the file is not part 1 of a split set [split_bad_key]"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(d / "m.gguf"));
}

TEST(CliMerge, LoaderRefusalsOfTheSet) {
    const fs::path d = fresh_dir("badset");
    const fs::path in = make_model(d / "in.gguf", 6);
    ASSERT_EQ(run({"split", in.string(), (d / "o").string(), "--split-max-tensors", "2"}).rc, 0);
    // Missing part (I/O: exit 3, as exit_code_for has it).
    fs::rename(part(d, "o", 2, 3), d / "aside");
    auto r = run({"merge", part(d, "o", 0, 3), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 3);
    EXPECT_NE(r.err.find("[split_part_missing]"), std::string::npos) << r.err;
    // Wrong order: parts 2 and 3 swapped.
    fs::rename(part(d, "o", 1, 3), part(d, "o", 2, 3));
    fs::rename(d / "aside", part(d, "o", 1, 3));
    r = run({"merge", part(d, "o", 0, 3), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("[split_no_mismatch]"), std::string::npos) << r.err;
    // A later part given as the entry.
    r = run({"merge", part(d, "o", 1, 3), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("[split_not_first]"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "m.gguf"));

    // Duplicates: the same tensor in two parts.
    for (std::uint32_t i = 0; i < 2; ++i) {
        gguf::writer w;
        if (i == 0) w.set_string("general.architecture", "llama");
        w.set_u16("split.no", static_cast<std::uint16_t>(i)).set_i32("split.tensors.count", 2).set_u16("split.count", 2);
        const std::array<std::int64_t, 1> ne{4};
        w.add_zero_tensor("same.weight", gguf::tensor_type::f32, ne);
        must_write(w, part(d, "dup", i, 2));
    }
    r = run({"merge", part(d, "dup", 0, 2), (d / "m.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("[split_duplicate_tensor]"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "m.gguf"));
}

TEST(CliMerge, WarnsAboutDroppedMetadataOfLaterParts) {
    const fs::path d = fresh_dir("mwarn");
    for (std::uint32_t i = 0; i < 2; ++i) {
        gguf::writer w;
        if (i == 0) w.set_string("general.architecture", "llama");
        if (i == 1) w.set_string("general.name", "only in part 2");
        w.set_u16("split.no", static_cast<std::uint16_t>(i)).set_i32("split.tensors.count", 2).set_u16("split.count", 2);
        const std::array<std::int64_t, 1> ne{4};
        w.add_zero_tensor(std::string("t").append(std::to_string(i)), gguf::tensor_type::f32, ne);
        must_write(w, part(d, "w", i, 2));
    }
    const auto r = run({"merge", part(d, "w", 0, 2), (d / "m.gguf").string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "Warning: part 2 has key 'general.name', which the merged file drops (it keeps part 1's metadata)\n");
    const gguf::model m = open_ok(d / "m.gguf");
    EXPECT_EQ(m.find("general.name"), nullptr);
    EXPECT_EQ(m.find("split.count"), nullptr);
    EXPECT_EQ(m.find("split.no"), nullptr);
    EXPECT_EQ(m.find("split.tensors.count"), nullptr);
    EXPECT_EQ(m.tensors().size(), 2u);
}

// ---- real files --------------------------------------------------------------------------------

fs::path real_dir() { return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real"; }

// Every file llama.cpp accepts (REFERENCE.txt) splits into a set the loader opens and merges back.
// The merged file is byte-identical to the original except where the original is not in the
// layout a writer produces:
//   * gridcore__vocab-bpe-qwen2 and gridcore__vocab-spm: no tensor, and 9 / 14 zero bytes after
//     the metadata (their writer padded the end of the table to 32 although there is no data
//     section); the merged file ends at the table, as the loader computes data_offset.
//   * raudbjorn-llamacpp__ggml-vocab-falcon: GGUF v2; the writer writes v3 (the only difference,
//     byte 4; v2 and v3 have the same layout for little-endian files).
TEST(CliReal, SplitMergeRoundTrip) {
    const fs::path ref = real_dir() / "REFERENCE.txt";
    if (!fs::exists(ref)) GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << ref.string() << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    const std::set<std::string> trailing{"gridcore__vocab-bpe-qwen2__a02bd13.gguf", "gridcore__vocab-spm__a25209f.gguf"};
    const std::string v2 = "raudbjorn-llamacpp__ggml-vocab-falcon__d4ea2e8.gguf";
    int identical = 0, checked = 0;
    for (const std::string& line : lines_of(slurp(ref))) {
        const std::vector<std::string> fields = split_on(line, '\t');
        if (fields.size() < 2 || fields[1] != "ACCEPTED") continue;
        const fs::path in = real_dir() / fields[0];
        if (!fs::exists(in)) continue;
        const std::string original = slurp(in);
        for (const std::vector<std::string>& opts :
             {std::vector<std::string>{"--split-max-tensors", "5"},
              std::vector<std::string>{"--split-max-size", "200K", "--no-tensor-first-split"}}) {
            const fs::path d = fresh_dir("real");
            std::vector<std::string> args{"split", in.string(), (d / "p").string(), "--quiet"};
            args.insert(args.end(), opts.begin(), opts.end());
            const auto s = run(args);
            ASSERT_EQ(s.rc, 0) << fields[0] << ": " << s.err;
            const auto parts = parts_of(d, "p");
            ASSERT_FALSE(parts.empty());
            {
                const gguf::model in_m = open_ok(in);
                const gguf::model set = open_ok(parts[0]);
                ASSERT_EQ(set.tensors().size(), in_m.tensors().size());
                for (std::size_t i = 0; i < in_m.tensors().size(); ++i) {
                    const auto a = in_m.tensor_data(in_m.tensors()[i]), b = set.tensor_data(set.tensors()[i]);
                    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << fields[0];
                }
            }
            const auto m = run({"merge", parts[0].string(), (d / "m.gguf").string(), "--quiet"});
            ASSERT_EQ(m.rc, 0) << fields[0] << ": " << m.err;
            const std::string merged = slurp(d / "m.gguf");
            if (trailing.count(fields[0]) != 0) {
                const gguf::model in_m = open_ok(in);
                EXPECT_GT(original.size(), merged.size()) << fields[0];
                EXPECT_EQ(merged.size(), in_m.metadata().data_offset()) << fields[0];
                EXPECT_EQ(original.substr(0, merged.size()), merged) << fields[0];
                EXPECT_EQ(original.find_first_not_of('\0', merged.size()), std::string::npos) << fields[0];
            } else if (fields[0] == v2) {
                ASSERT_EQ(merged.size(), original.size());
                EXPECT_EQ(original[4], '\x02');
                EXPECT_EQ(merged[4], '\x03');
                EXPECT_EQ(original.substr(5), merged.substr(5));
                EXPECT_EQ(original.substr(0, 4), merged.substr(0, 4));
            } else {
                EXPECT_EQ(merged, original) << fields[0] << " is not byte-identical after split + merge";
                ++identical;
            }
            ++checked;
        }
    }
    EXPECT_GT(checked, 0);
    EXPECT_GE(identical, 2 * 14);  // 14 of the 17 accepted files, with both option sets
}

}  // namespace
}  // namespace minfer_cli_test
