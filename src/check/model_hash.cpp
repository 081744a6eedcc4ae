// model_hash: the hash consumer. Per window it schedules one job per whole-model stream (each stream
// is fed the window's tensor pieces in order, so the stream stays one sequence), one job per batch of
// tensor pieces per kind (a tensor's hasher lives from its first piece to its last), and one job for
// each file's SHA-256. Jobs of a window touch disjoint hashers, which is what lets them run at once.
#include "minfer/check/model_hash.hpp"
#include "errors.hpp"

#include <algorithm>
#include <map>
#include <new>

namespace minfer::check {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

namespace {

// Tensor pieces are grouped into jobs of about this many bytes: one job per tiny tensor would cost
// more in scheduling than in hashing.
constexpr std::size_t batch_bytes = std::size_t{1} << 20;

std::vector<hash_kind> normalized(const std::vector<hash_kind>& kinds) {
    std::vector<hash_kind> out;
    for (hash_kind k : all_hash_kinds)
        if (std::find(kinds.begin(), kinds.end(), k) != kinds.end()) out.push_back(k);
    return out;
}

}  // namespace

struct hash_consumer::state {
    std::vector<hash_kind> kinds;
    bool per_tensor = true;
    bool file_sha256 = false;
    std::vector<hasher> model;                 // [i] for kinds[i]
    std::map<std::uint32_t, std::vector<hasher>> open_tensors;  // tensor → [i] (uuid slot unused)
    std::vector<std::uint32_t> to_close;       // tensors whose last piece was in the previous window
    hasher file;                               // the current part's SHA-256
    model_digests out;
    error err;                                 // the first failure (errc::ok: none)
    bool taken = false;
};

hash_consumer::hash_consumer() noexcept = default;
hash_consumer::hash_consumer(hash_consumer&&) noexcept = default;
hash_consumer& hash_consumer::operator=(hash_consumer&&) noexcept = default;
hash_consumer::~hash_consumer() = default;

result<hash_consumer> hash_consumer::make(const gguf::model& m, const hash_options& options) noexcept {
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    try {
        hash_consumer c;
        c.s_ = std::make_unique<state>();
        state& s = *c.s_;
        s.kinds = normalized(options.kinds);
        s.per_tensor = options.per_tensor;
        s.file_sha256 = options.file_sha256;
        s.out.kinds = s.kinds;
        for (hash_kind k : s.kinds) {
            auto h = hasher::make(k);
            if (!h) return unexpected(h.error());
            s.model.push_back(std::move(*h));
        }
        if (s.per_tensor) s.out.tensors.assign(m.tensors().size(), std::vector<digest>(s.kinds.size()));
        if (s.file_sha256) s.out.files.resize(m.parts().size());
        return c;
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

void hash_consumer::schedule(const window& w, std::vector<job>& jobs) {
    state& s = *s_;
    if (s.err.code != errc::ok) return;

    // The whole-model streams: one job each, over the window's pieces in order.
    for (std::size_t i = 0; i < s.kinds.size(); ++i) {
        if (w.tensors.empty()) break;
        hasher* h = &s.model[i];
        jobs.emplace_back([h, pieces = w.tensors] {
            for (const tensor_piece& p : pieces) h->update(p.bytes);
        });
    }

    // Per-tensor digests: open hashers for tensors starting here, then batches of pieces per kind.
    // The map is changed only here, never while jobs run (they only find() in it).
    for (std::uint32_t t : s.to_close) s.open_tensors.erase(t);
    s.to_close.clear();
    if (s.per_tensor && !w.tensors.empty()) {
        for (const tensor_piece& p : w.tensors) {
            if (p.last) s.to_close.push_back(p.tensor);
            if (!p.first) continue;
            std::vector<hasher> hs(s.kinds.size());
            for (std::size_t i = 0; i < s.kinds.size(); ++i) {
                if (s.kinds[i] == hash_kind::uuid) continue;
                auto h = hasher::make(s.kinds[i]);
                if (!h) {
                    s.err = h.error();
                    return;
                }
                hs[i] = std::move(*h);
            }
            s.open_tensors[p.tensor] = std::move(hs);
        }
        for (std::size_t i = 0; i < s.kinds.size(); ++i) {
            if (s.kinds[i] == hash_kind::uuid) continue;
            std::size_t begin = 0;
            while (begin < w.tensors.size()) {
                std::size_t end = begin;
                std::size_t bytes = 0;
                while (end < w.tensors.size() && (end == begin || bytes < batch_bytes)) bytes += w.tensors[end++].bytes.size();
                jobs.emplace_back([&s, i, pieces = w.tensors.subspan(begin, end - begin)] {
                    for (const tensor_piece& p : pieces) {
                        hasher& h = s.open_tensors.find(p.tensor)->second[i];
                        h.update(p.bytes);
                        if (p.last) s.out.tensors[p.tensor][i] = h.finish();
                    }
                });
                begin = end;
            }
        }
    }

    // The file's own SHA-256, over every byte of the window (whole-file walks only).
    if (s.file_sha256) {
        if (w.part_first) {
            auto h = hasher::make(hash_kind::sha256);
            if (!h) {
                s.err = h.error();
                return;
            }
            s.file = std::move(*h);
        }
        jobs.emplace_back([&s, bytes = w.bytes, part = w.part, last = w.part_last] {
            s.file.update(bytes);
            if (last) s.out.files[part] = s.file.finish();
        });
    }
}

result<model_digests> hash_consumer::take() noexcept {
    state& s = *s_;
    if (s.err.code != errc::ok) return unexpected(std::move(s.err));
    if (s.taken) return unexpected(detail::code_error(errc::index_out_of_range));
    s.taken = true;
    try {
        // Hashers of tensors the walk finished are spent; closing them here frees their state. A
        // tensor the walk never reached (no walk, or a failed one) keeps an empty digest.
        s.open_tensors.clear();
        for (std::size_t i = 0; i < s.kinds.size(); ++i) s.out.model.push_back(s.model[i].finish());
        return std::move(s.out);
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("hashing"));
    }
}

result<model_digests> hash_model(const gguf::model& m, const hash_options& options, walk_options walk) noexcept {
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    auto c = hash_consumer::make(m, options);
    if (!c) return unexpected(c.error());
    if (options.file_sha256) walk.whole_files = true;
    data_consumer* consumers[] = {&*c};
    if (auto r = walk_model_data(m, consumers, walk); !r) return unexpected(r.error());
    return c->take();
}

}  // namespace minfer::check
