// libcrypto through dlopen (why: crypto_library.hpp). Loaded once per process under std::call_once;
// a failure is remembered as the error every later call returns.
#include "crypto_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "../common/shared_library.hpp"

#include "minfer/check/errors.hpp"

namespace minfer::check::detail {
namespace {

using minfer::detail::resolve_symbol;

struct loaded {
    crypto_functions fns{};
    gguf::error failure;
    bool ok = false;
};

void load(loaded& l) noexcept {
    try {
        l.failure.code = codes::hash_unavailable;
        void* handle = ::dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = ::dlerror();
            l.failure.detail = std::string(why != nullptr ? why : "libcrypto.so.3 not found") +
                               " (install Debian's libssl3 for SHA-1, SHA-256 and uuid digests)";
            return;
        }
        std::string missing;
        crypto_functions& f = l.fns;
        bool all = resolve_symbol(handle, "EVP_MD_CTX_new", f.md_ctx_new, missing);
        all &= resolve_symbol(handle, "EVP_MD_CTX_free", f.md_ctx_free, missing);
        all &= resolve_symbol(handle, "EVP_sha1", f.sha1, missing);
        all &= resolve_symbol(handle, "EVP_sha256", f.sha256, missing);
        all &= resolve_symbol(handle, "EVP_DigestInit_ex", f.digest_init_ex, missing);
        all &= resolve_symbol(handle, "EVP_DigestUpdate", f.digest_update, missing);
        all &= resolve_symbol(handle, "EVP_DigestFinal_ex", f.digest_final_ex, missing);
        all &= resolve_symbol(handle, "ERR_get_error", f.err_get_error, missing);
        all &= resolve_symbol(handle, "ERR_error_string_n", f.err_error_string_n, missing);
        all &= resolve_symbol(handle, "ERR_clear_error", f.err_clear_error, missing);
        if (!all) {
            l.failure.detail = "the loaded libcrypto lacks " + missing;
            return;
        }
        l.ok = true;
    } catch (...) {  // a std::string that could not grow: the code says enough
        l.failure.code = gguf::errc::out_of_memory;
        l.failure.detail.clear();
    }
}

}  // namespace

gguf::result<const crypto_functions*> crypto_library() noexcept {
    static loaded l;
    static std::once_flag once;
    try {
        std::call_once(once, [] { load(l); });
    } catch (...) {  // call_once reports a failed pthread_once as std::system_error
        return gguf::unexpected(gguf::out_of_memory_error("loading libcrypto"));
    }
    if (l.ok) return &l.fns;
    try {
        return gguf::unexpected(gguf::error(l.failure));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("loading libcrypto"));
    }
}

}  // namespace minfer::check::detail
