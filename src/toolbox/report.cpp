// toolbox::report (report.hpp): the report document of docs/REPORT_JSON.md.
#include "minfer/toolbox/report.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "minfer/compare/value_stats.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/page_advice.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/quant/value_stream.hpp"
#include "minfer/toolbox/json_writer.hpp"
#include "model_keys.hpp"
#include "remote_models.hpp"
#include "report_values.hpp"

#ifndef MINFER_VERSION
#define MINFER_VERSION "unknown"
#endif

namespace minfer::toolbox {
namespace {

using gguf::errc;
using gguf::unexpected;

constexpr std::size_t array_item_cap = 1024;      // items of a metadata array in the document
constexpr std::size_t array_summary_items = 8;    // items in its one-line summary
constexpr std::uint64_t token_cap = 1u << 20;     // tokens in the document

struct opened {
    std::string location;
    gguf::model model;
    bool remote = false;
};

// N of blk.N.*, and the role: the name without "blk.N." and without a final ".weight" / ".bias".
std::string role_of(std::string_view name, std::optional<std::uint32_t>& layer) {
    std::string_view rest = name;
    layer = detail::block_of(name, rest);
    if (!layer) rest = name;
    for (std::string_view suffix : {std::string_view(".weight"), std::string_view(".bias")})
        if (rest.size() > suffix.size() && rest.substr(rest.size() - suffix.size()) == suffix) {
            rest.remove_suffix(suffix.size());
            break;
        }
    return std::string(rest);
}

// A scalar's text, an array item's text.
template <class T>
std::string number_text(T v) {
    if constexpr (std::is_floating_point_v<T>) {
        char b[64];
        const auto r = std::to_chars(b, b + sizeof b, v);
        return std::string(b, r.ptr);
    } else {
        return std::to_string(v);
    }
}

std::string scalar_text(const gguf::kv& e) {
    using vt = gguf::value_type;
    switch (e.type) {
        case vt::string: {
            auto s = e.get<std::string_view>();
            return s ? std::string(*s) : std::string();
        }
        case vt::boolean: {
            auto b = e.get<bool>();
            return b && *b ? "true" : "false";
        }
        case vt::f32: {
            auto v = e.get<float>();
            return v ? number_text(*v) : std::string();
        }
        case vt::f64: {
            auto v = e.get<double>();
            return v ? number_text(*v) : std::string();
        }
        case vt::i8:
        case vt::i16:
        case vt::i32:
        case vt::i64: {
            auto v = e.as<std::int64_t>();
            return v ? std::to_string(*v) : std::string();
        }
        default: {
            auto v = e.as<std::uint64_t>();
            return v ? std::to_string(*v) : std::string();
        }
    }
}

std::string item_text(const gguf::array_view& a, std::uint64_t i) {
    using vt = gguf::value_type;
    switch (a.element_type()) {
        case vt::u8: return std::to_string(*a.at<std::uint8_t>(i));
        case vt::i8: return std::to_string(*a.at<std::int8_t>(i));
        case vt::u16: return std::to_string(*a.at<std::uint16_t>(i));
        case vt::i16: return std::to_string(*a.at<std::int16_t>(i));
        case vt::u32: return std::to_string(*a.at<std::uint32_t>(i));
        case vt::i32: return std::to_string(*a.at<std::int32_t>(i));
        case vt::u64: return std::to_string(*a.at<std::uint64_t>(i));
        case vt::i64: return std::to_string(*a.at<std::int64_t>(i));
        case vt::f32: return number_text(*a.at<float>(i));
        case vt::f64: return number_text(*a.at<double>(i));
        case vt::boolean: return *a.at<bool>(i) ? "true" : "false";
        default: return {};
    }
}

// The metadata rows: key, type, one-line value, and for an array its first items.
void write_metadata(json_writer& j, const gguf::model& m) {
    j.key("metadata");
    j.begin_array();
    for (const gguf::kv& e : m.metadata().metadata()) {
        j.begin_object(true);
        j.key("key");
        j.string(e.key);
        if (!e.is_array()) {
            j.key("type");
            j.string(gguf::to_string(e.type));
            j.key("value");
            j.string(scalar_text(e));
            j.end_object();
            continue;
        }
        auto a = e.get<gguf::array_view>();
        std::vector<std::string> items;
        if (a) {
            const std::uint64_t n = std::min<std::uint64_t>(a->size(), array_item_cap);
            if (a->element_type() == gguf::value_type::string) {
                for (std::string_view s : a->strings()) {
                    if (items.size() >= n) break;
                    items.emplace_back(s);
                }
            } else if (a->element_type() != gguf::value_type::array) {
                for (std::uint64_t i = 0; i < n; ++i) items.push_back(item_text(*a, i));
            }
        }
        const std::uint64_t count = a ? a->size() : 0;
        j.key("type");
        j.string("array[" + std::string(gguf::to_string(a ? a->element_type() : gguf::value_type::array)) + "]");
        std::string summary = "[";
        for (std::size_t i = 0; i < items.size() && i < array_summary_items; ++i) {
            if (i) summary += ", ";
            summary += a && a->element_type() == gguf::value_type::string ? detail::quoted_text(items[i]) : items[i];
        }
        if (count > array_summary_items) summary += ", …";
        summary += "]";
        j.key("value");
        j.string(summary);
        j.key("count");
        j.number(count);
        j.key("items");
        j.begin_array(true);
        for (const std::string& s : items) j.string(s);
        j.end_array();
        j.key("truncated");
        j.boolean(items.size() < count);
        j.end_object();
    }
    j.end_array();
}

struct tensor_row {
    const gguf::tensor_ref* ref = nullptr;
    std::optional<std::uint32_t> layer;
    std::string role;
    std::optional<compare::value_stats> stats;
    std::optional<detail::value_histogram> histogram;
};

struct error_row {
    std::size_t tensor = 0;  // index into the primary's rows
    std::string reference_type;
    double rmse = 0, max_abs = 0;
    std::uint64_t max_index = 0, non_finite = 0;
    std::optional<double> nmse, cosine, relative, weighted;
    bool outlier = false;
};

// A tensor's values, a chunk at a time, from a mapping or a remote model.
class value_reader {
public:
    value_reader(const opened& o, const gguf::tensor_ref& t, detail::remote_models& remotes, unsigned threads)
        : o_(o), t_(t), remotes_(remotes), threads_(threads) {
        if (!o_.remote) {
            bytes_ = o_.model.tensor_data(t_);
            mapped_ = o_.model.parts()[t_.part].file.mapped();
            if (mapped_) gguf::advise_sequential(bytes_);
        }
    }
    gguf::result<void> read(std::uint64_t first, std::span<float> out) {
        const gguf::tensor_type type = t_.info->type;
        if (!o_.remote) {
            auto r = quant::dequantize_range(type, bytes_, first, out, threads_);
            if (!r) return r;
            if (mapped_) quant::release_value_pages(type, bytes_, first, out.size());
            return {};
        }
        const std::uint64_t from = quant::bytes_for(type, first), to = quant::bytes_for(type, first + out.size());
        raw_.resize(static_cast<std::size_t>(to - from));
        if (auto r = remotes_.read(o_.model, t_, from, raw_); !r) return r;
        return quant::dequantize_range(type, raw_, 0, out, threads_);
    }

private:
    const opened& o_;
    const gguf::tensor_ref& t_;
    detail::remote_models& remotes_;
    unsigned threads_;
    std::span<const std::byte> bytes_;
    bool mapped_ = false;
    std::vector<std::byte> raw_;
};

gguf::error with_subject(gguf::error e, std::string_view name) {
    if (e.subject.empty()) e.subject = name;
    return e;
}

std::optional<std::string> string_key(const gguf::model& m, std::string_view key) {
    auto v = m.get<std::string_view>(key);
    if (!v) return std::nullopt;
    return std::string(*v);
}

std::optional<std::uint64_t> number_key(const gguf::model& m, const std::string& key) {
    const gguf::kv* e = m.find(key);
    if (e == nullptr || e->is_array()) return std::nullopt;
    auto v = e->as<std::uint64_t>();
    return v ? std::optional<std::uint64_t>(*v) : std::nullopt;
}

void write_summary(json_writer& j, const opened& o) {
    const gguf::model& m = o.model;
    std::uint64_t params = 0, tensor_bytes = 0;
    for (const gguf::tensor_ref& t : m.tensors()) {
        params += t.info->n_elements;
        tensor_bytes += t.info->n_bytes;
    }
    const auto arch = string_key(m, "general.architecture");
    j.begin_object();
    j.key("location");
    j.string(o.location);
    j.key("file_bytes");
    j.number(m.file_bytes());
    j.key("parts");
    j.number(static_cast<std::uint64_t>(m.parts().size()));
    j.key("version");
    j.number(static_cast<std::uint64_t>(m.metadata().version()));
    j.key("alignment");
    j.number(static_cast<std::uint64_t>(m.metadata().alignment()));
    j.key("kv_count");
    j.number(static_cast<std::uint64_t>(m.metadata().metadata().size()));
    j.key("tensor_count");
    j.number(static_cast<std::uint64_t>(m.tensors().size()));
    auto opt_string = [&](const char* k, const std::optional<std::string>& v) {
        j.key(k);
        if (v) j.string(*v);
        else j.null();
    };
    auto opt_number = [&](const char* k, const std::optional<std::uint64_t>& v) {
        j.key(k);
        if (v) j.number(*v);
        else j.null();
    };
    opt_string("architecture", arch);
    opt_string("name", string_key(m, "general.name"));
    std::optional<std::string> ft;
    if (auto n = number_key(m, "general.file_type")) {
        const std::string_view name = quant::to_string(static_cast<quant::file_type>(*n));
        ft = name == "unknown" ? "file type " + std::to_string(*n) : std::string(name);
    }
    opt_string("file_type", ft);
    j.key("parameters");
    j.number(params);
    j.key("tensor_bytes");
    j.number(tensor_bytes);
    j.key("bits_per_weight");
    if (params > 0) j.number(8.0 * static_cast<double>(tensor_bytes) / static_cast<double>(params));
    else j.null();
    opt_number("context_length", arch ? number_key(m, *arch + ".context_length") : std::nullopt);
    opt_number("block_count", arch ? number_key(m, *arch + ".block_count") : std::nullopt);
    opt_string("tokenizer", string_key(m, "tokenizer.ggml.model"));
    std::optional<std::uint64_t> vocab;
    if (const gguf::kv* e = m.find("tokenizer.ggml.tokens"); e && e->is_array())
        if (auto a = e->get<gguf::array_view>()) vocab = a->size();
    opt_number("vocab_size", vocab);
    j.end_object();
}

void write_tokens(json_writer& j, const gguf::model& m) {
    j.key("tokens");
    const gguf::kv* tk = m.find("tokenizer.ggml.tokens");
    auto ta = tk && tk->is_array() ? tk->get<gguf::array_view>() : gguf::result<gguf::array_view>(unexpected(gguf::error{}));
    if (!ta || ta->element_type() != gguf::value_type::string) {
        j.null();
        return;
    }
    const std::uint64_t count = ta->size(), n = std::min(count, token_cap);
    j.begin_object();
    j.key("model");
    if (auto mdl = string_key(m, "tokenizer.ggml.model")) j.string(*mdl);
    else j.null();
    j.key("count");
    j.number(count);
    j.key("texts");
    j.begin_array(true);
    std::uint64_t i = 0;
    for (std::string_view s : ta->strings()) {
        if (i++ >= n) break;
        j.string(s);
    }
    j.end_array();
    // types and scores only when they have one entry per token
    j.key("types");
    const gguf::kv* ty = m.find("tokenizer.ggml.token_type");
    auto tya = ty && ty->is_array() ? ty->get<gguf::array_view>() : gguf::result<gguf::array_view>(unexpected(gguf::error{}));
    if (tya && tya->size() == count && tya->element_type() == gguf::value_type::i32) {
        j.begin_array(true);
        for (std::uint64_t k = 0; k < n; ++k) j.number(static_cast<std::int64_t>(*tya->at<std::int32_t>(k)));
        j.end_array();
    } else {
        j.null();
    }
    j.key("scores");
    const gguf::kv* sc = m.find("tokenizer.ggml.scores");
    auto sca = sc && sc->is_array() ? sc->get<gguf::array_view>() : gguf::result<gguf::array_view>(unexpected(gguf::error{}));
    if (sca && sca->size() == count && sca->element_type() == gguf::value_type::f32) {
        j.begin_array(true);
        for (std::uint64_t k = 0; k < n; ++k) j.number(*sca->at<float>(k));
        j.end_array();
    } else {
        j.null();
    }
    j.key("truncated");
    j.boolean(n < count);
    j.key("special");
    j.begin_object(true);
    for (const gguf::kv& e : m.metadata().metadata()) {
        const std::string_view k = e.key;
        constexpr std::string_view prefix = "tokenizer.ggml.", suffix = "_token_id";
        if (k.size() <= prefix.size() + suffix.size() || k.substr(0, prefix.size()) != prefix ||
            k.substr(k.size() - suffix.size()) != suffix || e.is_array())
            continue;
        if (auto v = e.as<std::uint64_t>()) {
            j.key(k.substr(prefix.size(), k.size() - prefix.size() - suffix.size()));
            j.number(*v);
        }
    }
    j.end_object();
    j.end_object();
}

// A role's outliers: log10(nmse) beyond the role's median by 3 robust deviations (1.4826 MAD) and
// by at least a factor of 4, among roles with 4 or more compared tensors.
void mark_outliers(std::vector<error_row>& errors, const std::vector<tensor_row>& rows) {
    std::map<std::string, std::vector<std::size_t>> by_role;
    for (std::size_t i = 0; i < errors.size(); ++i)
        if (errors[i].nmse && *errors[i].nmse > 0) by_role[rows[errors[i].tensor].role].push_back(i);
    for (auto& [role, idx] : by_role) {
        if (idx.size() < 4) continue;
        std::vector<double> logs;
        for (std::size_t i : idx) logs.push_back(std::log10(*errors[i].nmse));
        auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            const std::size_t n = v.size();
            return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        };
        const double med = median(logs);
        std::vector<double> dev;
        for (double l : logs) dev.push_back(std::fabs(l - med));
        const double mad = median(dev);
        const double limit = med + std::max(3 * 1.4826 * mad, std::log10(4.0));
        for (std::size_t k = 0; k < idx.size(); ++k) errors[idx[k]].outlier = logs[k] > limit;
    }
}

void opt_double(json_writer& j, const char* k, const std::optional<double>& v) {
    j.key(k);
    if (v) j.number(*v);
    else j.null();
}

void write_shape(json_writer& j, const gguf::tensor_info& t) {
    j.begin_array(true);
    for (std::uint32_t d = 0; d < std::max<std::uint32_t>(1, t.n_dims); ++d) j.number(t.ne[d]);
    j.end_array();
}

gguf::result<report_result> run(const report_request& rq, const report_events& events) {
    if (rq.models.empty() || rq.models.size() > 2) {
        gguf::error e = detail::make_error(errc::bad_value_text, "models", "give one model, or two to compare (the reference first)");
        return unexpected(std::move(e));
    }
    detail::remote_models remotes(rq.remote);
    std::vector<std::unique_ptr<opened>> models;
    for (const std::string& loc : rq.models) {
        auto o = std::make_unique<opened>();
        o->location = loc;
        o->remote = names_remote_model(loc);
        if (o->remote && rq.values && !rq.remote.max_fetch)
            return unexpected(detail::make_error(errc::bad_value_text, "values",
                                                 loc + " is a URL: reading its values fetches every tensor; give a fetch budget (--max-fetch) that holds them"));
        if (o->remote && rq.models.size() == 2 && !rq.remote.max_fetch)
            return unexpected(detail::make_error(errc::bad_value_text, "compare",
                                                 loc + " is a URL: comparing fetches every tensor of both models; give a fetch budget (--max-fetch) that holds them"));
        auto m = o->remote ? remotes.open(loc) : gguf::model::open(std::filesystem::path(loc));
        if (!m) return unexpected(std::move(m).error());
        o->model = std::move(*m);
        if (!o->remote && (rq.values || rq.models.size() == 2))
            if (auto r = o->model.require_complete(); !r) return unexpected(std::move(r).error());
        models.push_back(std::move(o));
    }
    const bool comparing = models.size() == 2;
    const opened& primary = *models.back();
    const gguf::model& pm = primary.model;

    std::vector<tensor_row> rows;
    rows.reserve(pm.tensors().size());
    for (const gguf::tensor_ref& t : pm.tensors()) {
        tensor_row r;
        r.ref = &t;
        r.role = role_of(t.info->name, r.layer);
        rows.push_back(std::move(r));
    }

    // What comparing takes: tensors in both with the same shape; the rest listed.
    std::vector<std::pair<std::size_t, const gguf::tensor_ref*>> pairs;  // primary row, reference tensor
    std::vector<std::string> only_ref, only_cmp;
    std::vector<std::pair<const gguf::tensor_info*, const gguf::tensor_info*>> mismatched;
    if (comparing) {
        const gguf::model& am = models.front()->model;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const gguf::tensor_ref* a = am.find_tensor(rows[i].ref->info->name);
            if (a == nullptr) only_cmp.emplace_back(rows[i].ref->info->name);
            else if (a->info->ne != rows[i].ref->info->ne) mismatched.push_back({a->info, rows[i].ref->info});
            else pairs.push_back({i, a});
        }
        for (const gguf::tensor_ref& t : am.tensors())
            if (pm.find_tensor(t.info->name) == nullptr) only_ref.emplace_back(t.info->name);
    }

    // Remote values: everything read must fit the budget, checked before any tensor is fetched.
    std::uint64_t to_fetch = 0, total_values = 0;
    if (rq.values)
        for (const tensor_row& r : rows) {
            total_values += r.ref->info->n_elements;
            if (primary.remote) to_fetch += remotes.to_fetch(pm, *r.ref);
        }
    for (const auto& [i, a] : pairs) {
        if (!rq.values) total_values += rows[i].ref->info->n_elements;
        total_values += a->info->n_elements;
        if (!rq.values && primary.remote) to_fetch += remotes.to_fetch(pm, *rows[i].ref);
        if (models.front()->remote) to_fetch += remotes.to_fetch(models.front()->model, *a);
    }
    if (auto r = remotes.start_tensors(to_fetch); !r) return unexpected(std::move(r).error());

    std::optional<quant::importance_matrix> importance;
    if (comparing && rq.imatrix) {
        auto im = quant::read_importance(*rq.imatrix);
        if (!im) return unexpected(std::move(im).error());
        importance = std::move(*im);
    }

    std::uint64_t done = 0;
    auto progress = [&](std::uint64_t n) {
        done += n;
        if (events.progress) events.progress(done, total_values);
    };
    std::vector<float> va, vb;
    std::vector<error_row> errors;
    std::map<std::size_t, std::size_t> pair_of;  // primary row -> index in pairs
    for (std::size_t k = 0; k < pairs.size(); ++k) pair_of[pairs[k].first] = k;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        tensor_row& r = rows[i];
        const auto pit = pair_of.find(i);
        const bool compare_this = pit != pair_of.end();
        if (!rq.values && !compare_this) continue;
        const gguf::tensor_info& info = *r.ref->info;
        value_reader rb(primary, *r.ref, remotes, rq.threads);
        std::optional<value_reader> ra;
        std::optional<detail::tensor_error> err;
        if (compare_this) {
            const gguf::tensor_ref* a = pairs[pit->second].second;
            ra.emplace(*models.front(), *a, remotes, rq.threads);
            std::span<const float> w;
            if (importance)
                if (const quant::importance_entry* e = importance->find(info.name);
                    e && e->values.size() == static_cast<std::uint64_t>(info.ne[0]) * static_cast<std::uint64_t>(info.ne[2]))
                    w = e->values;
            err.emplace(static_cast<std::uint64_t>(info.ne[0]), static_cast<std::uint64_t>(info.ne[1]), w);
        }
        if (rq.values) {
            r.stats.emplace();
            r.histogram.emplace();
        }
        for (std::uint64_t first = 0; first < info.n_elements;) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(info.n_elements - first, quant::chunk_values));
            vb.resize(n);
            if (auto rr = rb.read(first, vb); !rr) return unexpected(with_subject(std::move(rr).error(), info.name));
            if (rq.values) {
                // The histogram on a second thread while this one takes the statistics: both only
                // read the chunk, and each is a serial pass as long as the dequantization.
                std::thread helper;
                try {
                    helper = std::thread([&] { r.histogram->add(vb); });
                } catch (...) {  // no thread to be had: one after the other
                    r.histogram->add(vb);
                }
                r.stats->add(vb, first);
                if (helper.joinable()) helper.join();
            }
            if (ra) {
                va.resize(n);
                if (auto rr = ra->read(first, va); !rr) return unexpected(with_subject(std::move(rr).error(), info.name));
                err->add(va, vb, first);
                progress(n);
            }
            progress(n);
            first += n;
        }
        if (err) {
            error_row e;
            e.tensor = i;
            e.reference_type = gguf::to_string(pairs[pit->second].second->info->type);
            e.rmse = err->measures().rmse();
            e.cosine = err->measures().cosine();
            e.relative = err->measures().relative_error();
            e.non_finite = err->measures().non_finite_mismatches();
            e.nmse = err->nmse();
            e.max_abs = err->max_abs();
            e.max_index = err->max_abs_index();
            e.weighted = err->weighted_rmse();
            errors.push_back(std::move(e));
        }
    }
    mark_outliers(errors, rows);
    std::map<std::size_t, const error_row*> error_of;
    for (const error_row& e : errors) error_of[e.tensor] = &e;

    // The document.
    report_result out;
    string_sink sink(out.json);
    json_writer j(sink);
    j.begin_object();
    j.key("minfer_report");
    j.number(std::uint64_t{1});
    j.key("generator");
    j.string(std::string("minfer ") + MINFER_VERSION);
    j.key("mode");
    j.string(comparing ? "compare" : "model");
    j.key("values");
    j.boolean(rq.values);
    j.key("models");
    j.begin_array();
    for (const auto& o : models) write_summary(j, *o);
    j.end_array();
    write_metadata(j, pm);

    j.key("tensors");
    j.begin_array();
    for (const tensor_row& r : rows) {
        const gguf::tensor_info& t = *r.ref->info;
        j.begin_object(true);
        j.key("name");
        j.string(t.name);
        j.key("type");
        j.string(gguf::to_string(t.type));
        j.key("shape");
        write_shape(j, t);
        j.key("elements");
        j.number(t.n_elements);
        j.key("bytes");
        j.number(t.n_bytes);
        j.key("offset");
        j.number(t.offset);
        j.key("part");
        j.number(std::uint64_t{r.ref->part} + 1);
        j.key("layer");
        if (r.layer) j.number(std::uint64_t{*r.layer});
        else j.null();
        j.key("role");
        j.string(r.role);
        j.key("bits_per_weight");
        if (t.n_elements > 0) j.number(8.0 * static_cast<double>(t.n_bytes) / static_cast<double>(t.n_elements));
        else j.null();
        j.key("stats");
        if (!r.stats) {
            j.null();
        } else {
            const compare::value_stats& s = *r.stats;
            const bool any = s.finite() > 0;
            j.begin_object(true);
            j.key("count");
            j.number(s.count());
            j.key("finite");
            j.number(s.finite());
            j.key("nan");
            j.number(s.nans());
            j.key("inf");
            j.number(s.infs());
            j.key("zeros");
            j.number(s.zeros());
            auto f = [&](const char* k, float v) {
                j.key(k);
                if (any) j.number(v);
                else j.null();
            };
            f("min", s.min());
            f("max", s.max());
            j.key("mean");
            if (any) j.number(static_cast<float>(s.mean()));
            else j.null();
            j.key("std");
            if (any) j.number(static_cast<float>(s.stddev()));
            else j.null();
            j.key("histogram");
            if (r.histogram->empty()) {
                j.null();
            } else {
                j.begin_object(true);
                j.key("lo");
                j.number(r.histogram->lo());
                j.key("width");
                j.number(r.histogram->width());
                j.key("counts");
                j.begin_array(true);
                for (std::uint64_t c : r.histogram->counts()) j.number(c);
                j.end_array();
                j.end_object();
            }
            j.end_object();
        }
        j.end_object();
    }
    j.end_array();

    // Layers × roles, and the bytes by type and by role.
    std::optional<std::uint64_t> block_count;
    if (auto arch = string_key(pm, "general.architecture")) block_count = number_key(pm, *arch + ".block_count");
    std::uint64_t layer_count = block_count.value_or(0);
    std::vector<std::string> roles;
    struct cell {
        std::vector<std::size_t> rows;
        std::uint64_t bytes = 0, elements = 0;
        double d2 = 0, a2 = 0;  // for the cell's error
        std::uint64_t compared = 0;
        bool has_error = false;
    };
    std::map<std::pair<std::uint64_t, std::size_t>, cell> cells;
    struct tally {
        std::uint64_t tensors = 0, bytes = 0, elements = 0;
    };
    std::map<std::string, tally> by_type, by_role;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const tensor_row& r = rows[i];
        const gguf::tensor_info& t = *r.ref->info;
        tally& ty = by_type[std::string(gguf::to_string(t.type))];
        tally& ro = by_role[r.role];
        for (tally* x : {&ty, &ro}) {
            ++x->tensors;
            x->bytes += t.n_bytes;
            x->elements += t.n_elements;
        }
        if (!r.layer) continue;
        if (!block_count) layer_count = std::max<std::uint64_t>(layer_count, std::uint64_t{*r.layer} + 1);
        auto ri = static_cast<std::size_t>(std::find(roles.begin(), roles.end(), r.role) - roles.begin());
        if (ri == roles.size()) roles.push_back(r.role);
        cell& c = cells[{*r.layer, ri}];
        c.rows.push_back(i);
        c.bytes += t.n_bytes;
        c.elements += t.n_elements;
        if (auto it = error_of.find(i); it != error_of.end()) {
            const error_row& e = *it->second;
            const double n = static_cast<double>(t.n_elements);
            c.d2 += e.rmse * e.rmse * n;
            if (e.nmse && *e.nmse > 0) c.a2 += e.rmse * e.rmse * n / *e.nmse;
            c.has_error = true;
        }
    }
    j.key("layers");
    j.begin_object();
    j.key("count");
    j.number(layer_count);
    j.key("roles");
    j.begin_array(true);
    for (const std::string& r : roles) j.string(r);
    j.end_array();
    j.key("cells");
    j.begin_array();
    for (const auto& [key, c] : cells) {
        j.begin_object(true);
        j.key("layer");
        j.number(key.first);
        j.key("role");
        j.string(roles[key.second]);
        j.key("tensors");
        j.begin_array(true);
        for (std::size_t i : c.rows) j.string(rows[i].ref->info->name);
        j.end_array();
        j.key("bytes");
        j.number(c.bytes);
        j.key("elements");
        j.number(c.elements);
        j.key("bits_per_weight");
        if (c.elements > 0) j.number(8.0 * static_cast<double>(c.bytes) / static_cast<double>(c.elements));
        else j.null();
        j.key("rmse");
        if (c.has_error) j.number(std::sqrt(c.d2 / static_cast<double>(c.elements)));
        else j.null();
        j.key("nmse");
        if (c.has_error && c.a2 > 0) j.number(c.d2 / c.a2);
        else j.null();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    auto write_tallies = [&](const char* key, const char* what, const std::map<std::string, tally>& m) {
        std::vector<std::pair<std::string, tally>> v(m.begin(), m.end());
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
        j.key(key);
        j.begin_array();
        for (const auto& [name, t] : v) {
            j.begin_object(true);
            j.key(what);
            j.string(name);
            j.key("tensors");
            j.number(t.tensors);
            j.key("bytes");
            j.number(t.bytes);
            j.key("elements");
            j.number(t.elements);
            j.end_object();
        }
        j.end_array();
    };
    write_tallies("by_type", "type", by_type);
    write_tallies("by_role", "role", by_role);

    write_tokens(j, pm);
    j.key("chat_template");
    if (auto ct = string_key(pm, "tokenizer.chat_template")) j.string(*ct);
    else j.null();

    j.key("compare");
    if (!comparing) {
        j.null();
    } else {
        j.begin_object();
        j.key("reference");
        j.number(std::uint64_t{0});
        j.key("compared");
        j.number(std::uint64_t{1});
        j.key("imatrix");
        if (rq.imatrix) j.string(rq.imatrix->string());
        else j.null();
        j.key("errors");
        j.begin_array();
        for (const error_row& e : errors) {
            const tensor_row& r = rows[e.tensor];
            j.begin_object(true);
            j.key("name");
            j.string(r.ref->info->name);
            j.key("layer");
            if (r.layer) j.number(std::uint64_t{*r.layer});
            else j.null();
            j.key("role");
            j.string(r.role);
            j.key("reference_type");
            j.string(e.reference_type);
            j.key("compared_type");
            j.string(gguf::to_string(r.ref->info->type));
            j.key("rmse");
            j.number(e.rmse);
            opt_double(j, "nmse", e.nmse);
            opt_double(j, "cosine", e.cosine);
            j.key("max_abs");
            j.number(e.max_abs);
            j.key("max_abs_index");
            j.number(e.max_index);
            opt_double(j, "relative_error", e.relative);
            opt_double(j, "weighted_rmse", e.weighted);
            j.key("non_finite_mismatches");
            j.number(e.non_finite);
            j.key("outlier");
            j.boolean(e.outlier);
            j.end_object();
        }
        j.end_array();
        j.key("only_in_reference");
        j.begin_array(true);
        for (const std::string& s : only_ref) j.string(s);
        j.end_array();
        j.key("only_in_compared");
        j.begin_array(true);
        for (const std::string& s : only_cmp) j.string(s);
        j.end_array();
        j.key("shape_mismatch");
        j.begin_array();
        for (const auto& [a, b] : mismatched) {
            j.begin_object(true);
            j.key("name");
            j.string(b->name);
            j.key("reference_shape");
            write_shape(j, *a);
            j.key("compared_shape");
            write_shape(j, *b);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_object();
    j.finish();

    out.title = string_key(pm, "general.name").value_or(std::filesystem::path(primary.location).filename().string());
    out.tensors = rows.size();
    out.compared = errors.size();
    out.fetched = remotes.totals();
    return out;
}

}  // namespace

gguf::result<report_result> report(const report_request& request, const report_events& events) noexcept {
    try {
        return run(request, events);
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("building the report"));
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("building the report"));
    }
}

}  // namespace minfer::toolbox
