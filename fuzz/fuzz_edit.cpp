// The rewrite engine and the in-place planner on whatever the loader accepts. The input is a GGUF
// file; when it opens, its metadata is edited (a name set, chat templates replaced) and:
//  - the rewritten file must plan and serialise (the loader accepted the input, the changes are
//    valid, so the writer may refuse nothing), parse again, and hold every tensor's bytes unchanged;
//  - when an in-place edit fits, it is applied to the file, which must reopen with the new name,
//    the same data offset and the same tensor bytes.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "fuzz_common.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/rewrite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    namespace fs = std::filesystem;
    const fs::path file = fuzz::input_file("edit", "m.gguf", data, size);
    if (file.empty()) return 0;
    std::vector<std::vector<std::byte>> tensor_bytes;
    std::uint64_t data_offset = 0;
    gguf::in_place_edit planned;
    gguf::model planned_from;  // apply_in_place consumes the model the edit was planned from
    bool fits = false;
    {
        auto m = gguf::model::open(file);
        if (!m) return 0;
        auto src = gguf::model_source::open(*m);
        fuzz::require(src.has_value());
        for (const auto& t : m->tensors()) {
            const auto b = m->tensor_data(t);
            tensor_bytes.emplace_back(b.begin(), b.end());
        }
        data_offset = m->metadata().data_offset();
        const std::vector<gguf::metadata_change> changes{
            gguf::metadata_change::set_string("general.name", "fuzzed"),
            gguf::metadata_change::erase_prefix("tokenizer.chat_template"),
            gguf::metadata_change::set_string("tokenizer.chat_template", "{{ x }}"),
        };
        std::vector<gguf::tensor_ref> refs(m->tensors().begin(), m->tensors().end());
        auto w = gguf::rewrite(*m, *src, changes, refs);
        fuzz::require(w.has_value());
        auto out = w->to_bytes();
        if (!out) {
            // Only a size no memory can hold may stop it.
            fuzz::require(out.error().code == gguf::errc::size_overflow ||
                          out.error().code == gguf::errc::out_of_memory);
            return 0;
        }
        auto again = gguf::file_view::parse(*out);
        fuzz::require(again.has_value());
        fuzz::require(again->get<std::string_view>("general.name").value_or("") == "fuzzed");
        fuzz::require(again->tensors().size() == tensor_bytes.size());
        for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
            const auto b = again->tensor_data(again->tensors()[i]);
            fuzz::require(b.size() == tensor_bytes[i].size());
            fuzz::require(b.empty() || std::memcmp(b.data(), tensor_bytes[i].data(), b.size()) == 0);
        }
        if (m->parts().size() == 1) {
            auto p = gguf::plan_in_place(*m, 0, *w);
            if (p) {
                fuzz::require(p->new_head.size() == data_offset);
                planned = std::move(*p);
                fits = true;
                planned_from = std::move(*m);  // last use of m in this scope
            } else {
                fuzz::require(!p.error().message().empty());
            }
        }
    }
    if (!fits) return 0;
    auto applied = gguf::apply_in_place(planned, std::move(planned_from));
    fuzz::require(applied.has_value());
    auto m = gguf::model::open(file);
    fuzz::require(m.has_value());
    fuzz::require(m->metadata().data_offset() == data_offset);
    fuzz::require(m->get<std::string_view>("general.name").value_or("") == "fuzzed");
    fuzz::require(m->tensors().size() == tensor_bytes.size());
    for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
        const auto b = m->tensor_data(m->tensors()[i]);
        fuzz::require(b.size() == tensor_bytes[i].size());
        fuzz::require(b.empty() || std::memcmp(b.data(), tensor_bytes[i].data(), b.size()) == 0);
    }
    return 0;
}
