// libcurl through dlopen (why: curl_library.hpp). Loaded once per process under std::call_once;
// a failure is remembered as the error every later call returns.
#include "curl_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "../common/shared_library.hpp"

#include "minfer/remote/errors.hpp"

namespace minfer::remote::detail {
namespace {

using minfer::detail::resolve_symbol;

// The SONAME the build linked against before (Debian's libcurl4: libcurl.so.4, OpenSSL flavour).
// libcurl-gnutls.so.4 exports the same ABI under other symbol versions; it is tried second so that a
// machine with only the GnuTLS flavour installed still works.
constexpr const char* candidates[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

struct loaded {
    curl_functions fns{};
    gguf::error failure;
    bool ok = false;
};

void load(loaded& l) noexcept {
    try {
        std::string tried;
        void* handle = nullptr;
        for (const char* soname : candidates) {
            handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
            if (handle != nullptr) break;
            const char* why = ::dlerror();
            if (!tried.empty()) tried += "; ";
            tried += why != nullptr ? why : soname;
        }
        l.failure.code = codes::library_unavailable;
        l.failure.subject = "libcurl";
        if (handle == nullptr) {
            l.failure.detail = tried + " (install Debian's libcurl4 to read http(s):// and hf:// models)";
            return;
        }
        std::string missing;
        curl_functions& f = l.fns;
        bool all = resolve_symbol(handle, "curl_global_init", f.global_init, missing);
        all &= resolve_symbol(handle, "curl_easy_init", f.easy_init, missing);
        all &= resolve_symbol(handle, "curl_easy_cleanup", f.easy_cleanup, missing);
        all &= resolve_symbol(handle, "curl_easy_reset", f.easy_reset, missing);
        all &= resolve_symbol(handle, "curl_easy_setopt", f.easy_setopt, missing);
        all &= resolve_symbol(handle, "curl_easy_perform", f.easy_perform, missing);
        all &= resolve_symbol(handle, "curl_easy_getinfo", f.easy_getinfo, missing);
        all &= resolve_symbol(handle, "curl_easy_strerror", f.easy_strerror, missing);
        all &= resolve_symbol(handle, "curl_slist_free_all", f.slist_free_all, missing);
        if (!all) {
            l.failure.detail = "the loaded libcurl lacks " + missing;
            return;  // the handle stays open: dlclose of a half-used library buys nothing
        }
        // Before any thread starts a transfer (curl_global_init is not thread-safe in older libcurl).
        if (const CURLcode rc = f.global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
            l.failure.detail = std::string("curl_global_init failed: ") + f.easy_strerror(rc);
            return;
        }
        l.ok = true;
    } catch (...) {  // a std::string that could not grow: the code says enough
        l.failure.code = gguf::errc::out_of_memory;
        l.failure.detail.clear();
    }
}

}  // namespace

gguf::result<curl_functions*> curl_library() noexcept {
    static loaded l;
    static std::once_flag once;
    try {
        std::call_once(once, [] { load(l); });
    } catch (...) {  // call_once reports a failed pthread_once as std::system_error
        return gguf::unexpected(gguf::out_of_memory_error("loading libcurl"));
    }
    if (l.ok) return &l.fns;
    try {
        return gguf::unexpected(gguf::error(l.failure));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("loading libcurl"));
    }
}

}  // namespace minfer::remote::detail
