// The model-writing commands' shared wording (model_output.hpp).
#include "model_output.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "plural.hpp"
#include "sizes.hpp"
#include "usage_error.hpp"

namespace minfer::cli {

std::optional<int> read_split_limits(const std::string& max_size, const std::string& max_tensors,
                                     std::optional<std::uint64_t>& bytes, std::optional<std::uint64_t>& tensors) {
    if (!max_tensors.empty()) {
        const auto n = toolbox::parse_count(max_tensors);
        if (!n) return usage_error(fmt::format("--split-max-tensors: {} is not a whole number", max_tensors));
        if (*n == 0) return usage_error("--split-max-tensors must be at least 1");
        tensors = *n;
    }
    if (!max_size.empty()) {
        std::string why;
        const auto n = toolbox::parse_size(max_size, why);
        if (!n) return usage_error(fmt::format("--split-max-size: {}: {}", max_size, why));
        bytes = *n;
    }
    return std::nullopt;
}

std::string shape_text(std::span<const std::int64_t> ne) {
    std::string s = "[";
    for (std::size_t i = 0; i < ne.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(ne[i]);
    }
    return s + "]";
}

void outputs_json(json_writer& j, std::span<const toolbox::output_file> outputs) {
    j.key("outputs");
    j.begin_array();
    for (const toolbox::output_file& o : outputs) {
        j.begin_object(true);
        j.key("path");
        j.string(o.path.string());
        j.key("file_size");
        j.number(o.file_size);
        j.key("tensor_count");
        j.number(std::uint64_t{o.tensor_count});
        j.end_object();
    }
    j.end_array();
}

void outputs_text(out_buffer& out, std::span<const toolbox::output_file> outputs, bool written) {
    for (const toolbox::output_file& o : outputs)
        out.print("{} {}: {}, {} bytes ({})\n", written ? "Wrote" : "Would write", gguf::escape(o.path.string()),
                  plural(o.tensor_count, "tensor", "tensors"), o.file_size, mib_text(o.file_size));
}

std::optional<int> output_refusal(const gguf::error& e, std::string_view is_an_input) {
    if (gguf::is_output_exists(e))
        return usage_error(fmt::format("{} already exists (use --force to replace it)", gguf::escape(e.file)));
    if (e.code == gguf::errc::io_error && e.sys_errno == EINVAL && e.detail == "the output is one of the input files")
        return usage_error(fmt::format("the output {} is {}", gguf::escape(e.file), is_an_input));
    return std::nullopt;
}

}  // namespace minfer::cli
