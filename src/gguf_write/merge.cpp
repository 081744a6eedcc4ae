// merge: check that a model is a split set, list the later parts' keys that merging drops, and
// rewrite it as one file without the split keys.
#include "minfer/gguf_write/merge.hpp"

#include <array>
#include <string_view>
#include <utility>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf_write/rewrite.hpp"

namespace minfer::gguf {
namespace {

constexpr std::array<std::string_view, 3> split_keys{"split.no", "split.count", "split.tensors.count"};

}  // namespace

result<std::vector<merge_warning>> check_merge(const model& m) noexcept {
    try {
        const kv* count = m.find("split.count");
        // model::open accepted the file, so a present split.count is a non-negative integer.
        std::uint64_t n = 0;
        if (count != nullptr) {
            auto v = count->as_u64();
            if (v) n = *v;
        }
        if (n == 0) {
            error e;
            e.code = errc::split_bad_key;
            e.where = section::split;
            e.file = m.path().string();
            e.subject = "split.count";
            e.offset = count == nullptr ? 0 : count->offset;
            e.detail = count == nullptr ? "is absent: the file is not part 1 of a split set"
                                        : "is 0: the file is not part 1 of a split set";
            return unexpected(std::move(e));
        }
        std::vector<merge_warning> warnings;
        const auto parts = m.parts();
        for (std::uint32_t p = 1; p < parts.size(); ++p) {
            for (const kv& k : parts[p].view.metadata()) {
                bool kept = k.key == alignment_key;
                for (std::string_view s : split_keys) kept = kept || k.key == s;
                if (!kept) warnings.push_back({p + 1, std::string(k.key)});
            }
        }
        return warnings;
    } catch (...) {
        return unexpected(out_of_memory_error("checking the split set"));
    }
}

result<writer> merge_writer(const model& m, const model_source& src) noexcept {
    try {
        std::vector<metadata_change> changes;
        for (std::string_view k : split_keys) changes.push_back(metadata_change::erase(std::string(k)));
        return rewrite(m, src, changes, m.tensors());
    } catch (...) {
        return unexpected(out_of_memory_error("preparing the merge"));
    }
}

}  // namespace minfer::gguf
