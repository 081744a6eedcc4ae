// model::open: open the given file; its split.count decides whether it is a single model or part 1
// of a set (as llama.cpp's loader does). For a set, the other parts' paths come from the entry's
// name; each part is mapped, verified and checked for consistent split keys; the tensor indexes are
// merged.
#include <algorithm>
#include <cerrno>
#include <limits>
#include <new>
#include <optional>

#include "minfer/gguf/byte_source.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/text.hpp"
#include "name_index_impl.hpp"

namespace minfer::gguf {
namespace {

// The most parts a split name can hold ("-XXXXX-of-YYYYY": five digits).
constexpr std::uint64_t max_named_parts = 99999;

error located(error e, const std::string& path, std::uint32_t part, std::uint32_t n_parts) {
    if (e.file.empty()) e.file = path;
    if (n_parts > 1) {
        e.part = part + 1;
        e.n_parts = n_parts;
    }
    return e;
}

error split_error(errc code, const model_part& p, std::uint32_t part, std::uint32_t n_parts, std::uint64_t expected,
                  std::uint64_t found) {
    error e;
    e.code = code;
    e.where = section::split;
    e.expected = expected;
    e.found = found;
    return located(std::move(e), p.path.string(), part, n_parts);
}

error key_error(std::string_view key, std::string detail, const model_part& p, std::uint32_t part,
                std::uint32_t n_parts, std::uint64_t offset = 0) {
    error e = split_error(errc::split_bad_key, p, part, n_parts, 0, 0);
    e.subject = std::string(key);
    e.detail = std::move(detail);
    e.offset = offset;
    return e;
}

// An integer split.* key, or `fallback` when absent.
result<std::uint64_t> split_key(const model_part& p, std::string_view key, std::uint64_t fallback, std::uint32_t part,
                                std::uint32_t n_parts) {
    const kv* e = p.view.find(key);
    if (e == nullptr) return fallback;
    auto v = e->as_u64();
    if (v) return *v;
    return unexpected(key_error(key, "has type " + std::string(to_string(e->type)) + ", expected a non-negative integer",
                                p, part, n_parts, e->offset));
}

// An integer split.* key a part of a set must carry.
result<std::uint64_t> required_split_key(const model_part& p, std::string_view key, std::uint32_t part,
                                         std::uint32_t n_parts) {
    if (p.view.find(key) == nullptr)
        return unexpected(key_error(key, "is missing from part " + std::to_string(part + 1), p, part, n_parts));
    return split_key(p, key, 0, part, n_parts);
}

// Only a part that does not exist is missing; one that exists but cannot be read (EACCES, EIO, a
// directory, a FIFO, a server error) stays an I/O error, located at its part.
error part_error(error e, const std::string& location, std::uint32_t part, std::uint32_t n_parts) {
    const bool absent = (e.code == errc::io_error && e.sys_errno == ENOENT) ||
                        (e.code == errc::http_status && (e.found == 404 || e.found == 410));
    if (part > 0 && absent) {
        // A server's answer has no errno: the reason is its status (never strerror(0), "Success").
        if (e.code == errc::http_status)
            e.detail = "the server answered HTTP " + std::to_string(e.found) + (e.detail.empty() ? "" : " (" + e.detail + ")");
        e.code = errc::split_part_missing;
        e.where = section::split;
    }
    return located(std::move(e), location, part, n_parts);
}

result<model_part> as_part(result<fetched_head> head, const std::string& location, std::uint32_t part,
                           std::uint32_t n_parts) {
    if (!head) return unexpected(part_error(std::move(head).error(), location, part, n_parts));
    return model_part{location, std::move(head->bytes), std::move(head->view)};
}

// A later part's general.architecture, when it has one, must be part 1's. (llama-gguf-split writes
// the model's metadata into part 1 only, so a later part without the key is fine.)
std::optional<error> architecture_differs(const model_part& first, const model_part& p, std::uint32_t part,
                                          std::uint32_t n_parts) {
    constexpr std::string_view key = "general.architecture";
    const kv* here = p.view.find(key);
    if (here == nullptr) return std::nullopt;
    const kv* ref = first.view.find(key);
    auto shown = [](const kv* k) -> std::string {
        if (k == nullptr) return "absent";
        auto s = k->get<std::string_view>();
        if (!s) return "of type " + std::string(to_string(k->type));
        constexpr std::size_t cap = 64;  // an architecture is a short identifier; do not echo a huge string
        // Built by appending: GCC 12 at -O2/-O3 reports a false -Wrestrict on `"'" + std::string`.
        std::string out(1, '\'');
        out += escape(s->substr(0, cap));
        out += s->size() > cap ? "...'" : "'";
        return out;
    };
    auto text = [](const kv* k) -> std::optional<std::string_view> {
        if (k == nullptr) return std::nullopt;
        auto s = k->get<std::string_view>();
        return s ? std::optional<std::string_view>(*s) : std::nullopt;
    };
    const auto a = text(here), b = text(ref);
    if (a && b && *a == *b) return std::nullopt;
    error e = split_error(errc::split_arch_mismatch, p, part, n_parts, 1, part + 1);
    e.subject = std::string(key);
    e.offset = here->offset;
    e.detail = "is " + shown(here) + " in part " + std::to_string(part + 1) + " but " + shown(ref) + " in part 1";
    return e;
}

}  // namespace

std::uint64_t model_part::trailing_bytes() const noexcept {
    // Everything past the padded end of the data section (for a tensor-less file: past the table).
    // A file that ends inside the last tensor's padding has none.
    const std::uint64_t size = view.file_size();
    const std::uint64_t start = view.data_offset();
    if (size <= start) return 0;
    const std::uint64_t after = size - start;
    return after > view.data_size() ? after - view.data_size() : 0;
}

result<model> model::open(const std::filesystem::path& path, const open_options& options) noexcept {
    file_opener files(options.mode);
    try {
        return open(files, path.string(), options);
    } catch (...) {  // path.string(): the copy of the path
        return unexpected(out_of_memory_error("opening the model"));
    }
}

result<model> model::open(source_opener& opener, const std::string& entry_location,
                          const open_options& options) noexcept {
    const std::string& path = entry_location;
    try {
        model m;
        const head_options ho = opener.head(options.caps);
        // The entry first, alone: until its split.count is read nothing says it belongs to a set.
        auto src = opener.open(path);
        if (!src) return unexpected(located(std::move(src).error(), path, 0, 1));
        auto first = as_part(fetch_head(**src, ho), path, 0, 1);
        if (!first) return unexpected(std::move(first).error());
        m.parts_.push_back(std::move(*first));

        auto count = split_key(m.parts_[0], "split.count", 1, 0, 1);
        if (!count) return unexpected(std::move(count).error());
        if (*count <= 1) {  // a single model, whatever its name says
            m.tensors_.reserve(m.parts_[0].view.tensors().size());
            for (const tensor_info& t : m.parts_[0].view.tensors()) m.tensors_.push_back({&t, 0});
            return m;
        }

        // split.count > 1: the entry must be part 1, and named so that the other parts can be found.
        const std::uint64_t n = *count;
        const auto n32 = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, std::numeric_limits<std::uint32_t>::max()));
        const model_part& entry = m.parts_[0];
        const auto info = split_file_info(opener.file_name(path));
        {
            auto no = required_split_key(entry, "split.no", 0, n32);
            if (!no) return unexpected(std::move(no).error());
            if (*no != 0) {
                const kv* no_kv = entry.view.find("split.no");
                if (*no >= n) {
                    return unexpected(key_error("split.no",
                                                "is " + std::to_string(*no) + ", not below split.count=" + std::to_string(n),
                                                entry, 0, n32, no_kv->offset));
                }
                error e = split_error(errc::split_not_first, entry, static_cast<std::uint32_t>(*no), n32, 0, *no);
                e.offset = no_kv->offset;
                if (info && n <= max_named_parts)
                    e.detail = opener.sibling(path, split_file_name(info->prefix, 0, n32));
                return unexpected(std::move(e));
            }
        }
        if (!info || info->index != 0 || n > max_named_parts) {
            error e = split_error(errc::split_bad_name, entry, 0, n32, n, 0);
            if (n <= max_named_parts) e.detail = split_file_name(info ? info->prefix : "<name>", 0, n32);
            return unexpected(std::move(e));
        }
        if (info->count != n) {
            error e = split_error(errc::split_count_mismatch, entry, 0, n32, info->count, n);
            e.offset = entry.view.find("split.count")->offset;
            e.detail = "(from the file name)";
            return unexpected(std::move(e));
        }

        m.parts_.reserve(n32);
        std::vector<std::string> locations;
        locations.reserve(n32 - 1);
        for (std::uint32_t i = 1; i < n32; ++i) locations.push_back(opener.sibling(path, split_file_name(info->prefix, i, n32)));
        auto heads = opener.fetch_heads(locations, ho);
        if (heads.size() != locations.size()) throw std::bad_alloc();
        for (std::uint32_t i = 1; i < n32; ++i) {
            auto part = as_part(std::move(heads[i - 1]), locations[i - 1], i, n32);
            if (!part) return unexpected(std::move(part).error());
            m.parts_.push_back(std::move(*part));
            const model_part& p = m.parts_[i];
            auto c = required_split_key(p, "split.count", i, n32);
            if (!c) return unexpected(std::move(c).error());
            if (*c != n) {
                error e = split_error(errc::split_count_mismatch, p, i, n32, n, *c);
                e.offset = p.view.find("split.count")->offset;
                e.detail = "(from part 1)";
                return unexpected(std::move(e));
            }
            auto no = required_split_key(p, "split.no", i, n32);
            if (!no) return unexpected(std::move(no).error());
            if (*no != i) {
                error e = split_error(errc::split_no_mismatch, p, i, n32, i, *no);
                e.offset = p.view.find("split.no")->offset;
                return unexpected(std::move(e));
            }
            if (auto e = architecture_differs(m.parts_[0], p, i, n32)) return unexpected(std::move(*e));
        }

        std::size_t total = 0;
        for (const model_part& p : m.parts_) total += p.view.tensors().size();
        auto want = required_split_key(m.parts_[0], "split.tensors.count", 0, n32);
        if (!want) return unexpected(std::move(want).error());
        if (*want != total) {
            error e = split_error(errc::split_tensor_count_mismatch, m.parts_[0], 0, n32, *want, total);
            e.offset = m.parts_[0].view.find("split.tensors.count")->offset;
            return unexpected(std::move(e));
        }

        m.tensors_.reserve(total);
        m.tensor_index_.reset(total);
        auto name_of = [&m](std::uint32_t k) { return m.tensors_[k].info->name; };
        for (std::uint32_t p = 0; p < m.parts_.size(); ++p) {
            for (const tensor_info& t : m.parts_[p].view.tensors()) {
                const auto id = static_cast<std::uint32_t>(m.tensors_.size());
                const std::int64_t prev = m.tensor_index_.insert(t.name, id, name_of);
                if (prev >= 0) {
                    error e = split_error(errc::split_duplicate_tensor, m.parts_[p], p, n32,
                                          m.tensors_[static_cast<std::size_t>(prev)].part + 1, p + 1);
                    e.subject = std::string(t.name);
                    e.offset = t.info_offset;
                    return unexpected(std::move(e));
                }
                m.tensors_.push_back({&t, p});
            }
        }
        return m;
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("opening the model"));
    }
}

std::uint64_t model::file_bytes() const noexcept {
    std::uint64_t n = 0;
    for (const model_part& p : parts_) n += p.view.file_size();
    return n;
}

const file_view& model::empty_view() noexcept {
    static const file_view v;
    return v;
}

const std::filesystem::path& model::empty_path() noexcept {
    static const std::filesystem::path p;
    return p;
}

bool model::complete() const noexcept {
    for (const model_part& p : parts_)
        if (!p.view.complete()) return false;
    return true;
}

result<void> model::require_complete() const noexcept {
    for (std::size_t i = 0; i < parts_.size(); ++i) {
        const model_part& p = parts_[i];
        if (p.view.complete()) continue;
        error e;
        e.code = errc::model_incomplete;
        e.where = section::data;
        e.expected = p.view.file_size();
        e.found = p.file.bytes().size();
        if (parts_.size() > 1) {
            e.part = static_cast<std::uint32_t>(i + 1);
            e.n_parts = static_cast<std::uint32_t>(parts_.size());
        }
        try {
            e.file = p.path.string();
        } catch (...) {  // the code says what matters; the path is a courtesy
        }
        return unexpected(std::move(e));
    }
    return {};
}

const tensor_ref* model::find_tensor(std::string_view name) const& noexcept {
    if (parts_.empty()) return nullptr;
    if (parts_.size() == 1) {
        const tensor_info* t = parts_[0].view.find_tensor(name);
        return t == nullptr ? nullptr : &tensors_[static_cast<std::size_t>(t - parts_[0].view.tensors().data())];
    }
    const std::int64_t i = tensor_index_.find(name, [this](std::uint32_t k) { return tensors_[k].info->name; });
    return i < 0 ? nullptr : &tensors_[static_cast<std::size_t>(i)];
}

}  // namespace minfer::gguf
