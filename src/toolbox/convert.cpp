// toolbox::convert: plan (minfer::convert), lay out (output_parts), stream (tensor_stream), write.
#include "minfer/toolbox/convert.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <variant>

#include "minfer/convert/model_metadata.hpp"
#include "minfer/convert/model_plan.hpp"
#include "minfer/convert/tensor_stream.hpp"
#include "minfer/gguf/byte_source.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/remote_settings.hpp"
#include "output_parts.hpp"
#include "quantize_internal.hpp"
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

// The output's path as convert_hf_to_gguf.py names it: in a directory, gguf-py's default name
// (naming_convention: name or basename, size label, finetune, version, the output type); otherwise the
// file name with {ftype}/{outtype} templates filled with the output type.
gguf::result<std::filesystem::path> output_path(const std::filesystem::path& output, const cv::model_plan& p,
                                                const std::string& type_name, bool vocab_only) {
    std::error_code ec;
    if (std::filesystem::is_directory(output, ec)) {
        auto key = [&p](std::string_view name) -> std::optional<std::string> {
            const cv::vocab_key* k = cv::find_key(p.keys, name);
            if (k == nullptr) return std::nullopt;
            const auto* s = std::get_if<std::string>(&k->value);
            return s ? std::optional<std::string>(*s) : std::nullopt;
        };
        const std::string name =
            vocab_only ? cv::naming_convention(key("general.name"), key("general.basename"), key("general.finetune"),
                                               key("general.version"), std::nullopt, std::nullopt, std::string("vocab"))
                       : cv::naming_convention(key("general.name"), key("general.basename"), key("general.finetune"),
                                               key("general.version"), key("general.size_label"), type_name, std::nullopt);
        return output / (name + ".gguf");
    }
    auto filled = cv::fill_templated_filename(output.filename().string(), type_name);
    if (!filled) return unexpected(std::move(filled).error());
    return output.parent_path() / *filled;
}

// The head of the f32 conversion, never written: a byte_source holding the head's bytes and
// claiming the whole file's size, so model::open verifies it as the file would be (a head-only
// model: its tensors' values come from tensor_values).
class head_source final : public gguf::byte_source {
public:
    head_source(std::span<const std::byte> head, std::uint64_t file_size)
        : head_(std::make_unique<std::byte[]>(head.size())), n_(head.size()), size_(file_size) {
        std::copy(head.begin(), head.end(), head_.get());
    }
    std::uint64_t size() const noexcept override { return size_; }
    gguf::result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        return std::span<const std::byte>(head_.get(), static_cast<std::size_t>(std::min<std::uint64_t>(n, n_)));
    }
    // The same bytes prefix() handed out: the view parsed from them stays valid.
    gguf::mapped_file take() noexcept override {
        const std::size_t n = n_;
        n_ = 0;
        return gguf::mapped_file::adopt(std::move(head_), n);
    }
    bool whole() const noexcept override { return false; }

private:
    std::unique_ptr<std::byte[]> head_;
    std::size_t n_;
    std::uint64_t size_;
};

class head_opener final : public gguf::source_opener {
public:
    head_opener(std::vector<std::byte> head, std::uint64_t file_size) : head_(std::move(head)), size_(file_size) {}
    std::string file_name(const std::string& location) const override { return location; }
    std::string sibling(const std::string&, const std::string& name) const override { return name; }
    gguf::head_options head(const gguf::limits& caps) const override {
        gguf::head_options o;
        o.caps = caps;
        o.first_read = head_.size();
        o.max_read = head_.size();
        return o;
    }
    gguf::result<std::unique_ptr<gguf::byte_source>> open(const std::string&) noexcept override {
        try {
            return std::unique_ptr<gguf::byte_source>(std::make_unique<head_source>(head_, size_));
        } catch (...) {
            return unexpected(gguf::out_of_memory_error("the converted model's head"));
        }
    }

private:
    std::vector<std::byte> head_;
    std::uint64_t size_;
};

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

// The f32 conversion's tensors for toolbox::quantize (quantize_internal.hpp's tensor_values): each
// tensor's stream made on first use and dropped after its last row.
struct f32_values {
    std::shared_ptr<const cv::model_plan> plan;
    std::map<std::string, std::size_t, std::less<>> index;
    std::mutex lock;
    std::map<std::size_t, std::shared_ptr<cv::tensor_stream>> open;
    detail::remote_checkpoint* remote = nullptr;  // a URL's: each tensor's inputs leased while it is read
    std::map<std::size_t, std::shared_ptr<input_lease>> leases;

    // Tensor i's inputs at hand (fetched on first use for a URL).
    gguf::result<void> acquire(std::size_t i) {
        if (remote == nullptr || plan->tensors[i].inputs.empty()) return {};
        std::shared_ptr<input_lease> lease;
        {
            std::lock_guard<std::mutex> g(lock);
            auto& slot = leases[i];
            if (!slot) slot = std::make_shared<input_lease>(*remote, input_ranges(*plan, plan->tensors[i]));
            lease = slot;
        }
        return lease->acquire();
    }
    void release(std::size_t i) {
        std::lock_guard<std::mutex> g(lock);
        leases.erase(i);  // the lease's destructor gives the ranges back
    }

    gguf::result<std::size_t> find(const gguf::tensor_ref& ref) {
        const auto it = index.find(ref.info->name);
        if (it == index.end()) {
            gguf::error e;
            e.code = gguf::errc::io_error;
            e.subject = std::string(ref.info->name);
            e.detail = "not a tensor of the conversion";
            return unexpected(std::move(e));
        }
        return it->second;
    }
};



gguf::result<convert_report> convert_and_quantize(const convert_request& rq, const quant::file_type_name& type,
                                                  const convert_events& events);

// The plan of the checkpoint at rq.input: a directory as it is; a URL through a spool (`remote`,
// which the caller keeps alive while the plan is read), its errors naming the URL's files.
gguf::result<cv::model_plan> plan_input(const convert_request& rq, const cv::conversion_options& options,
                                        std::unique_ptr<detail::remote_checkpoint>& remote) {
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
    return planned;
}

// The checkpoint tensors a plan reads (each is the input of one output tensor: read once).
std::uint64_t planned_input_bytes(const cv::model_plan& plan) {
    std::uint64_t n = 0;
    for (const cv::planned_tensor& t : plan.tensors)
        for (std::uint32_t in : t.inputs) n += plan.weights->tensors()[in].entry->n_bytes();
    return n;
}

}  // namespace

gguf::result<convert_report> convert(const convert_request& rq, const convert_events& events) {
    cv::conversion_options options;
    const auto outtype = cv::output_type_from_name(rq.outtype);
    if (!outtype) {
        // Not one of the reference's names: a llama-quantize type, applied to the f32 conversion.
        auto type = quant::parse_file_type(rq.outtype);
        if (!type || type->copy) {
            gguf::error e;
            e.code = gguf::errc::bad_value_text;
            e.subject = "outtype";
            e.detail = "'" + rq.outtype + "' is neither convert_hf_to_gguf.py's f32, f16, bf16, q8_0, auto nor a llama-quantize type (Q4_K_M, IQ4_XS, …)";
            return unexpected(std::move(e));
        }
        return convert_and_quantize(rq, *type, events);
    }
    if (rq.imatrix) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.subject = "imatrix";
        e.detail = "an importance matrix is for a llama-quantize --outtype (Q4_K_M, IQ4_XS, …), not for " + rq.outtype;
        return unexpected(std::move(e));
    }
    options.outtype = *outtype;
    options.model_name = rq.model_name;
    options.pre = rq.pre;
    options.vocab_only = rq.vocab_only;
    // A URL: a spool directory made of its files (remote_checkpoint.hpp); it outlives everything below
    // that reads it (declared first, destroyed last).
    std::unique_ptr<detail::remote_checkpoint> remote;
    auto planned = plan_input(rq, options, remote);
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

    auto out = output_path(rq.output, *plan, report.file_type, rq.vocab_only);
    if (!out) return unexpected(std::move(out).error());
    detail::output_request orq;
    orq.output = *out;
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
        const std::uint64_t planned_bytes = planned_input_bytes(*plan);
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

namespace minfer::toolbox {
namespace {

gguf::result<convert_report> convert_and_quantize(const convert_request& rq, const quant::file_type_name& type,
                                                  const convert_events& events) {
    cv::conversion_options options;
    options.outtype = cv::output_type::f32;
    options.model_name = rq.model_name;
    options.pre = rq.pre;
    options.vocab_only = rq.vocab_only;
    std::unique_ptr<detail::remote_checkpoint> remote;  // a URL's spool: outlives its readers below
    auto planned = plan_input(rq, options, remote);
    if (!planned) return unexpected(std::move(planned).error());
    auto values = std::make_shared<f32_values>();
    values->remote = remote.get();
    values->plan = std::make_shared<const cv::model_plan>(*std::move(planned));
    const cv::model_plan& plan = *values->plan;

    // The head of the f32 file the reference would write, and that file's size.
    gguf::writer w;
    put_keys(w, plan);
    for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
        const cv::planned_tensor& t = plan.tensors[i];
        w.add_tensor(t.name, t.type, t.ne, gguf::tensor_source::zeros(t.n_bytes));
        values->index.emplace(t.name, i);
    }
    auto layout = w.make_plan();
    if (!layout) return unexpected(std::move(layout).error());
    auto head = w.head_bytes();
    if (!head) return unexpected(std::move(head).error());
    head_opener opener(*std::move(head), layout->file_size());
    auto model = gguf::model::open(opener, "converted-f32.gguf");
    if (!model) return unexpected(std::move(model).error());

    quantize_detail::tensor_values tv;
    tv.raw = [values](const gguf::tensor_ref& ref) -> gguf::result<gguf::tensor_source> {
        auto i = values->find(ref);
        if (!i) return unexpected(std::move(i).error());
        auto stream = std::make_shared<cv::tensor_stream>(*values->plan, *i);
        const std::size_t index = *i;
        const std::uint64_t n = values->plan->tensors[index].n_bytes;
        return gguf::tensor_source::callback(n, [values, stream, index, n](std::uint64_t offset, std::span<std::byte> out) -> gguf::result<void> {
            if (auto r = values->acquire(index); !r) return r;
            auto r = stream->fill(offset, out);
            if (!r || offset + out.size() >= n) values->release(index);
            return r;
        });
    };
    tv.read = [values](const gguf::tensor_ref& ref, std::uint64_t first, std::span<float> out) -> gguf::result<void> {
        auto i = values->find(ref);
        if (!i) return unexpected(std::move(i).error());
        std::shared_ptr<cv::tensor_stream> stream;
        {
            std::lock_guard<std::mutex> g(values->lock);
            auto& slot = values->open[*i];
            if (!slot) slot = std::make_shared<cv::tensor_stream>(*values->plan, *i);
            stream = slot;
        }
        if (auto a = values->acquire(*i); !a) return a;
        const std::uint64_t per_row = stream->row_values();
        const std::uint64_t row = first / per_row, n = out.size() / per_row;
        auto r = stream->rows_f32(row, n, out);
        if (!r || row + n == stream->rows()) {
            {
                std::lock_guard<std::mutex> g(values->lock);
                values->open.erase(*i);
            }
            values->release(*i);
        }
        return r;
    };

    auto out = output_path(rq.output, plan, std::string(type.name), rq.vocab_only);
    if (!out) return unexpected(std::move(out).error());
    quantize_request qrq;
    qrq.input = rq.input;
    qrq.output = *out;
    qrq.type = type;
    qrq.threads = rq.threads;
    qrq.imatrix = rq.imatrix;
    qrq.split_max_bytes = rq.split_max_bytes;
    qrq.split_max_tensors = rq.split_max_tensors;
    qrq.dry_run = rq.dry_run;
    qrq.overwrite = rq.overwrite;
    std::vector<std::filesystem::path> inputs;
    if (plan.weights && !remote)  // a spool's shards are no file the output could name
        for (const cv::safetensors_file& shard : plan.weights->shards()) inputs.push_back(shard.path());
    if (remote && !rq.dry_run)
        if (auto r = remote->start_tensors(planned_input_bytes(plan)); !r) return unexpected(std::move(r).error());
    quantize_events qev;
    qev.progress = events.progress;
    auto q = quantize_detail::quantize_model(*model, &tv, inputs, qrq, qev);
    if (!q) return unexpected(std::move(q).error());

    convert_report report;
    report.architecture = plan.config.architecture_name;
    report.gguf_architecture = std::string(cv::gguf_name(plan.config.arch));
    report.file_type = std::string(type.name);
    report.warnings = plan.warnings;
    for (std::string& wn : q->warnings) report.warnings.push_back(std::move(wn));
    if (plan.weights)
        for (const cv::checkpoint_tensor& t : plan.weights->tensors()) report.input_bytes += t.entry->n_bytes();
    for (const quant::tensor_choice& c : q->plan.tensors) {
        converted_tensor ct;
        ct.name = c.name;
        if (const auto it = values->index.find(c.name); it != values->index.end()) {
            const cv::planned_tensor& t = plan.tensors[it->second];
            if (!t.inputs.empty()) {
                const cv::checkpoint_tensor& in = plan.weights->tensors()[t.inputs.front()];
                ct.source_name = std::string(in.name());
                ct.source_dtype = std::string(cv::to_string(in.entry->dtype));
            }
            ct.ne = t.ne;
            ct.n_bytes = quant::bytes_for(c.to, t.n_elements);
        }
        ct.type = c.to;
        report.tensors.push_back(std::move(ct));
    }
    for (const quantize_output& o : q->outputs) report.outputs.push_back({o.path, o.file_size, o.tensor_count});
    report.output_tensor_bytes = q->output_tensor_bytes;
    report.written = q->written;
    if (remote) {
        report.fetched = remote->totals();
        report.fetched.planned_bytes = planned_input_bytes(plan);
    }
    return report;
}

}  // namespace
}  // namespace minfer::toolbox
