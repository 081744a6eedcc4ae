// The output of prune and assemble as parts (output_parts.hpp).
#include "output_parts.hpp"

#include <cerrno>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

#include "minfer/gguf/split.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/split_plan.hpp"

namespace minfer::toolbox::detail {
namespace {

// The split keys of split_plan's layout (split.no, split.tensors.count, split.count on every part;
// general.alignment repeated on later parts).
void put_head(gguf::writer& w, const put_model_metadata& metadata, const output_request& rq, std::uint32_t part,
              std::uint32_t count, std::uint64_t total, bool split) {
    if (part == 0) {
        metadata(w);
    } else if (rq.alignment) {
        w.set_u32(gguf::alignment_key, *rq.alignment);
    }
    if (split) {
        w.set_u16("split.no", static_cast<std::uint16_t>(part));
        w.set_i32("split.tensors.count", static_cast<std::int32_t>(total));
        w.set_u16("split.count", static_cast<std::uint16_t>(count));
    }
}

}  // namespace

gguf::result<laid_out> lay_out(std::span<const output_tensor> tensors, const put_model_metadata& metadata,
                               const output_request& rq) {
    if ((rq.split_max_bytes && *rq.split_max_bytes == 0) || (rq.split_max_tensors && *rq.split_max_tensors == 0)) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.subject = rq.split_max_bytes && *rq.split_max_bytes == 0 ? "split_max_bytes" : "split_max_tensors";
        e.detail = "must be at least 1";
        return gguf::unexpected(std::move(e));
    }
    if (tensors.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        gguf::error e;
        e.code = gguf::errc::value_out_of_range;
        e.subject = "split.tensors.count";
        return gguf::unexpected(std::move(e));
    }
    struct range {
        std::filesystem::path path;
        std::size_t first = 0, count = 0;
    };
    std::vector<range> ranges;
    const bool split = rq.split_max_bytes.has_value() || rq.split_max_tensors.has_value();
    if (!split) {
        ranges.push_back({rq.output, 0, tensors.size()});
    } else {
        auto head = [&](std::uint32_t part) {
            gguf::writer w;
            put_head(w, metadata, rq, part, 2, tensors.size(), true);
            return w.make_plan();
        };
        auto first = head(0);
        if (!first) return gguf::unexpected(std::move(first).error());
        auto later = head(1);
        if (!later) return gguf::unexpected(std::move(later).error());
        std::vector<gguf::grouped_tensor> grouped;
        grouped.reserve(tensors.size());
        for (const output_tensor& t : tensors) grouped.push_back({8 + t.name.size() + 4 + 8ull * t.ne.size() + 4 + 8, t.n_bytes});
        gguf::part_grouping g;
        g.first_head_bytes = first->file_size();
        g.later_head_bytes = later->file_size();
        g.alignment = first->alignment();
        g.max_tensors = rq.split_max_tensors.value_or(std::numeric_limits<std::uint64_t>::max());
        g.max_bytes = rq.split_max_bytes.value_or(std::numeric_limits<std::uint64_t>::max());
        auto parts = gguf::group_into_parts(grouped, g);
        if (!parts) {
            gguf::error e = std::move(parts).error();
            if (e.index >= 0 && static_cast<std::size_t>(e.index) < tensors.size())
                e.subject = tensors[static_cast<std::size_t>(e.index)].name;
            return gguf::unexpected(std::move(e));
        }
        std::string prefix = rq.output.string();
        if (prefix.ends_with(".gguf")) prefix.resize(prefix.size() - 5);
        const auto count = static_cast<std::uint32_t>(parts->size());
        for (std::uint32_t i = 0; i < count; ++i)
            ranges.push_back({gguf::split_file_name(prefix, i, count), (*parts)[i].first, (*parts)[i].count});
    }

    laid_out out;
    const auto n = static_cast<std::uint32_t>(ranges.size());
    for (std::uint32_t i = 0; i < n; ++i) {
        gguf::writer w;
        put_head(w, metadata, rq, i, n, tensors.size(), split && n > 1);
        for (std::size_t k = ranges[i].first; k < ranges[i].first + ranges[i].count; ++k) {
            const output_tensor& t = tensors[k];
            w.add_tensor(t.name, t.type, t.ne, t.source());
        }
        auto plan = w.make_plan();
        if (!plan) return gguf::unexpected(std::move(plan).error());
        out.parts.push_back({ranges[i].path, plan->file_size(), static_cast<std::uint32_t>(ranges[i].count)});
        out.targets.push_back(ranges[i].path.string());
        out.writers.push_back(std::move(w));
    }
    for (const range& r : ranges) {
        for (const std::filesystem::path& in : rq.inputs) {
            std::error_code ec;
            if (std::filesystem::equivalent(r.path, in, ec) && !ec) {
                gguf::error e;
                e.code = gguf::errc::io_error;
                e.sys_errno = EINVAL;
                e.file = r.path.string();
                e.detail = "the output is one of the input files";
                return gguf::unexpected(std::move(e));
            }
        }
        if (auto checked = gguf::check_output_path(r.path, rq.overwrite); !checked) return gguf::unexpected(std::move(checked).error());
    }
    return out;
}

gguf::result<void> write_out(const laid_out& layout, bool overwrite,
                             const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    split_write_options wo;
    wo.overwrite = overwrite;
    wo.progress = progress;
    if (auto failed = write_parts(layout.writers, layout.targets, wo)) return gguf::unexpected(std::move(failed->error));
    return {};
}

}  // namespace minfer::toolbox::detail
