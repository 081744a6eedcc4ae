#pragma once
// digest: the hashes of a byte stream that llama-gguf-hash prints (xxh64, xxh3, sha1, sha256, and its
// UUIDv5), computed by Debian's libxxhash and OpenSSL's libcrypto (which uses the CPU's SHA
// instructions), never by hand-written code. A hasher is fed any number of spans of any length
// (64-bit lengths: a tensor of 4 GiB or more is hashed whole, unlike llama-gguf-hash's SHA-1, which
// takes a 32-bit length and so hashes only nbytes mod 2^32 of it).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "minfer/gguf/result.hpp"

namespace minfer::check {

using gguf::result;

/// The hash types, in llama-gguf-hash's print order for one tensor (uuid is whole-model only).
enum class hash_kind : std::uint8_t {
    xxh64,   ///< XXH64, seed 0; printed big-endian (canonical), 16 hex digits
    xxh3,    ///< XXH3_64bits, no seed; printed big-endian, 16 hex digits
    sha1,    ///< 40 hex digits
    sha256,  ///< 64 hex digits
    uuid,    ///< llama.cpp's UUIDv5: SHA-1 of its namespace's 16 bytes then the data; 8-4-4-4-12 text
};
inline constexpr std::array<hash_kind, 5> all_hash_kinds{hash_kind::xxh64, hash_kind::xxh3, hash_kind::sha1,
                                                         hash_kind::sha256, hash_kind::uuid};

/// "xxh64", "xxh3", "sha1", "sha256", "uuid": the manifest's type words.
std::string_view to_string(hash_kind kind) noexcept;
/// The kind a manifest type word names; nullopt for any other word (exact, lowercase).
std::optional<hash_kind> parse_hash_kind(std::string_view word) noexcept;
/// Strength, for choosing from a manifest as llama-gguf-hash does: sha256 > sha1 > xxh64 > xxh3 > uuid.
int strength(hash_kind kind) noexcept;
/// Characters of the printed form: 16, 16, 40, 64, 36.
std::size_t text_length(hash_kind kind) noexcept;

/// The namespace of llama.cpp's model UUIDs: uuid5(NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp')
/// = ef001206-dadc-5f6d-a15f-3359e577d4e5, hashed before the data.
inline constexpr std::array<std::uint8_t, 16> llama_uuid_namespace{0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                                                   0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

/// A finished hash: its bytes in print order (xxh64/xxh3 big-endian) and its kind.
struct digest {
    hash_kind kind = hash_kind::xxh64;
    std::uint8_t size = 0;  ///< bytes used: 8, 8, 20, 32, 16
    std::array<std::uint8_t, 32> bytes{};

    /// The text llama-gguf-hash prints: lowercase hex; a uuid as 8-4-4-4-12.
    std::string text() const;
    friend bool operator==(const digest& a, const digest& b) noexcept {
        return a.kind == b.kind && a.size == b.size && a.bytes == b.bytes;
    }
};

/// One running hash. Move-only; update() may be called from any one thread at a time.
class hasher {
public:
    /// @returns out_of_memory, or hash_unavailable when libcrypto cannot start the digest.
    static result<hasher> make(hash_kind kind) noexcept;

    hasher() noexcept;
    hasher(hasher&&) noexcept;
    hasher& operator=(hasher&&) noexcept;
    hasher(const hasher&) = delete;
    hasher& operator=(const hasher&) = delete;
    ~hasher();

    hash_kind kind() const noexcept;
    /// Add bytes (any length, 64-bit).
    void update(std::span<const std::byte> bytes) noexcept;
    /// The digest of everything added. The hasher is then spent: finish() again or update() is a
    /// programming error (checked: a second finish returns the same digest; update is ignored).
    digest finish() noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

/// The digest of one span (for tests and small inputs).
result<digest> hash_bytes(hash_kind kind, std::span<const std::byte> bytes) noexcept;

/// Parse a digest's printed text (lowercase hex of the right length; a uuid in 8-4-4-4-12 form with
/// lowercase hex). nullopt when it is not that form; `why` then says what is wrong.
std::optional<digest> parse_digest(hash_kind kind, std::string_view text, std::string* why = nullptr);

}  // namespace minfer::check
