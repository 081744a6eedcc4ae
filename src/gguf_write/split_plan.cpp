// split_plan: the greedy grouping, with each part's size computed incrementally from the same
// numbers plan.hpp uses (the metadata's size comes from rewrite() + make_plan() itself; each tensor
// adds its table record and its padded bytes; the table end is padded to the alignment once a part
// holds a tensor). tests/unit/test_split_plan.cpp checks every part against make_plan().
#include "minfer/gguf_write/split_plan.hpp"
#include "errors.hpp"

#include <limits>
#include <new>
#include <utility>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace minfer::gguf {
namespace {
using detail::oom;

constexpr std::string_view key_no = "split.no";
constexpr std::string_view key_count = "split.count";
constexpr std::string_view key_tensors = "split.tensors.count";

error bad_option(std::string_view name, const char* why) {
    error e;
    e.code = errc::bad_value_text;
    e.subject = std::string(name);
    e.detail = why;
    return e;
}

// The changes that turn the model's metadata into part `part`'s. A re-split set's own split keys go
// first, so the new ones are appended last in llama-gguf-split's order; a later part keeps nothing
// of the model's metadata but general.alignment (see split_plan.hpp for why).
std::vector<metadata_change> part_changes(std::uint32_t part, std::uint32_t count, std::int32_t total,
                                          const kv* alignment) {
    std::vector<metadata_change> c;
    if (part == 0) {
        c.push_back(metadata_change::erase(std::string(key_no)));
        c.push_back(metadata_change::erase(std::string(key_count)));
        c.push_back(metadata_change::erase(std::string(key_tensors)));
    } else {
        c.push_back(metadata_change::erase_prefix(""));  // every key
        if (alignment != nullptr) {
            // The loader accepted it, so it is a u32 scalar: its payload is the 4 stored bytes.
            c.push_back(metadata_change::set_encoded(std::string(alignment->key), alignment->type,
                                                     {alignment->payload.begin(), alignment->payload.end()}));
        }
    }
    c.push_back(metadata_change::set_u16(std::string(key_no), static_cast<std::uint16_t>(part)));
    c.push_back(metadata_change::set_i32(std::string(key_tensors), total));
    c.push_back(metadata_change::set_u16(std::string(key_count), static_cast<std::uint16_t>(count)));
    return c;
}

// The size of a part holding no tensor: header and metadata (the split keys' values do not change
// their size, so part 1 of 2 stands for every part 1 and part 2 of 2 for every later part).
result<plan> metadata_plan(const model& m, std::uint32_t part, std::int32_t total, const kv* alignment) {
    const std::vector<metadata_change> changes = part_changes(part, 2, total, alignment);
    const model_source none;  // no tensor is added: never read
    auto w = rewrite(m, none, changes, {});
    if (!w) return unexpected(std::move(w).error());
    return w->make_plan();
}

// A tensor's record in the table: name (u64 length + bytes), n_dims, ne[n_dims], type, offset.
std::uint64_t table_record_bytes(const tensor_info& t) noexcept {
    return 8 + t.name.size() + 4 + 8ull * t.n_dims + 4 + 8;
}

// One part being filled: its size as plan::make would compute it.
struct part_size {
    std::uint64_t metadata_end = 0;  // header + metadata (= the table's start)
    std::uint64_t table = 0;         // the table's bytes
    std::uint64_t data = 0;          // the padded tensor bytes
    std::uint64_t tensors = 0;
    std::uint64_t tensor_bytes = 0;

    // The file size with `t` added, false on overflow.
    bool with(const grouped_tensor& t, std::uint32_t align, std::uint64_t& size, std::uint64_t& table_out,
              std::uint64_t& data_out) const noexcept {
        const std::uint64_t padded = pad_to(t.n_bytes, align);  // n_bytes < 2^63
        if (__builtin_add_overflow(table, t.record_bytes, &table_out)) return false;
        if (__builtin_add_overflow(data, padded, &data_out)) return false;
        std::uint64_t table_end = 0, start = 0;
        if (__builtin_add_overflow(metadata_end, table_out, &table_end)) return false;
        if (__builtin_add_overflow(table_end, align - 1, &start)) return false;
        start &= ~std::uint64_t{align - 1};
        return !__builtin_add_overflow(start, data_out, &size);
    }
    // The file size as it stands (no padding after the table without tensors, as the loader has it).
    std::uint64_t size(std::uint32_t align) const noexcept {
        if (tensors == 0) return metadata_end;
        return pad_to(metadata_end + table, align) + data;
    }
};

}  // namespace

result<std::vector<split_part>> group_into_parts(std::span<const grouped_tensor> tensors,
                                                 const part_grouping& g) noexcept {
    try {
        const std::uint32_t align = g.alignment;
        std::vector<split_part> parts;
        part_size cur;
        cur.metadata_end = g.first_head_bytes;
        std::size_t cur_first = 0;
        auto close = [&](std::size_t next_first) {
            split_part sp;
            sp.first = cur_first;
            sp.count = static_cast<std::size_t>(cur.tensors);
            sp.file_size = cur.size(align);
            sp.tensor_bytes = cur.tensor_bytes;
            sp.oversized = sp.file_size > g.max_bytes;
            parts.push_back(sp);
            cur = part_size{};
            cur.metadata_end = g.later_head_bytes;
            cur_first = next_first;
        };
        auto overflow = [](std::size_t i) {
            error e;
            e.code = errc::data_size_overflow;
            e.index = static_cast<std::int64_t>(i);
            return unexpected(std::move(e));
        };
        if (g.no_tensor_first_split && !tensors.empty()) close(0);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const grouped_tensor& t = tensors[i];
            std::uint64_t size = 0, table = 0, data = 0;
            if (!cur.with(t, align, size, table, data)) return overflow(i);
            // A part that holds a tensor already closes when the next one would break a limit; an
            // empty part takes the tensor whatever its size (it would not fit anywhere else).
            if (cur.tensors > 0 && (cur.tensors + 1 > g.max_tensors || size > g.max_bytes)) {
                close(i);
                if (!cur.with(t, align, size, table, data)) return overflow(i);
            }
            cur.table = table;
            cur.data = data;
            cur.tensors += 1;
            cur.tensor_bytes += t.n_bytes;
        }
        close(tensors.size());
        if (parts.size() > max_split_parts) {
            error e;
            e.code = gguf::write_codes::too_many_parts;
            e.expected = max_split_parts;
            e.found = parts.size();
            return unexpected(std::move(e));
        }
        return parts;
    } catch (...) {
        return unexpected(oom("grouping the parts"));
    }
}

result<split_plan> split_plan::make(const model& m, const split_options& options) noexcept {
    try {
        if (options.max_tensors && *options.max_tensors == 0)
            return unexpected(bad_option("max_tensors", "must be at least 1"));
        if (options.max_bytes && *options.max_bytes == 0)
            return unexpected(bad_option("max_bytes", "must be at least 1"));
        const std::uint64_t max_tensors =
            options.max_tensors ? *options.max_tensors
                                : (options.max_bytes ? std::numeric_limits<std::uint64_t>::max() : default_split_max_tensors);
        const std::uint64_t max_bytes = options.max_bytes.value_or(std::numeric_limits<std::uint64_t>::max());

        const std::span<const tensor_ref> tensors = m.tensors();
        if (tensors.size() > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
            error e;
            e.code = errc::value_out_of_range;
            e.subject = std::string(key_tensors);
            e.expected = static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max());
            e.found = tensors.size();
            return unexpected(std::move(e));
        }
        const auto total = static_cast<std::int32_t>(tensors.size());
        const kv* alignment = m.find(alignment_key);

        auto first_meta = metadata_plan(m, 0, total, alignment);
        if (!first_meta) return unexpected(std::move(first_meta).error());
        auto later_meta = metadata_plan(m, 1, total, alignment);
        if (!later_meta) return unexpected(std::move(later_meta).error());
        const std::uint32_t align = first_meta->alignment();

        split_plan p;
        p.alignment_ = align;
        p.tensor_count_ = tensors.size();
        p.max_bytes_ = options.max_bytes;

        std::vector<grouped_tensor> grouped;
        grouped.reserve(tensors.size());
        for (const tensor_ref& t : tensors) grouped.push_back({table_record_bytes(*t.info), t.info->n_bytes});
        part_grouping g;
        g.first_head_bytes = first_meta->file_size();
        g.later_head_bytes = later_meta->file_size();
        g.alignment = align;
        g.max_tensors = max_tensors;
        g.max_bytes = max_bytes;
        g.no_tensor_first_split = options.no_tensor_first_split;
        auto parts = group_into_parts(grouped, g);
        if (!parts) {
            error e = std::move(parts).error();
            if (e.code == errc::data_size_overflow && e.index >= 0 && static_cast<std::size_t>(e.index) < tensors.size()) {
                e.subject.assign(tensors[static_cast<std::size_t>(e.index)].info->name);
                e.index = -1;  // the subject names it
            }
            return unexpected(std::move(e));
        }
        p.parts_ = std::move(*parts);
        for (const split_part& sp : p.parts_) {
            if (__builtin_add_overflow(p.total_bytes_, sp.file_size, &p.total_bytes_)) {
                error e;
                e.code = errc::data_size_overflow;
                e.detail = "total size of the parts";
                return unexpected(std::move(e));
            }
        }
        return p;
    } catch (...) {
        return unexpected(oom("planning the split"));
    }
}

std::span<const tensor_ref> split_plan::tensors_of(const model& m, std::uint32_t part) const noexcept {
    if (part >= parts_.size()) return {};
    const split_part& sp = parts_[part];
    const std::span<const tensor_ref> all = m.tensors();
    if (sp.first > all.size() || sp.count > all.size() - sp.first) return {};  // another model
    return all.subspan(sp.first, sp.count);
}

std::string split_plan::part_name(std::string_view prefix, std::uint32_t part) const {
    return split_file_name(prefix, part, part_count());
}

result<writer> split_plan::part_writer(const model& m, const model_source& src, std::uint32_t part) const noexcept {
    if (part >= parts_.size()) {
        error e;
        e.code = errc::index_out_of_range;
        e.expected = parts_.size();
        e.found = part;
        return unexpected(std::move(e));
    }
    try {
        const std::vector<metadata_change> changes =
            part_changes(part, part_count(), static_cast<std::int32_t>(tensor_count_), m.find(alignment_key));
        return rewrite(m, src, changes, tensors_of(m, part));
    } catch (...) {
        return unexpected(oom("preparing a split part"));
    }
}

}  // namespace minfer::gguf
