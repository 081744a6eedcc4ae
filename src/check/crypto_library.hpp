#pragma once
// OpenSSL's libcrypto, loaded on the first SHA-1/SHA-256 digest instead of linked: a command that
// hashes nothing (`minfer info`, `tensor`, `quantize`) does not map it at start-up. The types come
// from Debian's <openssl/evp.h>, so the calls are checked against the ABI the build found; only
// the addresses are looked up (libcrypto.so.3, OpenSSL 3's SONAME).
#include <openssl/evp.h>

#include "minfer/gguf/result.hpp"

namespace minfer::check::detail {

/// The libcrypto functions digest.cpp calls.
struct crypto_functions {
    EVP_MD_CTX* (*md_ctx_new)();
    void (*md_ctx_free)(EVP_MD_CTX* ctx);
    const EVP_MD* (*sha1)();
    const EVP_MD* (*sha256)();
    int (*digest_init_ex)(EVP_MD_CTX* ctx, const EVP_MD* type, ENGINE* impl);
    int (*digest_update)(EVP_MD_CTX* ctx, const void* d, size_t cnt);
    int (*digest_final_ex)(EVP_MD_CTX* ctx, unsigned char* md, unsigned int* s);
    unsigned long (*err_get_error)();
    void (*err_error_string_n)(unsigned long e, char* buf, size_t len);
    void (*err_clear_error)();
};

/// The process's libcrypto, loaded by the first call from any thread; later calls return the same
/// table. @returns check::codes::hash_unavailable (detail = the dynamic linker's message; the caller
/// names the hash) when libcrypto.so.3 or one of the functions cannot be found.
gguf::result<const crypto_functions*> crypto_library() noexcept;

}  // namespace minfer::check::detail
