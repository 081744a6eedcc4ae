// The remote models of a toolbox command (remote_models.hpp).
#include "remote_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <list>
#include <map>
#include <new>
#include <utility>
#include <vector>

#include "minfer/toolbox/errors.hpp"
#include "model_keys.hpp"

#ifdef MINFER_TOOLBOX_REMOTE
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/http_source.hpp"
#include "minfer/remote/url.hpp"
#endif

namespace minfer::toolbox::detail {

namespace {
constexpr std::uint64_t default_head_budget = 64ull << 20;  // what `minfer info URL` allows
constexpr double default_timeout_s = 60;
}  // namespace

#ifdef MINFER_TOOLBOX_REMOTE

struct remote_models::state {
    remote_settings settings;
    std::chrono::steady_clock::time_point deadline;
    std::vector<std::unique_ptr<remote::http_opener>> head_openers;
    // the tensor phase: one budget of exactly the planned bytes, one reader per remote file
    std::unique_ptr<remote::fetch_budget> budget;
    std::list<remote::part_stats> stats;  // stable addresses: each reader writes its own
    std::map<std::string, std::unique_ptr<remote::range_reader>> readers;
    std::uint64_t planned = 0;

    std::uint64_t head_bytes() const {
        std::uint64_t n = 0;
        for (const auto& o : head_openers) n += o->bytes_received();
        return n;
    }

    remote::fetch_options options_for(const std::string& url) const {
        remote::fetch_options fo;
        fo.timeout_s = settings.timeout_s.value_or(default_timeout_s);
        fo.deadline = deadline;
        if (!settings.hf_token.empty() && remote::is_hub(url)) fo.bearer_token = settings.hf_token;
        return fo;
    }

    gguf::result<remote::range_reader*> reader(const gguf::model_part& part) {
        const std::string url = part.path.string();
        if (auto it = readers.find(url); it != readers.end()) return it->second.get();
        if (!budget) {
            gguf::error e;
            e.code = gguf::errc::index_out_of_range;
            e.file = url;
            e.detail = "a remote tensor read before the plan's bytes were counted";
            return gguf::unexpected(std::move(e));
        }
        stats.emplace_back();
        stats.back().url = url;
        auto r = remote::open_range_reader(url, part.view.file_size(), options_for(url), *budget, stats.back());
        if (!r) return gguf::unexpected(std::move(r).error());
        return readers.emplace(url, std::move(*r)).first->second.get();
    }
};

remote_models::remote_models(remote_settings settings) : state_(std::make_unique<state>()) {
    state_->settings = std::move(settings);
    const double s = state_->settings.timeout_s.value_or(default_timeout_s);
    state_->deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(std::min(s, 1e9)));
}

bool remote_models::available() noexcept { return true; }

gguf::result<gguf::model> remote_models::open(const std::string& location) {
    auto url = remote::resolve(location);
    if (!url) return gguf::unexpected(std::move(url).error());
    remote::fetch_options fo = state_->options_for(*url);
    const std::uint64_t cap = state_->settings.max_fetch.value_or(default_head_budget);
    const std::uint64_t used = state_->head_bytes();
    fo.max_fetch = cap - std::min(cap, used);  // what the models opened before left
    if (fo.max_fetch == 0) {
        gguf::error e;
        e.code = gguf::errc::fetch_budget_exceeded;
        e.file = *url;
        e.expected = cap;
        e.found = used + 1;
        return gguf::unexpected(std::move(e));
    }
    fo.first_read = std::min(fo.first_read, fo.max_fetch);
    fo.max_head_growth = 1 << 20;  // at most 1 MiB read past a head's end (the bound)
    state_->head_openers.push_back(std::make_unique<remote::http_opener>(fo));
    return gguf::model::open(*state_->head_openers.back(), *url);
}

gguf::result<void> remote_models::start_tensors(std::uint64_t planned_bytes) {
    state_->planned = planned_bytes;
    const std::uint64_t heads = state_->head_bytes();
    if (state_->settings.max_fetch && (heads > *state_->settings.max_fetch || planned_bytes > *state_->settings.max_fetch - heads)) {
        gguf::error e;
        e.code = gguf::errc::fetch_budget_exceeded;
        e.expected = *state_->settings.max_fetch;
        e.found = heads + planned_bytes;
        e.detail = "the heads took " + std::to_string(heads) + " bytes and the tensors taken from remote models are " +
                   std::to_string(planned_bytes) + " bytes";
        return gguf::unexpected(std::move(e));
    }
    if (!state_->settings.timeout_s && planned_bytes > 0) {
        // No --timeout: the tensors get their own time, 60 s plus 1 s per MiB (a floor of 1 MiB/s),
        // so a large download is not cut by the heads' default and a trickling server still ends.
        const double s = default_timeout_s + std::ceil(static_cast<double>(planned_bytes) / (1 << 20));
        state_->deadline = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
    }
    state_->budget = std::make_unique<remote::fetch_budget>(planned_bytes);
    return {};
}

gguf::result<void> remote_models::read(const gguf::model& m, const gguf::tensor_ref& t, std::uint64_t offset, std::span<std::byte> out) {
    if (t.part >= m.parts().size() || offset > t.info->n_bytes || out.size() > t.info->n_bytes - offset) {
        gguf::error e;
        e.code = gguf::errc::index_out_of_range;
        e.subject = t.info->name;
        e.found = offset;
        e.detail = "bytes asked beyond the tensor";
        return gguf::unexpected(std::move(e));
    }
    const gguf::model_part& part = m.parts()[t.part];
    std::uint64_t at = part.view.data_offset() + t.info->offset + offset;
    // What the head's last range already brought (the first tensors, often) is not fetched again.
    const auto held = part.file.bytes();
    if (at < held.size()) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), held.size() - at));
        std::memcpy(out.data(), held.data() + at, k);
        out = out.subspan(k);
        at += k;
    }
    if (out.empty()) return {};
    auto r = state_->reader(part);
    if (!r) return gguf::unexpected(std::move(r).error());
    auto got = (*r)->read(at, out);
    if (!got) {
        gguf::error e = std::move(got).error();
        if (e.subject.empty()) e.subject = t.info->name;
        return gguf::unexpected(std::move(e));
    }
    return {};
}

std::uint64_t remote_models::to_fetch(const gguf::model& m, const gguf::tensor_ref& t) const {
    if (t.part >= m.parts().size()) return t.info->n_bytes;
    const gguf::model_part& part = m.parts()[t.part];
    const std::uint64_t first = part.view.data_offset() + t.info->offset, end = first + t.info->n_bytes;
    const std::uint64_t held = part.file.bytes().size();
    return end <= held ? 0 : end - std::max(first, held);
}

gguf::tensor_source remote_models::tensor(const gguf::model& m, const gguf::tensor_ref& t) {
    return gguf::tensor_source::callback(t.info->n_bytes, [this, &m, t](std::uint64_t offset, std::span<std::byte> out) noexcept -> gguf::result<void> {
        try {
            return read(m, t, offset, out);
        } catch (...) {
            return gguf::unexpected(gguf::out_of_memory_error("fetching a remote tensor"));
        }
    });
}

fetch_totals remote_models::totals() const {
    fetch_totals f;
    f.head_bytes = state_->head_bytes();
    f.planned_bytes = state_->planned;
    f.bytes = f.head_bytes;
    for (const auto& o : state_->head_openers) {
        f.requests += o->requests();
        if (auto s = o->stats()) f.files += static_cast<std::uint32_t>(s->parts.size());
    }
    for (const remote::part_stats& p : state_->stats) {
        f.bytes += p.bytes_received;
        f.requests += p.requests;
    }
    return f;
}

#else  // no minfer::remote in this build

struct remote_models::state {};

remote_models::remote_models(remote_settings) : state_(std::make_unique<state>()) {}
bool remote_models::available() noexcept { return false; }

gguf::result<gguf::model> remote_models::open(const std::string& location) {
    return gguf::unexpected(make_error(codes::unsupported_config, location,
                                       "a remote source, and this build has no remote support (minfer::remote): download it first"));
}
gguf::result<void> remote_models::start_tensors(std::uint64_t) { return {}; }
gguf::tensor_source remote_models::tensor(const gguf::model&, const gguf::tensor_ref&) { return {}; }
std::uint64_t remote_models::to_fetch(const gguf::model&, const gguf::tensor_ref& t) const { return t.info->n_bytes; }
gguf::result<void> remote_models::read(const gguf::model&, const gguf::tensor_ref& t, std::uint64_t, std::span<std::byte>) {
    return gguf::unexpected(make_error(codes::unsupported_config, std::string(t.info->name), "no remote support in this build"));
}
fetch_totals remote_models::totals() const { return {}; }

#endif

remote_models::~remote_models() = default;

}  // namespace minfer::toolbox::detail
