#include "minfer/toolbox/edit_steps.hpp"

#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace minfer::toolbox {

namespace fs = std::filesystem;

gguf::result<void> refuse_journal(const fs::path& file) {
    std::error_code ec;
    const fs::path journal = gguf::undo_journal_path(file);
    if (!fs::exists(journal, ec)) return {};
    gguf::error e;
    e.code = gguf::write_codes::journal_present;
    e.file = journal.string();
    return gguf::unexpected(std::move(e));
}

void add_reserve(gguf::metadata_edit_plan& plan, std::uint64_t reserve) {
    if (reserve == 0) return;
    // The array's bytes as stored: element tag u8 (0), u64 count, the zeros.
    std::vector<std::byte> value(12 + static_cast<std::size_t>(reserve));
    const std::uint64_t count = reserve;
    std::memcpy(value.data() + 4, &count, 8);
    plan.changes.push_back(gguf::metadata_change::set_encoded(std::string(gguf::in_place_padding_key),
                                                              gguf::value_type::array, std::move(value)));
}

gguf::result<gguf::in_place_edit> plan_in_place_edit(const gguf::model& m, const gguf::metadata_edit_plan& plan) {
    auto src = gguf::model_source::open(m);
    if (!src) return gguf::unexpected(std::move(src).error());
    std::vector<gguf::tensor_ref> tensors;  // part 1's own tensors
    for (const gguf::tensor_ref& r : m.tensors())
        if (r.part == 0) tensors.push_back(r);
    auto w = gguf::rewrite(m, *src, plan.changes, tensors);
    if (!w) return gguf::unexpected(std::move(w).error());
    return gguf::plan_in_place(m, 0, *w);
}

}  // namespace minfer::toolbox
