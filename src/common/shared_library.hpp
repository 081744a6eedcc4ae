#pragma once
// Internal, header-only: resolving a dlopen'ed library's functions into a table, for the libraries
// minfer loads on first use instead of linking (libcurl: src/remote/curl_library.cpp, libcrypto:
// src/check/crypto_library.cpp). Each loader keeps its own SONAMEs, table and error code.
#include <dlfcn.h>

#include <string>

namespace minfer::detail {

/// `fn` = the address of `name` in `handle`; when the library lacks it, false and the name appended
/// to `missing` (", "-separated), so that one message lists every absent function.
template <typename F>
bool resolve_symbol(void* handle, const char* name, F& fn, std::string& missing) {
    void* p = ::dlsym(handle, name);
    if (p == nullptr) {
        if (!missing.empty()) missing += ", ";
        missing += name;
        return false;
    }
    fn = reinterpret_cast<F>(p);
    return true;
}

}  // namespace minfer::detail
