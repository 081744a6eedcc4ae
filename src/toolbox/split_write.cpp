#include "minfer/toolbox/split_write.hpp"

#include <filesystem>

#include "minfer/gguf_write/model_source.hpp"

namespace minfer::toolbox {

std::optional<split_write_failure> write_split(const gguf::model& m, const gguf::split_plan& plan,
                                               const std::vector<std::string>& targets, const split_write_options& o) {
    auto src = gguf::model_source::open(m);
    if (!src) return split_write_failure{std::move(src).error(), std::nullopt, {}, {}};
    const std::uint32_t n_parts = plan.part_count();
    if (o.overwrite && n_parts > 1) {
        std::error_code ec;
        std::filesystem::remove(targets[0], ec);  // a regular file (checked by the caller), a link's target
    }
    std::vector<std::string> written;
    std::uint64_t before = 0;
    const std::uint64_t total = plan.total_bytes();
    for (std::uint32_t k = 0; k < n_parts; ++k) {
        const std::uint32_t i = n_parts > 1 ? (k + 1) % n_parts : 0;  // 2, 3, …, N, then 1
        gguf::write_options wo;
        wo.file.replace_existing = o.overwrite;  // without it the kernel refuses a part that appeared since
        if (o.progress)
            wo.progress = [&o, before, total](std::uint64_t done, std::uint64_t) { o.progress(before + done, total); };
        auto w = plan.part_writer(m, *src, i);
        gguf::result<void> r = w ? w->write(targets[i], wo) : gguf::result<void>(gguf::unexpected(w.error()));
        if (!r) {
            split_write_failure f{std::move(r).error(), i, {}, {}};
            for (const std::string& p : written) {
                std::error_code ec;
                if (std::filesystem::remove(p, ec)) {
                    f.removed.push_back(p);
                } else if (ec) {
                    f.not_removed.emplace_back(p, ec);
                }
            }
            return f;
        }
        written.push_back(targets[i]);
        before += plan.parts()[i].file_size;
    }
    return std::nullopt;
}

}  // namespace minfer::toolbox
