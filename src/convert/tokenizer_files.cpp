// Reading a tokenizer's small files (tokenizer_files.hpp).
#include "tokenizer_files.hpp"

#include <sys/stat.h>

#include "minfer/convert/errors.hpp"
#include "minfer/gguf/text.hpp"
#include "capped_file.hpp"

namespace minfer::convert::detail {

void fail_file(gguf::errc code, std::string file, std::uint64_t offset, std::string_view subject, std::string detail,
               gguf::section where, std::uint64_t expected, std::uint64_t found) {
    convert_failure f;
    f.e.code = code;
    f.e.where = where;
    f.e.file = std::move(file);
    f.e.offset = offset;
    f.e.subject = subject;
    f.e.detail = std::move(detail);
    f.e.expected = expected;
    f.e.found = found;
    throw f;
}

// stat(2) rather than std::filesystem's non-throwing status, which may allocate inside noexcept code.
bool is_file(const std::filesystem::path& p) noexcept {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::filesystem::path& p) noexcept {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool valid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

namespace {

std::string read_whole(const std::filesystem::path& p, std::uint64_t cap, gguf::errc code = codes::bad_tokenizer) {
    auto text = read_capped_file(p, cap, code);
    if (!text) throw convert_failure{std::move(text).error()};
    return std::move(*text);
}

}  // namespace

std::optional<json_file> read_json_if_file(const std::filesystem::path& p, std::uint64_t cap) {
    if (!is_file(p)) return std::nullopt;
    const std::string text = read_whole(p, cap);
    auto tree = std::make_shared<json_tree>();
    json_failure failure;
    if (!build_json_tree(text, 0, json_tree_limits{}, *tree, failure)) {
        if (failure.out_of_memory) throw std::bad_alloc();
        fail_file(codes::bad_tokenizer, p.string(), failure.offset, "", "not valid JSON: " + failure.detail);
    }
    return json_file{p.string(), std::move(tree)};
}

void require_utf8(std::string_view raw, const std::string& file, gguf::errc code, gguf::section where) {
    for (std::size_t i = 0; i < raw.size();) {
        const std::size_t n = gguf::utf8_length_at(raw, i);
        if (n == 0) fail_file(code, file, i, "", "not valid UTF-8 at byte " + std::to_string(i) + " (the reference reads it as UTF-8 text)", where);
        i += n;
    }
}

std::string universal_newlines(std::string_view raw) {
    std::string text;
    text.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '\r') {
            text += raw[i];
            continue;
        }
        text += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
    }
    return text;
}

std::optional<std::string> read_text_if_file(const std::filesystem::path& p, std::uint64_t cap, gguf::errc code) {
    if (!is_file(p)) return std::nullopt;
    const std::string raw = read_whole(p, cap, code);
    require_utf8(raw, p.string(), code);
    return universal_newlines(raw);
}

}  // namespace minfer::convert::detail
