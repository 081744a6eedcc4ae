#include <charconv>
#include <cstdio>

#include "minfer/gguf/split.hpp"

namespace minfer::gguf {
namespace {
bool five_digits(std::string_view s, std::uint32_t& out) {
    if (s.size() != 5) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return std::from_chars(s.data(), s.data() + 5, out).ec == std::errc();
}
}  // namespace

std::optional<split_name> split_file_info(std::string_view name) {
    constexpr std::string_view ext = ".gguf";
    if (name.size() < ext.size() || name.substr(name.size() - ext.size()) != ext) return std::nullopt;
    const std::string_view stem = name.substr(0, name.size() - ext.size());
    const std::size_t of = stem.rfind("-of-");
    if (of == std::string_view::npos) return std::nullopt;
    const std::string_view idx_part = stem.substr(0, of);
    const std::size_t dash = idx_part.rfind('-');
    if (dash == std::string_view::npos) return std::nullopt;
    std::uint32_t idx = 0, count = 0;
    if (!five_digits(idx_part.substr(dash + 1), idx) || !five_digits(stem.substr(of + 4), count)) return std::nullopt;
    if (idx == 0 || count == 0 || idx > count) return std::nullopt;
    return split_name{std::string(idx_part.substr(0, dash)), idx - 1, count};
}

std::string split_file_name(std::string_view prefix, std::uint32_t index, std::uint32_t count) {
    char tail[32];
    std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", index + 1, count);
    return std::string(prefix) + tail;
}

result<std::vector<std::filesystem::path>> resolve_splits(const std::filesystem::path& entry) {
    const auto info = split_file_info(entry.filename().string());
    if (!info) return std::vector<std::filesystem::path>{entry};
    const std::filesystem::path dir = entry.parent_path();
    if (info->index != 0) {
        error e;
        e.code = errc::split_not_first;
        e.where = section::split;
        e.file = entry.string();
        e.expected = 0;
        e.found = info->index;
        e.part = info->index + 1;
        e.n_parts = info->count;
        e.detail = (dir / split_file_name(info->prefix, 0, info->count)).string();
        return unexpected(std::move(e));
    }
    std::vector<std::filesystem::path> parts;
    parts.reserve(info->count);
    for (std::uint32_t i = 0; i < info->count; ++i) parts.push_back(dir / split_file_name(info->prefix, i, info->count));
    return parts;
}

}  // namespace minfer::gguf
