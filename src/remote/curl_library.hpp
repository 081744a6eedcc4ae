#pragma once
// libcurl, loaded when the first URL is opened instead of linked: a local command (`minfer info
// FILE`) then maps no libcurl and none of its TLS, LDAP, Kerberos, SSH, RTMP, IDN and Brotli
// dependencies (30 shared objects whose relocation was a quarter of a local command's start-up).
// The types and constants still come from Debian's <curl/curl.h>, so the calls are checked by the
// compiler against the ABI of the library the build found; only the addresses are looked up.
#include <curl/curl.h>

#include "minfer/gguf/result.hpp"

namespace minfer::remote::detail {

/// The libcurl functions this library calls, resolved in the loaded libcurl.so.4.
struct curl_functions {
    CURLcode (*global_init)(long flags);
    CURL* (*easy_init)();
    void (*easy_cleanup)(CURL* curl);
    void (*easy_reset)(CURL* curl);
    CURLcode (*easy_setopt)(CURL* curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL* curl);
    CURLcode (*easy_getinfo)(CURL* curl, CURLINFO info, ...);
    const char* (*easy_strerror)(CURLcode code);
    void (*slist_free_all)(curl_slist* list);
};

/// The process's libcurl: loaded (and curl_global_init called) by the first call, from any thread;
/// later calls return the same table. @returns remote::codes::library_unavailable with dlerror's
/// text when libcurl.so.4 or one of its functions cannot be found. The table is writable so that a
/// test can wrap a function before its first transfer; nothing else writes it.
gguf::result<curl_functions*> curl_library() noexcept;

}  // namespace minfer::remote::detail
