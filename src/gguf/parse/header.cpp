// Parse stage 1 of 4, the header: magic, version, and the two counts bounded by the file size.
// (parser.hpp has the order of the stages and the one failure path.)
#include <algorithm>

#include "parser.hpp"

namespace minfer::gguf {

bool parser::header() {
    std::uint32_t magic = 0;
    if (!cur_.has(4)) {
        if (cur_.beyond_head(4)) return need_head(4);
        err_.detail = "magic";
        return fail(errc::truncated, section::header, 0, 4, cur_.file_remaining());
    }
    (void)cur_.read(magic);
    if (magic != 0x46554747u) return fail(errc::bad_magic, section::header, 0, 0x46554747u, magic);  // "GGUF"
    std::uint32_t version = 0;
    if (!read(version, section::header, "version")) return false;
    if (version == 0) return fail(errc::bad_version, section::header, 4, gguf_version, version);
    if ((version & 0xFFFFu) == 0) return fail(errc::byte_swapped, section::header, 4, gguf_version, version);
    if (version == 1) return fail(errc::version_unsupported, section::header, 4, gguf_version, version);
    if (version > gguf_version) return fail(errc::version_too_new, section::header, 4, gguf_version, version);
    view_.version_ = version;

    std::int64_t n_tensors = 0, n_kv = 0;
    if (!read(n_tensors, section::header, "n_tensors") || !read(n_kv, section::header, "n_kv")) return false;
    if (n_tensors < 0) {
        subject("n_tensors");
        return fail(errc::negative_count, section::header, 8, 0, static_cast<std::uint64_t>(n_tensors));
    }
    if (n_kv < 0) {
        subject("n_kv");
        return fail(errc::negative_count, section::header, 16, 0, static_cast<std::uint64_t>(n_kv));
    }
    // Bound both counts by what the rest of the file could hold, before reserving anything. (The
    // whole file's rest, so a head gives the whole file's verdict; reservations stay bounded by the
    // records the head really holds, see records_to_reserve.)
    const std::uint64_t rest = cur_.file_remaining();
    const std::uint64_t max_kv = std::min(rest / detail::min_kv_bytes, caps_.max_kvs);
    if (static_cast<std::uint64_t>(n_kv) > max_kv) {
        subject("n_kv");
        return fail(errc::count_too_large, section::header, 16, max_kv, static_cast<std::uint64_t>(n_kv));
    }
    const std::uint64_t max_tensors =
        std::min((rest - static_cast<std::uint64_t>(n_kv) * detail::min_kv_bytes) / detail::min_tensor_bytes,
                 caps_.max_tensors);
    if (static_cast<std::uint64_t>(n_tensors) > max_tensors) {
        subject("n_tensors");
        return fail(errc::count_too_large, section::header, 8, max_tensors, static_cast<std::uint64_t>(n_tensors));
    }
    n_kv_ = static_cast<std::uint64_t>(n_kv);
    n_tensors_ = static_cast<std::uint64_t>(n_tensors);
    return true;
}

}  // namespace minfer::gguf
