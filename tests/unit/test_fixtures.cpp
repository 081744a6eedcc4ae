// Real files from the wild (${MINFER_SHARED_DIR}/fixtures/real), checked against llama.cpp's own
// verdict on each (REFERENCE.txt, parsed at run time). Skips when the folder is absent.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

fs::path real_dir() {
    if (const char* env = std::getenv("MINFER_SHARED_DIR")) return fs::path(env) / "fixtures" / "real";
    return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real";
}

struct reference_row {
    std::string file;
    bool accepted = false;
    std::map<std::string, std::string> fields;  // key=value fields of ACCEPTED rows (and size)
    std::vector<std::string> log;               // llama.cpp's log lines of REJECTED rows
};

std::vector<reference_row> load_reference(const fs::path& path) {
    std::vector<reference_row> rows;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (line[0] == ' ' || line[0] == '\t') {
            if (!rows.empty()) rows.back().log.push_back(line.substr(line.find_first_not_of(" \t")));
            continue;
        }
        std::istringstream fields(line);
        std::string f;
        reference_row row;
        std::getline(fields, row.file, '\t');
        std::getline(fields, f, '\t');
        row.accepted = f == "ACCEPTED";
        while (std::getline(fields, f, '\t')) {
            const auto eq = f.find('=');
            if (eq != std::string::npos) row.fields[f.substr(0, eq)] = f.substr(eq + 1);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

class RealFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir = real_dir();
        if (!fs::is_directory(dir) || !fs::exists(dir / "REFERENCE.txt"))
            GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << dir.string()
                         << " (the ../shared checkout beside this repository, or $MINFER_SHARED_DIR)";
        rows = load_reference(dir / "REFERENCE.txt");
        ASSERT_FALSE(rows.empty());
    }
    fs::path dir;
    std::vector<reference_row> rows;
};

std::uint64_t to_u64(const std::string& s) { return std::stoull(s); }
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
std::string string_or_none(const model& m, std::string_view key) {
    auto v = m.get<std::string_view>(key);
    return v ? std::string(*v) : std::string("(none)");
}

TEST_F(RealFiles, EveryFileIsInTheReference) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".gguf") continue;
        ++n;
        const std::string name = e.path().filename().string();
        EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const reference_row& r) { return r.file == name; }))
            << name << " has no row in REFERENCE.txt";
    }
    EXPECT_EQ(n, rows.size());
}

TEST_F(RealFiles, AcceptedFilesParseAsLlamaCppParsesThem) {
    std::size_t checked = 0;
    for (const reference_row& row : rows) {
        if (!row.accepted) continue;
        SCOPED_TRACE(row.file);
        const fs::path p = dir / row.file;
        auto m = model::open(p);
        ASSERT_TRUE(m) << m.error().message();
        const file_view& v = m->metadata();
        const auto& f = row.fields;
        EXPECT_EQ(m->file_bytes(), to_u64(f.at("size")));
        EXPECT_EQ(v.version(), to_u64(f.at("version")));
        EXPECT_EQ(v.metadata().size(), to_u64(f.at("n_kv")));
        EXPECT_EQ(v.tensors().size(), to_u64(f.at("n_tensors")));
        EXPECT_EQ(v.alignment(), to_u64(f.at("alignment")));
        EXPECT_EQ(v.data_offset(), to_u64(f.at("data_offset")));
        // data_end is llama.cpp's data_offset + its data section size (the sum of padded sizes);
        // for a tensor-less file that is the data offset itself.
        EXPECT_EQ(v.data_offset() + v.data_size(), to_u64(f.at("data_end")));
        EXPECT_EQ(string_or_none(*m, "general.architecture"), f.at("arch"));
        EXPECT_EQ(string_or_none(*m, "tokenizer.ggml.model"), f.at("tokenizer"));
        EXPECT_EQ(string_or_none(*m, "tokenizer.ggml.pre"), f.at("pre"));
        std::uint64_t n_vocab = 0;
        if (auto toks = m->get<array_view>("tokenizer.ggml.tokens")) {
            n_vocab = toks->size();
            auto table = toks->string_table();
            ASSERT_TRUE(table);
            EXPECT_EQ(table->size(), n_vocab);
        }
        EXPECT_EQ(n_vocab, to_u64(f.at("n_vocab")));
        // tensor type counts, "type:count,…" in llama.cpp's order of first appearance, or "-"
        std::map<std::string, std::uint64_t> want, got;
        if (f.at("tensor_types") != "-") {
            std::istringstream s(f.at("tensor_types"));
            std::string item;
            while (std::getline(s, item, ',')) {
                const auto colon = item.find(':');
                want[lower(item.substr(0, colon))] = to_u64(item.substr(colon + 1));
            }
        }
        for (const tensor_ref& t : m->tensors()) ++got[std::string(to_string(t.info->type))];
        EXPECT_EQ(got, want);
        // every tensor's bytes are inside the mapping and readable
        for (const tensor_ref& t : m->tensors()) {
            const auto d = m->tensor_data(t);
            ASSERT_EQ(d.size(), t.info->n_bytes);
            if (!d.empty()) {
                volatile std::byte last = d.back();
                (void)last;
            }
        }
        ++checked;
    }
    EXPECT_GT(checked, 10u);
}

// Our verdict on every file llama.cpp refuses: refused too, with the specific code.
TEST_F(RealFiles, RejectedFilesAreRefusedWithASpecificCode) {
    // File-name stem (without the commit) -> the code we must give.
    const std::map<std::string, errc> expected = {
        {"ollama__test", errc::truncated},                    // 6 bytes: "GGUF" + half a version
        {"raudbjorn-llamacpp__ggml-vocab-llama", errc::version_unsupported},  // GGUFv1
        {"gridcore__hdr-wrap-first-offset", errc::offset_mismatch},  // first offset 2^64 - 16
        // The tensor table ends at byte 122 and so does the file: the data section (at 128) is not in
        // it. llama.cpp says "failed to seek to beginning of data section"; we say how much is missing.
        {"las7-weightinspect__tiny", errc::data_truncated},
        {"ushure-llamajni__ggml-vocab-baichuan", errc::string_exceeds_file},
        {"ushure-llamajni__ggml-vocab-bert-bge", errc::string_exceeds_file},
        {"ushure-llamajni__ggml-vocab-starcoder", errc::string_exceeds_file},
        {"ushure-llamajni__ggml-vocab-gpt-2", errc::string_too_long},
        {"ushure-llamajni__ggml-vocab-llama-spm", errc::string_too_long},
        {"ushure-llamajni__ggml-vocab-phi-3", errc::string_too_long},
    };
    std::size_t checked = 0, numbers_checked = 0;
    for (const reference_row& row : rows) {
        if (row.accepted) continue;
        SCOPED_TRACE(row.file);
        const std::string stem = row.file.substr(0, row.file.rfind("__"));
        ASSERT_TRUE(expected.count(stem)) << "no expected code recorded for " << row.file;
        const fs::path p = dir / row.file;
        auto m = model::open(p);
        ASSERT_FALSE(m) << "accepted a file llama.cpp rejects";
        const error& e = m.error();
        EXPECT_EQ(e.code, expected.at(stem)) << describe(e);
        EXPECT_EQ(e.file, p.string());
        // where llama.cpp's log gives numbers, ours must be the same numbers
        for (const std::string& line : row.log) {
            unsigned long long a = 0, b = 0;
            char name[128] = {};
            if (std::sscanf(line.c_str(), "llama.cpp: read: string length %llu exceeds remaining file size %llu", &a,
                            &b) == 2) {
                EXPECT_EQ(e.found, a);
                EXPECT_EQ(e.expected, b);
                ++numbers_checked;
            } else if (std::sscanf(line.c_str(), "llama.cpp: read: string length %llu exceeds maximum %llu", &a, &b) ==
                       2) {
                EXPECT_EQ(e.found, a);
                EXPECT_EQ(e.expected, b);
                ++numbers_checked;
            } else if (std::sscanf(line.c_str(),
                                   "llama.cpp: gguf_init_from_reader: tensor '%127[^']' has offset %llu, expected %llu",
                                   name, &a, &b) == 3) {
                EXPECT_EQ(e.subject, name);
                EXPECT_EQ(e.found, a);
                EXPECT_EQ(e.expected, b);
                ++numbers_checked;
            }
        }
        // the same verdict from bytes read into memory
        const bytes b = read_file(p);
        EXPECT_EQ(parse_error(b).code, e.code);
        ++checked;
    }
    EXPECT_EQ(checked, expected.size());
    EXPECT_EQ(numbers_checked, 7u);  // six string lengths and one offset
}

TEST_F(RealFiles, ReadModeAgreesWithMapMode) {
    for (const reference_row& row : rows) {
        SCOPED_TRACE(row.file);
        auto a = model::open(dir / row.file);
        auto b = model::open(dir / row.file, {.mode = load_mode::read});
        ASSERT_EQ(a.has_value(), b.has_value());
        if (!a) {
            EXPECT_EQ(a.error().code, b.error().code);
            EXPECT_EQ(a.error().offset, b.error().offset);
            continue;
        }
        EXPECT_EQ(a->metadata().data_offset(), b->metadata().data_offset());
        EXPECT_EQ(a->tensors().size(), b->tensors().size());
    }
}

}  // namespace
