// Differential mutation test (docs/DIFFERENTIAL.md, part b). Mutants of valid files (bit flips,
// byte overwrites, truncations, extreme u64/u32 fields) are read by both parsers:
//  - llama.cpp refuses → we must refuse (a hard failure otherwise), unless the reason is a class
//    of the "laxer" table of docs/DIFFERENTIAL.md (only: a type id newer than the reference);
//  - we refuse, llama.cpp accepts → our error must fall in a class of the "stricter" table, each of
//    which is a documented, justified check of ours; a new class fails until it is documented;
//  - both accept → both must report the same content (as far as C strings can express it).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "content.hpp"
#include "harness.hpp"
#include "llama_ref.hpp"
#include "minfer/gguf.hpp"
#include "mutate.hpp"
#include "snapshot.hpp"

namespace minfer::reference {
namespace {

namespace gg = minfer::gguf;

/// The class names listed in the table between `<!-- name:begin -->` and `<!-- name:end -->`:
/// the first cell of each row, in backquotes.
std::set<std::string> documented_classes(const std::string& doc, const std::string& name) {
    std::set<std::string> out;
    const auto b = doc.find("<!-- " + name + ":begin -->");
    const auto e = doc.find("<!-- " + name + ":end -->");
    if (b == std::string::npos || e == std::string::npos || e < b) return out;
    std::istringstream in(doc.substr(b, e - b));
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("| `")) continue;
        const auto end = line.find('`', 3);
        if (end != std::string::npos) out.insert(line.substr(3, end - 3));
    }
    return out;
}

std::string read_text(const char* path) {
    std::ifstream f(path);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// Whether llama.cpp reports for some tensor a byte size other than the true one (ne product /
/// block size * block bytes): ggml_nbytes() computes ne[0] * nb[0] before dividing by the block
/// size, which wraps for a large ne[0] of a block type.
bool some_size_wraps(const llama_lib& lib, const snapshot& theirs) {
    for (const tensor_entry& t : theirs.tensors) {
        if (!lib.knows_type(t.type)) continue;
        std::uint64_t n = 1, bytes = 0;
        bool overflow = false;
        for (std::int64_t d : t.ne) overflow = overflow || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n);
        const auto blck = static_cast<std::uint64_t>(lib.api().ggml_blck_size(static_cast<int>(t.type)));
        overflow = overflow || __builtin_mul_overflow(n / blck, lib.api().ggml_type_size(static_cast<int>(t.type)), &bytes);
        if (overflow || bytes != t.size) return true;
    }
    return false;
}

/// Our error as a divergence class: the code, refined where only part of it is justified.
std::string stricter_class(const llama_lib& lib, const gg::error& e, const snapshot& theirs) {
    std::string c(gg::to_string(e.code));
    if (e.code == gg::errc::offset_mismatch) c += some_size_wraps(lib, theirs) ? ":ggml_nbytes_wraps" : ":other";
    if (e.code == gg::errc::bad_name_length) c += e.found == 0 ? ":empty" : ":too_long";
    if (e.code == gg::errc::shape_overflow || e.code == gg::errc::size_overflow) {
        // llama.cpp checks the shape only when ggml_nelements() > 0: that int64 product is 0 for a
        // zero dimension, and 0 or negative when it wraps around.
        std::uint64_t wrapped = 1;
        for (std::int64_t d : e.shape) wrapped *= static_cast<std::uint64_t>(d);
        const bool zero = std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end();
        const bool not_positive = wrapped == 0 || wrapped > static_cast<std::uint64_t>(INT64_MAX);
        c += zero ? ":zero_dim" : not_positive ? ":nelements_wraps" : ":other";
    }
    return c;
}

/// Why llama.cpp may refuse a file we accept.
std::string laxer_class(const llama_lib& lib, const gg::file_view& v) {
    for (const gg::tensor_info& t : v.tensors())
        if (!lib.knows_type(static_cast<std::uint32_t>(t.type))) return "type_newer_than_reference";
    return "unexplained";
}

struct example {
    std::uint64_t count = 0;
    std::vector<std::byte> bytes;  // the shortest mutant of the class
    std::string how, ours, theirs;
};

void record(std::map<std::string, example>& table, const std::string& cls, const mutant& m, const std::string& ours,
            const std::string& theirs) {
    example& e = table[cls];
    ++e.count;
    if (e.count == 1 || m.bytes.size() < e.bytes.size()) {
        e.bytes = m.bytes;
        e.how = m.how;
        e.ours = ours;
        e.theirs = theirs;
    }
}

std::string first_line(const std::string& s) {
    const auto p = s.find('\n');
    return p == std::string::npos ? s : s.substr(0, p);
}

std::string table_text(const std::map<std::string, example>& t) {
    std::vector<std::pair<std::string, const example*>> rows;
    for (const auto& [k, v] : t) rows.emplace_back(k, &v);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
    std::ostringstream o;
    for (const auto& [k, e] : rows) {
        o << "| `" << k << "` | " << e->count << " | " << e->how << " | " << e->bytes.size() << " bytes | "
          << first_line(e->ours) << " | " << first_line(e->theirs) << " |\n";
        o << "    hex: " << hex(std::span(e->bytes).first(std::min<std::size_t>(e->bytes.size(), 160))) << "\n";
    }
    return o.str();
}

TEST(Mutants, LlamaRefusesImpliesWeRefuseAndDivergencesAreDocumented) {
    MINFER_REQUIRE_LLAMA(lib);
    const std::string doc = read_text(MINFER_DIFFERENTIAL_MD);
    ASSERT_FALSE(doc.empty()) << "cannot read " << MINFER_DIFFERENTIAL_MD;
    const std::set<std::string> stricter = documented_classes(doc, "stricter");
    const std::set<std::string> laxer = documented_classes(doc, "laxer");
    ASSERT_FALSE(stricter.empty()) << "docs/DIFFERENTIAL.md has no <!-- stricter:begin --> table";

    scratch_dir dir;
    const auto path = dir / "mutant.gguf";
    const std::uint64_t n = run_files(), per_file = run_mutants(), seed = run_seed();
    std::map<std::string, example> we_refuse, they_refuse, both_refuse;
    std::uint64_t total = 0, both_accept = 0, nul_cut = 0, failures = 0;
    for (std::uint64_t i = 0; i < n && failures < 10; ++i) {
        std::mt19937_64 rng(file_seed(seed, i));
        const content c = generate(rng, *lib);
        const std::vector<std::byte> original = write_ours(c);
        ASSERT_FALSE(original.empty());
        const field_map map = map_fields(original, c.alignment);
        std::mt19937_64 mrng(file_seed(seed ^ 0x6d7574616e74ull, i));
        for (std::uint64_t k = 0; k < per_file && failures < 10; ++k) {
            const mutant m = mutate(mrng, original, map);
            ++total;
            write_bytes(path, m.bytes);
            const std::string where = "file " + std::to_string(i) + " mutant " + std::to_string(k) +
                                      " of MINFER_DIFF_SEED=" + std::to_string(seed) + " (" + m.how + ")";
            auto ours = gg::file_view::parse(m.bytes);
            auto opened = gg::model::open(path);
            if (opened.has_value() != ours.has_value()) {
                ++failures;
                ADD_FAILURE() << where << ": file_view::parse and model::open disagree\n" << hex_dump(m.bytes);
            }
            const ref_verdict theirs = ref_read(*lib, path);
            const std::string our_text = ours ? "accepted" : ours.error().message();
            const std::string their_text = theirs.accepted ? "accepted" : theirs.log;
            if (!theirs.accepted && !ours) {
                record(both_refuse, std::string(gg::to_string(ours.error().code)), m, our_text, their_text);
            } else if (!theirs.accepted) {
                const std::string cls = laxer_class(*lib, *ours);
                record(they_refuse, cls, m, our_text, their_text);
                if (!laxer.contains(cls)) {
                    ++failures;
                    ADD_FAILURE() << where << ": llama.cpp refuses a file we accept (class " << cls << ")\n"
                                  << "ours: accepted\nllama.cpp: " << theirs.log << "first 256 bytes:\n"
                                  << hex_dump(m.bytes) << "\nwhole file: " << hex(m.bytes);
                }
            } else if (!ours) {
                const std::string cls = stricter_class(*lib, ours.error(), theirs.content);
                record(we_refuse, cls, m, our_text, their_text);
                if (!stricter.contains(cls)) {
                    ++failures;
                    ADD_FAILURE() << where << ": we refuse a file llama.cpp accepts, class `" << cls
                                  << "` is not in docs/DIFFERENTIAL.md\nours: " << our_text << "\nfirst 256 bytes:\n"
                                  << hex_dump(m.bytes) << "\nwhole file: " << hex(m.bytes);
                }
            } else {
                ++both_accept;
                bool cut = false;
                const snapshot mine = as_c_strings(snapshot_of(*ours), &cut);
                nul_cut += cut ? 1 : 0;
                const std::string d = diff(mine, theirs.content, "ours", "llama.cpp");
                if (!d.empty() || !theirs.notes.empty()) {
                    ++failures;
                    ADD_FAILURE() << where << ": both accept, contents differ\n" << d << theirs.notes << hex_dump(m.bytes);
                }
            }
        }
    }
    std::uint64_t n_we = 0, n_they = 0, n_both = 0;
    for (const auto& [k, e] : we_refuse) n_we += e.count;
    for (const auto& [k, e] : they_refuse) n_they += e.count;
    for (const auto& [k, e] : both_refuse) n_both += e.count;
    std::ostringstream summary;
    summary << "[ mutants ] " << n << " files, " << total << " mutants: both accept " << both_accept << " (identical "
            << "content; " << nul_cut << " with a NUL cut by the C API), both refuse " << n_both << ", only we refuse "
            << n_we << ", only llama.cpp refuses " << n_they << "\n"
            << "only we refuse (class | count | shortest example | size | ours | llama.cpp):\n"
            << table_text(we_refuse) << "only llama.cpp refuses:\n" << table_text(they_refuse)
            << "both refuse, by our code:\n";
    for (const auto& [k, e] : both_refuse) summary << "  " << k << ": " << e.count << "\n";
    std::cout << summary.str();
    if (const char* report = std::getenv("MINFER_DIFF_REPORT")) {
        std::ofstream f(report);
        f << summary.str();
    }
}

}  // namespace
}  // namespace minfer::reference
