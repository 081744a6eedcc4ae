// model::open: resolve the parts, map and verify each, check the split keys, merge the tensor index.
#include <cerrno>
#include <new>

#include "minfer/gguf/model.hpp"
#include "name_index_impl.hpp"
#include "minfer/gguf/split.hpp"

namespace minfer::gguf {
namespace {

error located(error e, const std::filesystem::path& path, std::uint32_t part, std::uint32_t n_parts) {
    if (e.file.empty()) e.file = path.string();
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
    e.subject = p.path.string();
    e.expected = expected;
    e.found = found;
    return located(std::move(e), p.path, part, n_parts);
}

// An integer split.* key, or `fallback` when absent.
result<std::uint64_t> split_key(const model_part& p, std::string_view key, std::uint64_t fallback, std::uint32_t part,
                                std::uint32_t n_parts) {
    const kv* e = p.view.find(key);
    if (e == nullptr) return fallback;
    auto v = e->as_u64();
    if (v) return *v;
    error err;
    err.code = errc::split_bad_key;
    err.where = section::split;
    err.offset = e->offset;
    err.subject = std::string(key);
    err.detail = "has type " + std::string(to_string(e->type)) + ", expected a non-negative integer";
    return unexpected(located(std::move(err), p.path, part, n_parts));
}

result<model_part> open_part(const std::filesystem::path& path, const open_options& options, std::uint32_t part,
                             std::uint32_t n_parts) {
    auto file = mapped_file::open(path, options.mode);
    if (!file) {
        error e = std::move(file).error();
        if (part > 0 && (e.sys_errno == ENOENT || e.sys_errno == EACCES)) {
            e.code = errc::split_part_missing;
            e.where = section::split;
            e.subject = path.string();
        }
        return unexpected(located(std::move(e), path, part, n_parts));
    }
    model_part p{path, std::move(*file), {}};
    auto view = file_view::parse(p.file.bytes(), options.caps);
    if (!view) return unexpected(located(std::move(view).error(), path, part, n_parts));
    p.view = std::move(*view);
    return p;
}

}  // namespace

result<model> model::open(const std::filesystem::path& path, const open_options& options) noexcept {
    try {
        auto paths = resolve_splits(path);
        if (!paths) return unexpected(std::move(paths).error());
        const auto n_named = static_cast<std::uint32_t>(paths->size());
        const bool split_named = split_file_info(path.filename().string()).has_value();

        model m;
        m.parts_.reserve(n_named);
        auto first = open_part((*paths)[0], options, 0, n_named);
        if (!first) return unexpected(std::move(first).error());
        m.parts_.push_back(std::move(*first));

        auto count = split_key(m.parts_[0], "split.count", 1, 0, n_named);
        if (!count) return unexpected(std::move(count).error());
        if (*count != n_named) {
            error e = split_error(errc::split_count_mismatch, m.parts_[0], 0, n_named, n_named, *count);
            e.detail = split_named ? "(from the file name)"
                                   : "(the file name is not of the form <name>-00001-of-0000N.gguf)";
            return unexpected(std::move(e));
        }
        for (std::uint32_t i = 0; i < n_named; ++i) {
            if (i > 0) {
                auto part = open_part((*paths)[i], options, i, n_named);
                if (!part) return unexpected(std::move(part).error());
                m.parts_.push_back(std::move(*part));
                auto c = split_key(m.parts_[i], "split.count", 1, i, n_named);
                if (!c) return unexpected(std::move(c).error());
                if (*c != n_named) {
                    error e = split_error(errc::split_count_mismatch, m.parts_[i], i, n_named, n_named, *c);
                    e.detail = "(from part 1)";
                    return unexpected(std::move(e));
                }
            }
            auto no = split_key(m.parts_[i], "split.no", 0, i, n_named);
            if (!no) return unexpected(std::move(no).error());
            if (*no != i) return unexpected(split_error(errc::split_no_mismatch, m.parts_[i], i, n_named, i, *no));
        }

        std::size_t total = 0;
        for (const model_part& p : m.parts_) total += p.view.tensors().size();
        if (n_named > 1) {
            const kv* tc = m.parts_[0].view.find("split.tensors.count");
            if (tc == nullptr) {
                error e = split_error(errc::split_bad_key, m.parts_[0], 0, n_named, 0, 0);
                e.subject = "split.tensors.count";
                e.detail = "is missing from part 1";
                return unexpected(std::move(e));
            }
            auto want = split_key(m.parts_[0], "split.tensors.count", 0, 0, n_named);
            if (!want) return unexpected(std::move(want).error());
            if (*want != total) {
                error e = split_error(errc::split_tensor_count_mismatch, m.parts_[0], 0, n_named, *want, total);
                e.offset = tc->offset;
                e.subject.clear();
                return unexpected(std::move(e));
            }
        }

        m.tensors_.reserve(total);
        if (m.parts_.size() == 1) {  // one file: its own index already maps names, no merged one needed
            for (const tensor_info& t : m.parts_[0].view.tensors()) m.tensors_.push_back({&t, 0});
            return m;
        }
        m.tensor_index_.reset(total);
        auto name_of = [&m](std::uint32_t k) { return m.tensors_[k].info->name; };
        for (std::uint32_t p = 0; p < m.parts_.size(); ++p) {
            for (const tensor_info& t : m.parts_[p].view.tensors()) {
                const auto id = static_cast<std::uint32_t>(m.tensors_.size());
                const std::int64_t prev = m.tensor_index_.insert(t.name, id, name_of);
                if (prev >= 0) {
                    error e = split_error(errc::split_duplicate_tensor, m.parts_[p], p, n_named,
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
        error e;
        e.code = errc::out_of_memory;
        e.file = path.string();
        e.detail = "opening the model";
        return unexpected(std::move(e));
    }
}

std::uint64_t model::file_bytes() const noexcept {
    std::uint64_t n = 0;
    for (const model_part& p : parts_) n += p.file.size();
    return n;
}

const tensor_ref* model::find_tensor(std::string_view name) const& noexcept {
    if (parts_.size() == 1) {
        const tensor_info* t = parts_[0].view.find_tensor(name);
        return t == nullptr ? nullptr : &tensors_[static_cast<std::size_t>(t - parts_[0].view.tensors().data())];
    }
    const std::int64_t i = tensor_index_.find(name, [this](std::uint32_t k) { return tensors_[k].info->name; });
    return i < 0 ? nullptr : &tensors_[static_cast<std::size_t>(i)];
}

}  // namespace minfer::gguf
