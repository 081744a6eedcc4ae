// Hash manifests are downloaded beside models: arbitrary text through parse_manifest, then every
// entry it accepts is checked for what the parser promises (a digest that prints back as the hash it
// was read from, a non-empty name, a line inside the text), and the manifest is matched against a
// small fixed model (whatever names, prefixes and duplicates it holds) with check_manifest, whose
// report must point only at real entries and tensors. A broken promise traps.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "minfer/check/manifest.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/check/errors.hpp"

namespace {

namespace ck = minfer::check;

struct fixed_model {
    minfer::gguf::model model;
    ck::model_digests digests;
};

// A GGUF v3 file with two f32 tensors "a" (2 values) and "b:c.gguf" (1 value): a tensor name with a
// ':' and ".gguf" in it, the matcher's hardest case.
const fixed_model& model() {
    static const fixed_model m = [] {
        const auto path = std::filesystem::temp_directory_path() / "minfer-fuzz-manifest-m.gguf";
        std::string b;
        auto u32 = [&](std::uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
        auto u64 = [&](std::uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
        auto str = [&](std::string_view s) { u64(s.size()); b.append(s); };
        b.append("GGUF");
        u32(3);
        u64(2);
        u64(0);
        str("a"), u32(1), u64(2), u32(0), u64(0);
        str("b:c.gguf"), u32(1), u64(1), u32(0), u64(32);
        while (b.size() % 32 != 0) b.push_back('\0');
        b.append(std::string(36, '\x01'));
        std::ofstream(path, std::ios::binary | std::ios::trunc) << b;
        fixed_model f;
        f.model = *minfer::gguf::model::open(path);
        ck::hash_options o;
        o.kinds = {ck::hash_kind::xxh64, ck::hash_kind::sha256, ck::hash_kind::uuid};
        f.digests = *ck::hash_model(f.model, o);
        std::filesystem::remove(path);
        return f;
    }();
    return m;
}

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_manifest: %s\n", what);
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto man = ck::parse_manifest(text, "fuzz.txt");
    if (!man) {
        if (man.error().code != minfer::check::codes::manifest_bad_line &&
            man.error().code != minfer::gguf::errc::out_of_memory)
            fail("unexpected error code");
        (void)man.error().message();
        return 0;
    }
    std::uint32_t lines = 1;
    for (char c : text) lines += c == '\n';
    for (const auto& e : man->entries) {
        if (e.name.empty() || e.line == 0 || e.line > lines) fail("entry name or line");
        const auto again = ck::parse_digest(e.kind, e.value.text());
        if (!again || !(*again == e.value)) fail("digest does not print back");
        if (text.find(e.value.text()) == std::string_view::npos) fail("hash not in the text");
    }
    const fixed_model& f = model();
    for (const char* file : {"m.gguf", "b", "c.gguf", ""}) {
        const auto rep = ck::check_manifest(*man, f.model, file, f.digests);
        for (const auto& l : rep.lines) {
            if (l.tensor >= static_cast<std::int64_t>(f.model.tensors().size())) fail("line names no tensor");
            if (l.entry != nullptr && (l.entry < man->entries.data() || l.entry >= man->entries.data() + man->entries.size()))
                fail("line points outside the manifest");
            if ((l.entry == nullptr) != (l.status == ck::entry_status::not_found)) fail("status without entry");
        }
        for (std::uint32_t t : rep.missing_tensors)
            if (t >= f.model.tensors().size()) fail("missing tensor out of range");
        if (rep.outcome == ck::check_outcome::success &&
            (!rep.unknown_tensors.empty() || !rep.conflicting.empty() || !rep.missing_tensors.empty()))
            fail("success with problems");
    }
    return 0;
}
