// toolbox::convert: plan (minfer::convert), lay out (output_parts), stream (tensor_stream), write.
#include "minfer/toolbox/convert.hpp"

#include <memory>
#include <utility>
#include <variant>

#include "minfer/convert/model_plan.hpp"
#include "minfer/convert/tensor_stream.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "output_parts.hpp"

namespace minfer::toolbox {
namespace {

using gguf::unexpected;
namespace cv = minfer::convert;

std::string_view file_type_name(cv::conversion_file_type t) {
    switch (t) {
        case cv::conversion_file_type::all_f32: return "F32";
        case cv::conversion_file_type::mostly_f16: return "F16";
        case cv::conversion_file_type::mostly_bf16: return "BF16";
        case cv::conversion_file_type::mostly_q8_0: return "Q8_0";
    }
    return "";
}

// The plan's keys into part 1's writer, in order, with their GGUF types (vocab_keys.hpp).
void put_keys(gguf::writer& w, const cv::model_plan& p) {
    for (const cv::vocab_key& k : p.keys) {
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::string>) w.set_string(k.name, v);
                else if constexpr (std::is_same_v<T, std::uint32_t>) w.set_u32(k.name, v);
                else if constexpr (std::is_same_v<T, bool>) w.set_bool(k.name, v);
                else if constexpr (std::is_same_v<T, float>) w.set_f32(k.name, v);
                else if constexpr (std::is_same_v<T, std::int32_t>) w.set_i32(k.name, v);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>) w.set_strings(k.name, std::span<const std::string>(v));
                else if constexpr (std::is_same_v<T, std::vector<std::int32_t>>)
                    w.set_array(k.name, gguf::value_type::i32, std::span<const std::int32_t>(v));
                else if constexpr (std::is_same_v<T, cv::vocab_array>) {
                    switch (v) {
                        case cv::vocab_array::tokens: w.set_strings(k.name, std::span<const std::string>(p.tokens)); break;
                        case cv::vocab_array::scores:
                            w.set_array(k.name, gguf::value_type::f32, std::span<const float>(p.scores));
                            break;
                        case cv::vocab_array::token_types:
                            w.set_array(k.name, gguf::value_type::i32, std::span<const std::int32_t>(p.token_types));
                            break;
                    }
                }
            },
            k.value);
    }
}

}  // namespace

gguf::result<convert_report> convert(const convert_request& rq, const convert_events& events) {
    cv::conversion_options options;
    const auto outtype = cv::output_type_from_name(rq.outtype);
    if (!outtype) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.subject = "outtype";
        e.detail = "'" + rq.outtype + "' is not f32, f16, bf16, q8_0 or auto";
        return unexpected(std::move(e));
    }
    options.outtype = *outtype;
    options.model_name = rq.model_name;
    options.pre = rq.pre;
    options.vocab_only = rq.vocab_only;
    auto planned = cv::plan_conversion(rq.input, options);
    if (!planned) return unexpected(std::move(planned).error());
    auto plan = std::make_shared<const cv::model_plan>(*std::move(planned));

    convert_report report;
    report.architecture = plan->config.architecture_name;
    report.gguf_architecture = std::string(cv::gguf_name(plan->config.arch));
    report.file_type = std::string(file_type_name(plan->file_type));
    report.warnings = plan->warnings;
    if (plan->weights)
        for (const cv::checkpoint_tensor& t : plan->weights->tensors()) report.input_bytes += t.entry->n_bytes();

    std::vector<detail::output_tensor> tensors;
    tensors.reserve(plan->tensors.size());
    for (std::size_t i = 0; i < plan->tensors.size(); ++i) {
        const cv::planned_tensor& t = plan->tensors[i];
        converted_tensor c;
        c.name = t.name;
        if (!t.inputs.empty()) {
            const cv::checkpoint_tensor& in = plan->weights->tensors()[t.inputs.front()];
            c.source_name = std::string(in.name());
            c.source_dtype = std::string(cv::to_string(in.entry->dtype));
        }
        c.type = t.type;
        c.ne = t.ne;
        c.n_bytes = t.n_bytes;
        report.output_tensor_bytes += t.n_bytes;
        report.tensors.push_back(std::move(c));

        detail::output_tensor o;
        o.name = t.name;
        o.type = t.type;
        o.ne = t.ne;
        o.n_bytes = t.n_bytes;
        o.source = [plan, i, n = t.n_bytes] {
            auto stream = std::make_shared<cv::tensor_stream>(*plan, i);
            return gguf::tensor_source::callback(
                n, [plan, stream](std::uint64_t offset, std::span<std::byte> out) { return stream->fill(offset, out); });
        };
        tensors.push_back(std::move(o));
    }

    detail::output_request orq;
    orq.output = rq.output;
    orq.split_max_bytes = rq.split_max_bytes;
    orq.split_max_tensors = rq.split_max_tensors;
    orq.overwrite = rq.overwrite;
    if (plan->weights)
        for (const cv::safetensors_file& shard : plan->weights->shards()) orq.inputs.push_back(shard.path());
    auto layout = detail::lay_out(tensors, [&plan](gguf::writer& w) { put_keys(w, *plan); }, orq);
    if (!layout) return unexpected(std::move(layout).error());
    for (const detail::laid_out_part& part : layout->parts)
        report.outputs.push_back({part.path, part.file_size, part.tensor_count});
    if (rq.dry_run) return report;
    if (auto r = detail::write_out(*layout, rq.overwrite, events.progress); !r) return unexpected(std::move(r).error());
    report.written = true;
    return report;
}

}  // namespace minfer::toolbox
