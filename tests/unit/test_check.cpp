// minfer::check's library parts: digests against published and independently computed vectors
// (Python's hashlib, xxhsum), the data walk's windows and pieces, model hashes against one-shot
// hashes of the same bytes, manifest parsing (every malformed-line case) and matching outcomes.
// The command (`minfer hash`) is tested against an independent Python reference in tests/cli.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>

#include "gguf_bytes.hpp"
#include "minfer/check/data_walk.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/check/errors.hpp"

namespace {

using namespace minfer::test;
namespace ck = minfer::check;
using ck::hash_kind;
using minfer::gguf::errc;

std::span<const std::byte> as_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string hex_of(hash_kind k, std::string_view data) {
    auto d = ck::hash_bytes(k, as_bytes(data));
    EXPECT_TRUE(d.has_value());
    return d ? d->text() : std::string();
}

TEST(CheckDigest, KnownVectors) {
    // FIPS 180 examples; xxHash's own values (xxhsum -H1 / -H3 of the same bytes); the uuids from
    // Python: uuid.UUID of sha1(namespace + data)[:16] with version 5 and variant 10 set.
    EXPECT_EQ(hex_of(hash_kind::sha256, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex_of(hash_kind::sha256, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex_of(hash_kind::sha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex_of(hash_kind::xxh64, ""), "ef46db3751d8e999");
    EXPECT_EQ(hex_of(hash_kind::xxh64, "abc"), "44bc2cf5ad770999");
    EXPECT_EQ(hex_of(hash_kind::xxh3, ""), "2d06800538d394c2");
    EXPECT_EQ(hex_of(hash_kind::xxh3, "abc"), "78af5f94892f3950");
    EXPECT_EQ(hex_of(hash_kind::uuid, ""), "6b2748e2-363e-5825-9e7a-d9b30f33ac5b");
    EXPECT_EQ(hex_of(hash_kind::uuid, "abc"), "9f2200fc-45e8-5a39-9535-c3ea5c0e0cef");
}

TEST(CheckDigest, StreamingEqualsOneShot) {
    const bytes data = random_bytes(100'003, 7);
    for (hash_kind k : ck::all_hash_kinds) {
        auto whole = ck::hash_bytes(k, data);
        ASSERT_TRUE(whole.has_value());
        auto h = ck::hasher::make(k);
        ASSERT_TRUE(h.has_value());
        std::size_t pos = 0;
        for (std::size_t step : {0u, 1u, 63u, 64u, 65u, 4096u, 31'337u}) {
            const std::size_t n = std::min(step, data.size() - pos);
            h->update(std::span(data).subspan(pos, n));
            pos += n;
        }
        h->update(std::span(data).subspan(pos));
        const ck::digest d = h->finish();
        EXPECT_EQ(d, *whole) << ck::to_string(k);
        EXPECT_EQ(h->finish(), *whole) << "a second finish gives the same digest";
        EXPECT_EQ(d.text().size(), ck::text_length(k));
    }
}

TEST(CheckDigest, ParseDigest) {
    std::string why;
    auto d = ck::parse_digest(hash_kind::xxh64, "44bc2cf5ad770999", &why);
    ASSERT_TRUE(d.has_value()) << why;
    EXPECT_EQ(d->text(), "44bc2cf5ad770999");
    auto u = ck::parse_digest(hash_kind::uuid, "6b2748e2-363e-5825-9e7a-d9b30f33ac5b", &why);
    ASSERT_TRUE(u.has_value()) << why;
    EXPECT_EQ(u->text(), "6b2748e2-363e-5825-9e7a-d9b30f33ac5b");
    EXPECT_FALSE(ck::parse_digest(hash_kind::xxh64, "44bc2cf5ad77099", &why));
    EXPECT_NE(why.find("15 characters, expected 16"), std::string::npos) << why;
    EXPECT_FALSE(ck::parse_digest(hash_kind::xxh64, "44BC2CF5AD770999", &why)) << "uppercase";
    EXPECT_NE(why.find("character 3 "), std::string::npos) << why;
    EXPECT_FALSE(ck::parse_digest(hash_kind::xxh64, "44bc2cf5ad77099g", &why));
    EXPECT_NE(why.find("character 16 "), std::string::npos) << why;
    EXPECT_FALSE(ck::parse_digest(hash_kind::uuid, "6b2748e2x363e-5825-9e7a-d9b30f33ac5b", &why));
    EXPECT_FALSE(ck::parse_digest(hash_kind::sha256, "", &why));
    EXPECT_EQ(ck::parse_hash_kind("sha256"), hash_kind::sha256);
    EXPECT_FALSE(ck::parse_hash_kind("SHA256"));
    EXPECT_FALSE(ck::parse_hash_kind("md5"));
}

// A model of f32 tensors of the given element counts (alignment 32), written to a file.
struct test_model {
    temp_dir dir;
    std::filesystem::path path;
    bytes file;
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // absolute [offset, size) per tensor
};

void make_model(test_model& t, const std::vector<std::int64_t>& counts, std::uint32_t seed = 1) {
    gguf_bytes g;
    g.header(3, static_cast<std::int64_t>(counts.size()), 1).kv_str("general.architecture", "llama");
    std::uint64_t off = 0;
    std::vector<std::uint64_t> offs;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        g.tensor_info(std::string("t").append(std::to_string(i)), {counts[i]}, minfer::gguf::tensor_type::f32, off);
        offs.push_back(off);
        off += (static_cast<std::uint64_t>(counts[i]) * 4 + 31) / 32 * 32;
    }
    g.pad(32);
    const std::size_t data = g.size();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        g.raw(random_bytes(static_cast<std::size_t>(counts[i]) * 4, seed + static_cast<std::uint32_t>(i)));
        g.pad(32);
        t.spans.emplace_back(data + offs[i], static_cast<std::size_t>(counts[i]) * 4);
    }
    t.file = g.b;
    t.path = t.dir / "m.gguf";
    write_file(t.path, t.file);
}

struct recorder final : ck::data_consumer {
    std::vector<ck::window> windows;
    std::map<std::uint32_t, bytes> tensors;
    std::map<std::uint32_t, int> firsts, lasts;
    bytes walked;
    void schedule(const ck::window& w, std::vector<ck::job>& jobs) override {
        windows.push_back(w);
        walked.insert(walked.end(), w.bytes.begin(), w.bytes.end());
        for (const auto& p : w.tensors) {
            auto& t = tensors[p.tensor];
            EXPECT_EQ(p.offset, t.size()) << "pieces arrive in order";
            t.insert(t.end(), p.bytes.begin(), p.bytes.end());
            firsts[p.tensor] += p.first;
            lasts[p.tensor] += p.last;
            EXPECT_GE(p.bytes.data(), w.bytes.data());
            EXPECT_LE(p.bytes.data() + p.bytes.size(), w.bytes.data() + w.bytes.size());
        }
        jobs.emplace_back([] {});
    }
};

TEST(CheckWalk, PiecesCoverEveryTensorExactlyOnce) {
    test_model t;
    // Empty tensors first, between and last; tensors straddling several 64 KiB windows.
    make_model(t, {0, 1, 40'000, 3, 0, 70'001, 5, 0});
    auto m = minfer::gguf::model::open(t.path);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    for (bool whole : {false, true}) {
        for (unsigned threads : {1u, 2u, 3u}) {
            recorder r;
            ck::data_consumer* cs[] = {&r};
            ck::walk_options o;
            o.window_bytes = 1;  // rounded up to 64 KiB
            o.threads = threads;
            o.whole_files = whole;
            std::uint64_t last_done = 0, total = 0;
            o.progress = [&](std::uint64_t d, std::uint64_t tot) {
                EXPECT_GT(d, last_done);
                last_done = d;
                total = tot;
            };
            ASSERT_TRUE(ck::walk_model_data(*m, cs, o).has_value());
            EXPECT_EQ(last_done, total);
            EXPECT_EQ(total, ck::walk_bytes(*m, whole));
            ASSERT_EQ(r.tensors.size(), t.spans.size());
            for (std::uint32_t i = 0; i < t.spans.size(); ++i) {
                const auto [off, size] = t.spans[i];
                EXPECT_EQ(r.tensors[i], bytes(t.file.begin() + static_cast<std::ptrdiff_t>(off),
                                              t.file.begin() + static_cast<std::ptrdiff_t>(off + size)))
                    << "tensor " << i;
                EXPECT_EQ(r.firsts[i], 1) << i;
                EXPECT_EQ(r.lasts[i], 1) << i;
            }
            for (std::size_t w = 0; w < r.windows.size(); ++w) {
                EXPECT_EQ(r.windows[w].index, w);
                EXPECT_LE(r.windows[w].bytes.size(), 64u << 10);
                if (w + 1 < r.windows.size()) {
                    EXPECT_EQ((r.windows[w].file_offset + r.windows[w].bytes.size()) % (64u << 10), 0u);
                }
            }
            if (whole) {
                EXPECT_EQ(r.walked, t.file);
            } else {
                EXPECT_EQ(r.walked.size(), t.spans.back().first - t.spans.front().first);
            }
        }
    }
}

TEST(CheckWalk, ModelWithoutTensorBytesHasNoWindowUnlessWhole) {
    test_model t;
    make_model(t, {});
    auto m = minfer::gguf::model::open(t.path);
    ASSERT_TRUE(m.has_value());
    recorder r;
    ck::data_consumer* cs[] = {&r};
    ASSERT_TRUE(ck::walk_model_data(*m, cs).has_value());
    EXPECT_TRUE(r.windows.empty());
    ck::walk_options o;
    o.whole_files = true;
    ASSERT_TRUE(ck::walk_model_data(*m, cs, o).has_value());
    EXPECT_EQ(r.walked, t.file);
}

TEST(CheckHash, ModelDigestsEqualOneShotHashesOfTheSameBytes) {
    test_model t;
    make_model(t, {0, 1, 40'000, 3, 300'000, 0, 17});
    auto m = minfer::gguf::model::open(t.path);
    ASSERT_TRUE(m.has_value());
    bytes all;
    for (const auto& [off, size] : t.spans)
        all.insert(all.end(), t.file.begin() + static_cast<std::ptrdiff_t>(off),
                   t.file.begin() + static_cast<std::ptrdiff_t>(off + size));
    for (unsigned threads : {1u, 2u, 4u}) {
        ck::hash_options ho;
        ho.kinds = {hash_kind::uuid, hash_kind::sha256, hash_kind::xxh64, hash_kind::sha1, hash_kind::xxh3, hash_kind::sha256};
        ho.file_sha256 = true;
        ck::walk_options wo;
        wo.window_bytes = 64 << 10;
        wo.threads = threads;
        auto d = ck::hash_model(*m, ho, wo);
        ASSERT_TRUE(d.has_value()) << d.error().message();
        ASSERT_EQ(d->kinds, (std::vector<hash_kind>{hash_kind::xxh64, hash_kind::xxh3, hash_kind::sha1, hash_kind::sha256,
                                                   hash_kind::uuid}));
        ASSERT_EQ(d->tensors.size(), t.spans.size());
        for (std::size_t i = 0; i < d->kinds.size(); ++i) {
            EXPECT_EQ(d->model[i], *ck::hash_bytes(d->kinds[i], all)) << ck::to_string(d->kinds[i]);
            for (std::size_t ti = 0; ti < t.spans.size(); ++ti) {
                if (d->kinds[i] == hash_kind::uuid) {
                    EXPECT_EQ(d->tensors[ti][i].size, 0) << "no per-tensor uuid";
                    continue;
                }
                const auto [off, size] = t.spans[ti];
                EXPECT_EQ(d->tensors[ti][i], *ck::hash_bytes(d->kinds[i], std::span(t.file).subspan(off, size)))
                    << ck::to_string(d->kinds[i]) << " tensor " << ti << " threads " << threads;
            }
        }
        ASSERT_EQ(d->files.size(), 1u);
        EXPECT_EQ(d->files[0], *ck::hash_bytes(hash_kind::sha256, t.file));
    }
    ck::hash_options no_layer;
    no_layer.per_tensor = false;
    auto d = ck::hash_model(*m, no_layer);
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->tensors.empty());
    EXPECT_EQ(d->model.at(0), *ck::hash_bytes(hash_kind::xxh64, all));
}

// ---- manifests ----

minfer::gguf::error parse_error(std::string_view text) {
    auto r = ck::parse_manifest(text, "man.txt");
    EXPECT_FALSE(r.has_value()) << text;
    return r ? minfer::gguf::error{} : r.error();
}

TEST(CheckManifest, ParsesLlamaGgufHashOutputAndSkipsWhatItSkips) {
    const std::string text =
        "xxh64     44bc2cf5ad770999  m.gguf:t0\n"
        "\n"
        "md5 0123 m.gguf\n"                   // an unknown type: skipped
        "# a comment\n"
        "sha256\t" + std::string(64, 'a') + "\t  dir with space/m.gguf  \r\n"  // a path with spaces, CRLF
        "uuid      6b2748e2-363e-5825-9e7a-d9b30f33ac5b  m.gguf";                  // no final newline
    auto r = ck::parse_manifest(text, "man.txt");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_EQ(r->entries.size(), 3u);
    EXPECT_EQ(r->entries[0].name, "m.gguf:t0");
    EXPECT_EQ(r->entries[0].line, 1u);
    EXPECT_EQ(r->entries[1].kind, hash_kind::sha256);
    EXPECT_EQ(r->entries[1].name, "dir with space/m.gguf");
    EXPECT_EQ(r->entries[1].line, 5u);
    EXPECT_EQ(r->entries[2].line, 6u);
    EXPECT_EQ(r->kinds(), (std::vector<hash_kind>{hash_kind::sha256, hash_kind::xxh64, hash_kind::uuid}));
    EXPECT_EQ(r->strongest(), hash_kind::sha256);
    auto none = ck::parse_manifest("md5 00 m.gguf\n\n", "x");
    ASSERT_TRUE(none.has_value());
    EXPECT_TRUE(none->entries.empty());
    EXPECT_FALSE(none->strongest());
}

TEST(CheckManifest, MalformedLinesOfKnownTypesAreErrors) {
    auto e = parse_error("xxh64\n");
    EXPECT_EQ(e.code, minfer::check::codes::manifest_bad_line);
    EXPECT_EQ(e.index, 1);
    EXPECT_NE(e.message().find("has no hash"), std::string::npos) << e.message();
    e = parse_error("\nsha1 abc m.gguf\n");
    EXPECT_EQ(e.index, 2);
    EXPECT_EQ(e.subject, "sha1");
    EXPECT_NE(e.message().find("3 characters, expected 40"), std::string::npos) << e.message();
    EXPECT_EQ(e.file, "man.txt");
    e = parse_error("xxh64 44bc2cf5ad770999\n");
    EXPECT_NE(e.message().find("names no file or tensor"), std::string::npos) << e.message();
    e = parse_error("xxh3 44BC2CF5AD770999 m.gguf\n");
    EXPECT_NE(e.message().find("lowercase hexadecimal"), std::string::npos) << e.message();
    e = parse_error("uuid 6b2748e2_363e-5825-9e7a-d9b30f33ac5b m.gguf\n");
    EXPECT_EQ(e.code, minfer::check::codes::manifest_bad_line);
}

TEST(CheckManifest, ReadErrors) {
    temp_dir dir;
    auto r = ck::read_manifest(dir / "absent.txt");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::io_error);
    EXPECT_EQ(r.error().file, (dir / "absent.txt").string());
    r = ck::read_manifest(dir.path());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::io_error);
    // One byte over the cap (a sparse file: nothing is written to disk).
    const auto big = dir / "big.txt";
    { std::ofstream f(big); }
    std::filesystem::resize_file(big, ck::max_manifest_bytes + 1);
    r = ck::read_manifest(big);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, minfer::check::codes::manifest_too_large);
    EXPECT_EQ(r.error().expected, ck::max_manifest_bytes);
    EXPECT_EQ(r.error().found, ck::max_manifest_bytes + 1);
}

struct checked_model {
    test_model t;
    minfer::gguf::model m;
    ck::model_digests d;
    checked_model() {
        make_model(t, {4, 8, 2});
        m = *minfer::gguf::model::open(t.path);
        ck::hash_options ho;
        ho.kinds = {hash_kind::sha256};
        d = *ck::hash_model(m, ho);
    }
    std::string hex(std::size_t tensor) const { return d.tensors[tensor][0].text(); }
    std::string model_hex() const { return d.model[0].text(); }
    ck::check_report check(const std::string& text, std::string_view file = "m.gguf") {
        man = *ck::parse_manifest(text, "man.txt");
        return ck::check_manifest(man, m, file, d);
    }
    ck::manifest man;
};

std::string line(const std::string& hex, const std::string& name) { return "sha256  " + hex + "  " + name + "\n"; }

TEST(CheckManifest, Outcomes) {
    checked_model c;
    const std::string full = line(c.hex(0), "m.gguf:t0") + line(c.hex(1), "m.gguf:t1") + line(c.hex(2), "m.gguf:t2") +
                             line(c.model_hex(), "m.gguf");
    auto rep = c.check(full);
    EXPECT_EQ(rep.outcome, ck::check_outcome::success);
    ASSERT_EQ(rep.lines.size(), 4u);
    for (const auto& l : rep.lines) EXPECT_EQ(l.status, ck::entry_status::ok);
    EXPECT_EQ(rep.lines[3].tensor, -1);

    // Any directory prefix on either side.
    std::string prefixed = full;
    for (std::size_t p = 0; (p = prefixed.find("m.gguf", p)) != std::string::npos; p += 20) prefixed.insert(p, "./a/b/");
    EXPECT_EQ(c.check(prefixed).outcome, ck::check_outcome::success);

    // One tensor differs.
    std::string bad = full;
    bad.replace(bad.find(c.hex(1)), 1, c.hex(1)[0] == '0' ? "1" : "0");
    rep = c.check(bad);
    EXPECT_EQ(rep.outcome, ck::check_outcome::mismatch);
    EXPECT_EQ(rep.lines[1].status, ck::entry_status::mismatch);
    EXPECT_EQ(rep.lines[0].status, ck::entry_status::ok);

    // A tensor without an entry: incomplete (llama-gguf-hash says Success).
    rep = c.check(line(c.hex(0), "m.gguf:t0") + line(c.hex(2), "m.gguf:t2") + line(c.model_hex(), "m.gguf"));
    EXPECT_EQ(rep.outcome, ck::check_outcome::incomplete);
    EXPECT_EQ(rep.missing_tensors, std::vector<std::uint32_t>{1});

    // Only the model line (a --no-layer manifest): complete.
    EXPECT_EQ(c.check(line(c.model_hex(), "m.gguf")).outcome, ck::check_outcome::success);

    // An entry for a tensor the model lacks.
    rep = c.check(full + line(c.hex(0), "m.gguf:t9"));
    EXPECT_EQ(rep.outcome, ck::check_outcome::unknown_tensors);
    ASSERT_EQ(rep.unknown_tensors.size(), 1u);
    EXPECT_EQ(rep.unknown_tensors[0]->line, 5u);

    // Two different hashes for one tensor.
    rep = c.check(full + line(std::string(64, 'f'), "m.gguf:t0"));
    EXPECT_EQ(rep.outcome, ck::check_outcome::mismatch);
    ASSERT_EQ(rep.conflicting.size(), 1u);
    EXPECT_EQ(rep.lines[0].status, ck::entry_status::ok) << "the first entry is compared";

    // Entries of another kind only: nothing for this file.
    EXPECT_EQ(c.check("xxh64  0123456789abcdef  m.gguf\n").outcome, ck::check_outcome::no_entries);

    // A manifest of two other files: nothing for this one.
    EXPECT_EQ(c.check(line(c.model_hex(), "a.gguf") + line(c.model_hex(), "b.gguf")).outcome,
              ck::check_outcome::no_entries);

    // A manifest of one other file is taken for this one (a renamed download).
    std::string renamed = full;
    for (std::size_t p = 0; (p = renamed.find("m.gguf", p)) != std::string::npos; p += 8) renamed.replace(p, 6, "orig.gguf");
    rep = c.check(renamed, "m.gguf");
    EXPECT_TRUE(rep.renamed);
    EXPECT_EQ(rep.file_name, "orig.gguf");
    EXPECT_EQ(rep.outcome, ck::check_outcome::success);

    // "xm.gguf" is not "m.gguf"; a tensor name may hold ':' and '.gguf'.
    EXPECT_EQ(c.check(line(c.model_hex(), "m.gguf") + line(c.hex(0), "xm.gguf:t0")).outcome,
              ck::check_outcome::success);
}

}  // namespace
