// digest: the hashes through Debian's libraries. xxHash's streaming states for xxh64/xxh3 (its header
// in XXH_INLINE_ALL mode, the library's own code compiled in: no libxxhash.so to load); OpenSSL's
// EVP interface, from libcrypto loaded on the first SHA digest (crypto_library.hpp), for SHA-1/SHA-256 (EVP, not the deprecated SHA256_* calls, so the provider picks the
// SHA-NI / AVX2 code paths and the length is a size_t). The uuid is a SHA-1 primed with llama.cpp's
// namespace bytes, finished into a version-5, variant-10 UUID as llama-gguf-hash does.
#include "minfer/check/digest.hpp"
#include "minfer/check/errors.hpp"
#include "errors.hpp"

#include <new>

#include "crypto_library.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace minfer::check {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

std::string_view to_string(hash_kind kind) noexcept {
    switch (kind) {
        case hash_kind::xxh64: return "xxh64";
        case hash_kind::xxh3: return "xxh3";
        case hash_kind::sha1: return "sha1";
        case hash_kind::sha256: return "sha256";
        case hash_kind::uuid: return "uuid";
    }
    return "?";
}

std::optional<hash_kind> parse_hash_kind(std::string_view word) noexcept {
    for (hash_kind k : all_hash_kinds)
        if (to_string(k) == word) return k;
    return std::nullopt;
}

int strength(hash_kind kind) noexcept {
    switch (kind) {
        case hash_kind::sha256: return 5;
        case hash_kind::sha1: return 4;
        case hash_kind::xxh64: return 3;
        case hash_kind::xxh3: return 2;
        case hash_kind::uuid: return 1;
    }
    return 0;
}

std::size_t text_length(hash_kind kind) noexcept {
    switch (kind) {
        case hash_kind::xxh64:
        case hash_kind::xxh3: return 16;
        case hash_kind::sha1: return 40;
        case hash_kind::sha256: return 64;
        case hash_kind::uuid: return 36;
    }
    return 0;
}

namespace {

std::uint8_t digest_size(hash_kind kind) noexcept {
    switch (kind) {
        case hash_kind::xxh64:
        case hash_kind::xxh3: return 8;
        case hash_kind::sha1: return 20;
        case hash_kind::sha256: return 32;
        case hash_kind::uuid: return 16;
    }
    return 0;
}

constexpr char hex_digits[] = "0123456789abcdef";

// The 8-4-4-4-12 groups: a dash before bytes 4, 6, 8 and 10.
constexpr bool dash_before(std::size_t byte) noexcept { return byte == 4 || byte == 6 || byte == 8 || byte == 10; }

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

void put_be64(std::array<std::uint8_t, 32>& out, std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * (7 - i)));
}

std::string openssl_reason(const detail::crypto_functions& c) {
    const unsigned long e = c.err_get_error();
    if (e == 0) return "libcrypto gave no reason";
    char buf[256];
    c.err_error_string_n(e, buf, sizeof buf);
    c.err_clear_error();
    return buf;
}

}  // namespace

std::string digest::text() const {
    std::string s;
    s.reserve(std::size_t{size} * 2 + 4);
    for (std::size_t i = 0; i < size; ++i) {
        if (kind == hash_kind::uuid && dash_before(i)) s.push_back('-');
        s.push_back(hex_digits[static_cast<std::size_t>(bytes[i] >> 4)]);
        s.push_back(hex_digits[static_cast<std::size_t>(bytes[i] & 15)]);
    }
    return s;
}

std::optional<digest> parse_digest(hash_kind kind, std::string_view text, std::string* why) {
    auto fail = [&](std::string reason) -> std::optional<digest> {
        if (why != nullptr) *why = std::move(reason);
        return std::nullopt;
    };
    if (text.size() != text_length(kind))
        return fail("hash has " + std::to_string(text.size()) + " characters, expected " +
                    std::to_string(text_length(kind)));
    digest d;
    d.kind = kind;
    d.size = digest_size(kind);
    std::size_t pos = 0;
    for (std::size_t i = 0; i < d.size; ++i) {
        if (kind == hash_kind::uuid && dash_before(i)) {
            if (text[pos] != '-') return fail("a uuid has a '-' at character " + std::to_string(pos + 1));
            ++pos;
        }
        const int hi = hex_value(text[pos]);
        const int lo = hex_value(text[pos + 1]);
        if (hi < 0 || lo < 0)
            return fail("character " + std::to_string(pos + (hi < 0 ? 1 : 2)) +
                        " is not a lowercase hexadecimal digit");
        d.bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
        pos += 2;
    }
    return d;
}

struct hasher::state {
    hash_kind kind = hash_kind::xxh64;
    bool finished = false;
    digest result;
    XXH64_state_t* x64 = nullptr;
    XXH3_state_t* x3 = nullptr;
    EVP_MD_CTX* md = nullptr;
    const detail::crypto_functions* crypto = nullptr;  // set with md

    ~state() {
        if (x64 != nullptr) XXH64_freeState(x64);
        if (x3 != nullptr) XXH3_freeState(x3);
        if (md != nullptr) crypto->md_ctx_free(md);
    }
};

hasher::hasher() noexcept = default;
hasher::hasher(hasher&&) noexcept = default;
hasher& hasher::operator=(hasher&&) noexcept = default;
hasher::~hasher() = default;

hash_kind hasher::kind() const noexcept { return s_ ? s_->kind : hash_kind::xxh64; }

result<hasher> hasher::make(hash_kind kind) noexcept {
    auto unavailable = [&](std::string reason) {
        error e;
        e.code = check::codes::hash_unavailable;
        e.subject = to_string(kind);
        try {
            e.detail = std::move(reason);
        } catch (...) {  // NOLINT(bugprone-empty-catch): the code says enough without the detail
        }
        return unexpected(std::move(e));
    };
    hasher h;
    h.s_.reset(new (std::nothrow) state);
    if (!h.s_) return unexpected(detail::code_error(errc::out_of_memory));
    h.s_->kind = kind;
    switch (kind) {
        case hash_kind::xxh64:
            h.s_->x64 = XXH64_createState();
            if (h.s_->x64 == nullptr) return unexpected(detail::code_error(errc::out_of_memory));
            if (XXH64_reset(h.s_->x64, 0) == XXH_ERROR) return unavailable("XXH64_reset failed");
            break;
        case hash_kind::xxh3:
            h.s_->x3 = XXH3_createState();
            if (h.s_->x3 == nullptr) return unexpected(detail::code_error(errc::out_of_memory));
            if (XXH3_64bits_reset(h.s_->x3) == XXH_ERROR) return unavailable("XXH3_64bits_reset failed");
            break;
        case hash_kind::sha1:
        case hash_kind::sha256:
        case hash_kind::uuid: {
            auto lib = detail::crypto_library();
            if (!lib) {
                error e = lib.error();
                if (e.code == check::codes::hash_unavailable) e.subject = to_string(kind);
                return unexpected(std::move(e));
            }
            const detail::crypto_functions& c = **lib;
            h.s_->md = c.md_ctx_new();
            if (h.s_->md == nullptr) return unexpected(detail::code_error(errc::out_of_memory));
            h.s_->crypto = &c;
            const EVP_MD* md = kind == hash_kind::sha256 ? c.sha256() : c.sha1();
            if (md == nullptr || c.digest_init_ex(h.s_->md, md, nullptr) != 1)
                return unavailable("EVP_DigestInit_ex: " + openssl_reason(c));
            if (kind == hash_kind::uuid &&
                c.digest_update(h.s_->md, llama_uuid_namespace.data(), llama_uuid_namespace.size()) != 1)
                return unavailable("EVP_DigestUpdate: " + openssl_reason(c));
            break;
        }
        default: return unavailable("unknown hash kind");
    }
    return h;
}

void hasher::update(std::span<const std::byte> bytes) noexcept {
    if (!s_ || s_->finished || bytes.empty()) return;
    // Neither library fails on a valid state (xxHash returns XXH_OK for a non-null state; EVP's
    // SHA update fails only for a context that was never initialised, which make() rules out).
    switch (s_->kind) {
        case hash_kind::xxh64: (void)XXH64_update(s_->x64, bytes.data(), bytes.size()); break;
        case hash_kind::xxh3: (void)XXH3_64bits_update(s_->x3, bytes.data(), bytes.size()); break;
        default: (void)s_->crypto->digest_update(s_->md, bytes.data(), bytes.size()); break;
    }
}

digest hasher::finish() noexcept {
    if (!s_) return {};
    if (s_->finished) return s_->result;
    digest& d = s_->result;
    d.kind = s_->kind;
    d.size = digest_size(s_->kind);
    switch (s_->kind) {
        case hash_kind::xxh64: put_be64(d.bytes, XXH64_digest(s_->x64)); break;
        case hash_kind::xxh3: put_be64(d.bytes, XXH3_64bits_digest(s_->x3)); break;
        case hash_kind::sha1:
        case hash_kind::sha256: {
            unsigned int n = 0;
            (void)s_->crypto->digest_final_ex(s_->md, d.bytes.data(), &n);
            break;
        }
        case hash_kind::uuid: {
            std::array<std::uint8_t, EVP_MAX_MD_SIZE> sha1{};
            unsigned int n = 0;
            (void)s_->crypto->digest_final_ex(s_->md, sha1.data(), &n);
            for (std::size_t i = 0; i < 16; ++i) d.bytes[i] = sha1[i];
            d.bytes[6] = static_cast<std::uint8_t>((d.bytes[6] & 0x0f) | 0x50);  // version 5
            d.bytes[8] = static_cast<std::uint8_t>((d.bytes[8] & 0x3f) | 0x80);  // variant 10xx
            break;
        }
    }
    s_->finished = true;
    return d;
}

result<digest> hash_bytes(hash_kind kind, std::span<const std::byte> bytes) noexcept {
    auto h = hasher::make(kind);
    if (!h) return unexpected(h.error());
    h->update(bytes);
    return h->finish();
}

}  // namespace minfer::check
