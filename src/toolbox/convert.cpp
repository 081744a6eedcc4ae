// toolbox::convert: plan (minfer::convert), lay out (output_parts), stream (tensor_stream), write.
#include "minfer/toolbox/convert.hpp"

#include <memory>
#include <utility>
#include <variant>

#include "minfer/convert/model_plan.hpp"
#include "minfer/convert/tensor_stream.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/toolbox/remote_settings.hpp"
#include "output_parts.hpp"
#include "remote_checkpoint.hpp"

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

// Where a URL's spool goes: beside the output (in it when it is a directory), on its file system.
std::filesystem::path spool_parent(const std::filesystem::path& output) {
    std::error_code ec;
    if (std::filesystem::is_directory(output, ec)) return output;
    return output.parent_path();
}

// The byte ranges of the checkpoint tensors planned tensor `t` reads, by shard file name.
std::vector<detail::shard_range> input_ranges(const cv::model_plan& p, const cv::planned_tensor& t) {
    std::vector<detail::shard_range> ranges;
    for (std::uint32_t i : t.inputs) {
        const cv::checkpoint_tensor& in = p.weights->tensors()[i];
        const cv::safetensors_file& shard = p.weights->shards()[in.shard];
        ranges.push_back({std::filesystem::path(shard.path()).filename().string(), shard.data_offset() + in.entry->data_begin, in.entry->n_bytes()});
    }
    return ranges;
}

// A remote tensor's inputs, fetched on the first fill and given back when its last byte is produced
// (or when the source goes, whichever is first).
class input_lease {
public:
    input_lease(detail::remote_checkpoint& remote, std::vector<detail::shard_range> ranges)
        : remote_(remote), ranges_(std::move(ranges)) {}
    ~input_lease() { release(); }
    input_lease(const input_lease&) = delete;
    input_lease& operator=(const input_lease&) = delete;

    gguf::result<void> acquire() {
        if (held_ || ranges_.empty()) return {};
        if (auto r = remote_.fetch(ranges_); !r) return r;
        held_ = true;
        return {};
    }
    void release() noexcept {
        if (!held_) return;
        remote_.release(ranges_);
        held_ = false;
    }

private:
    detail::remote_checkpoint& remote_;
    std::vector<detail::shard_range> ranges_;
    bool held_ = false;
};

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
    // A URL: a spool directory made of its files (remote_checkpoint.hpp); it outlives everything below
    // that reads it (declared first, destroyed last).
    std::unique_ptr<detail::remote_checkpoint> remote;
    std::filesystem::path input = rq.input;
    if (names_remote_model(rq.input.string())) {
        remote = std::make_unique<detail::remote_checkpoint>(rq.remote);
        auto dir = remote->open(rq.input.string(), spool_parent(rq.output));
        if (!dir) return unexpected(std::move(dir).error());
        input = *dir;
    }
    auto planned = cv::plan_conversion(input, options);
    if (!planned) {
        gguf::error e = std::move(planned).error();
        if (remote) remote->relocate(e);
        return unexpected(std::move(e));
    }
    if (remote) remote->detach();  // read: the spool's names go, its open shards stay
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
        if (remote && !t.inputs.empty()) {
            detail::remote_checkpoint* rc = remote.get();
            o.source = [plan, i, n = t.n_bytes, rc] {
                auto stream = std::make_shared<cv::tensor_stream>(*plan, i);
                auto lease = std::make_shared<input_lease>(*rc, input_ranges(*plan, plan->tensors[i]));
                return gguf::tensor_source::callback(
                    n, [plan, stream, lease, n](std::uint64_t offset, std::span<std::byte> out) -> gguf::result<void> {
                        if (auto r = lease->acquire(); !r) return r;
                        auto r = stream->fill(offset, out);
                        if (!r || offset + out.size() >= n) lease->release();  // its bytes are all produced
                        return r;
                    });
            };
        } else {
            o.source = [plan, i, n = t.n_bytes] {
                auto stream = std::make_shared<cv::tensor_stream>(*plan, i);
                return gguf::tensor_source::callback(
                    n, [plan, stream](std::uint64_t offset, std::span<std::byte> out) { return stream->fill(offset, out); });
            };
        }
        tensors.push_back(std::move(o));
    }

    detail::output_request orq;
    orq.output = rq.output;
    orq.split_max_bytes = rq.split_max_bytes;
    orq.split_max_tensors = rq.split_max_tensors;
    orq.overwrite = rq.overwrite;
    if (plan->weights && !remote)  // a spool's shards are no file the output could name
        for (const cv::safetensors_file& shard : plan->weights->shards()) orq.inputs.push_back(shard.path());
    auto layout = detail::lay_out(tensors, [&plan](gguf::writer& w) { put_keys(w, *plan); }, orq);
    if (!layout) return unexpected(std::move(layout).error());
    for (const detail::laid_out_part& part : layout->parts)
        report.outputs.push_back({part.path, part.file_size, part.tensor_count});
    if (remote) {
        // the checkpoint tensors the plan reads (each is the input of one output tensor: read once)
        std::uint64_t planned_bytes = 0;
        for (const cv::planned_tensor& t : plan->tensors)
            for (std::uint32_t in : t.inputs) planned_bytes += plan->weights->tensors()[in].entry->n_bytes();
        report.fetched = remote->totals();
        report.fetched.planned_bytes = planned_bytes;
        if (rq.dry_run) return report;
        if (auto r = remote->start_tensors(planned_bytes); !r) return unexpected(std::move(r).error());
    }
    if (rq.dry_run) return report;
    if (auto r = detail::write_out(*layout, rq.overwrite, events.progress); !r) return unexpected(std::move(r).error());
    if (remote) report.fetched = remote->totals();
    report.written = true;
    return report;
}

}  // namespace minfer::toolbox
