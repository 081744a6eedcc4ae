// in_place: a new head over an old one, with an undo journal (see in_place.hpp for the design).
//
// Journal format (little-endian), written whole through atomic_file so that under its name it is
// always complete:
//   "MINFER-UNDO-1\n\0\0"   16 bytes of magic
//   u64 file_size            the model's size (never changed by the edit)
//   u64 head_size            D, the data offset: the bytes the edit rewrites
//   u64 checksum             FNV-1a 64 of everything after this field
//   head_size bytes          the old head
//   head_size bytes          the new head
// Recovery trusts a journal only when its checksum holds, its file_size is the model's and every
// byte of the model's head equals the old or the new head at that position (what an interrupted
// write can leave); anything else is journal_invalid and the model is not touched.
#include "minfer/gguf_write/in_place.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "copy.hpp"
#include "errors.hpp"
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace minfer::gguf {
namespace {

constexpr std::array<char, 16> journal_magic{'M', 'I', 'N', 'F', 'E', 'R', '-', 'U',
                                             'N', 'D', 'O', '-', '1', '\n', '\0', '\0'};
constexpr std::size_t journal_fixed = journal_magic.size() + 3 * sizeof(std::uint64_t);

std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
    for (const std::byte b : bytes) {
        h ^= static_cast<std::uint8_t>(b);
        h *= 0x100000001b3ull;
    }
    return h;
}

void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
    std::array<std::byte, 8> b{};
    std::memcpy(b.data(), &v, 8);
    out.insert(out.end(), b.begin(), b.end());
}

std::uint64_t get_u64(std::span<const std::byte> in, std::size_t at) {
    std::uint64_t v = 0;
    std::memcpy(&v, in.data() + at, 8);
    return v;
}

bool path_exists(const std::filesystem::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

error journal_present_error(const std::filesystem::path& model_file) {
    error e = detail::file_error(gguf::write_codes::journal_present, undo_journal_path(model_file), {});
    return e;
}

// A descriptor closed on scope exit.
struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

// Open the model read-write and take an exclusive advisory lock, so two in-place edits (or an edit
// and a recovery) of one file never interleave.
result<int> open_locked(const std::filesystem::path& file, fd_guard& guard) {
    guard.fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (guard.fd < 0) return unexpected(detail::file_error(errc::io_error, file, "open for writing", errno));
    if (::flock(guard.fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        return unexpected(detail::file_error(errc::io_error, file,
                                     err == EWOULDBLOCK ? "lock (another in-place edit of this file is running)"
                                                        : "lock",
                                     err));
    }
    return guard.fd;
}

result<std::vector<std::byte>> read_head(int fd, const std::filesystem::path& file, std::uint64_t n) {
    std::vector<std::byte> head(static_cast<std::size_t>(n));
    const auto s = detail::read_all(fd, head, 0);
    if (!s.ok())
        return unexpected(detail::file_error(errc::io_error, file,
                                     s.failed == detail::copy_status::what::short_source ? "read (the file is shorter than its head)"
                                                                                      : "read",
                                     s.failed == detail::copy_status::what::short_source ? ESTALE : s.err));
    return head;
}

result<void> write_head(int fd, const std::filesystem::path& file, std::span<const std::byte> head) {
    if (const auto s = detail::write_all(fd, head, 0); !s.ok())
        return unexpected(detail::file_error(errc::io_error, file, "write the new header", s.err));
    if (::fsync(fd) != 0) return unexpected(detail::file_error(errc::io_error, file, "fsync", errno));
    return {};
}

// Remove the journal and make its removal durable.
result<void> remove_journal(const std::filesystem::path& journal) {
    if (::unlink(journal.c_str()) != 0 && errno != ENOENT)
        return unexpected(detail::file_error(errc::io_error, journal, "remove the undo journal", errno));
    const std::filesystem::path dir = journal.has_parent_path() ? journal.parent_path() : ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return unexpected(detail::file_error(errc::io_error, dir, "open the directory", errno));
    const int rc = ::fsync(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0) return unexpected(detail::file_error(errc::io_error, dir, "fsync the directory", err));
    return {};
}

}  // namespace

std::filesystem::path undo_journal_path(const std::filesystem::path& file) {
    std::filesystem::path j = file;
    j += ".minfer-undo";
    return j;
}

result<in_place_edit> plan_in_place(const model& m, std::uint32_t part, const writer& w) noexcept {
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    try {
        if (part >= m.parts().size()) {
            error e;
            e.code = errc::index_out_of_range;
            e.where = section::access;
            e.expected = m.parts().size();
            e.found = part;
            e.detail = "part";
            return unexpected(std::move(e));
        }
        const model_part& p = m.parts()[part];
        if (path_exists(undo_journal_path(p.path))) return unexpected(journal_present_error(p.path));
        const std::uint64_t D = p.view.data_offset();

        writer trial = w;
        trial.erase(in_place_padding_key);
        auto first = trial.make_plan();
        if (!first) return unexpected(std::move(first).error());

        std::uint64_t padding = 0;
        bool padded = false;
        if (first->data_offset() != D || first->table_end() > D) {
            // A u8 array: key (u64 length + bytes), type tag, element tag, u64 count, then the zeros.
            const std::uint64_t overhead = 8 + in_place_padding_key.size() + 4 + 4 + 8;
            const std::uint64_t needed = first->table_end() + overhead;
            if (first->table_end() > D || needed > D) {
                error e;
                e.code = gguf::write_codes::no_room_in_place;
                e.where = section::file;  // about the head as a whole, not a byte in it
                e.file = p.path.string();
                e.expected = D;
                e.found = first->table_end() > D ? first->table_end() : needed;
                return unexpected(std::move(e));
            }
            padding = D - needed;
            padded = true;
            const std::vector<std::byte> zeros(static_cast<std::size_t>(padding));
            trial.set_array(in_place_padding_key, value_type::u8, std::span<const std::byte>(zeros));
        }
        auto planned = padded ? trial.make_plan() : std::move(first);
        if (!planned) return unexpected(std::move(planned).error());

        // The data section must be read exactly as before: same start, same tensors at the same
        // offsets with the same sizes.
        const auto& infos = p.view.tensors();
        const auto tensors = planned->tensors();
        auto moved = [&](std::uint64_t expected, std::uint64_t found, std::int64_t index, std::string_view name) {
            error e;
            e.code = errc::offset_mismatch;
            e.where = section::tensor_info;
            e.file = p.path.string();
            e.expected = expected;
            e.found = found;
            e.index = index;
            e.subject = name;
            e.detail = "an in-place edit cannot move tensor data";
            return unexpected(std::move(e));
        };
        if (planned->data_offset() != D) return moved(D, planned->data_offset(), -1, {});
        if (tensors.size() != infos.size()) return moved(infos.size(), tensors.size(), -1, {});
        for (std::size_t i = 0; i < infos.size(); ++i) {
            if (tensors[i].name != infos[i].name || tensors[i].offset != infos[i].offset ||
                tensors[i].n_bytes != infos[i].n_bytes || tensors[i].type != infos[i].type)
                return moved(infos[i].offset, tensors[i].offset, static_cast<std::int64_t>(i), infos[i].name);
        }

        auto head = trial.head_bytes();
        if (!head) return unexpected(std::move(head).error());
        in_place_edit edit;
        edit.file = p.path;
        const auto old = p.file.bytes().first(static_cast<std::size_t>(D));
        edit.old_head.assign(old.begin(), old.end());
        edit.new_head = std::move(*head);
        edit.file_size = p.file.size();
        edit.padding_bytes = padded ? padding : 0;
        return edit;
    } catch (...) {
        return unexpected(detail::oom("planning an in-place edit"));
    }
}

result<void> apply_in_place(const in_place_edit& edit, model&& planned_from) noexcept {
    try {
        bool ours = false;
        for (const model_part& p : planned_from.parts()) ours = ours || p.path == edit.file;
        if (!ours)
            return unexpected(detail::file_error(errc::bad_value_text, edit.file,
                                                 "the model given is not the one this in-place edit was planned from"));
        // Close the model before its bytes change: nothing can read them through it afterwards.
        { model closing = std::move(planned_from); }
        const std::filesystem::path journal = undo_journal_path(edit.file);
        if (edit.new_head.size() != edit.old_head.size())
            return unexpected(detail::file_error(gguf::write_codes::no_room_in_place, edit.file, "the new head differs in size"));
        fd_guard guard;
        auto fd = open_locked(edit.file, guard);
        if (!fd) return unexpected(std::move(fd).error());
        if (path_exists(journal)) return unexpected(journal_present_error(edit.file));

        // The file must still be the one planned from.
        struct stat st {};
        if (::fstat(*fd, &st) != 0) return unexpected(detail::file_error(errc::io_error, edit.file, "stat", errno));
        if (static_cast<std::uint64_t>(st.st_size) != edit.file_size)
            return unexpected(detail::file_error(errc::io_error, edit.file, "the file changed since it was opened", ESTALE));
        auto current = read_head(*fd, edit.file, edit.old_head.size());
        if (!current) return unexpected(std::move(current).error());
        if (*current != edit.old_head)
            return unexpected(detail::file_error(errc::io_error, edit.file, "the file changed since it was opened", ESTALE));
        if (edit.new_head == edit.old_head) return {};  // nothing to write

        // 1. The journal, complete and durable before the model changes.
        std::vector<std::byte> body;
        body.reserve(journal_fixed + 2 * edit.old_head.size());
        body.insert(body.end(), reinterpret_cast<const std::byte*>(journal_magic.data()),
                    reinterpret_cast<const std::byte*>(journal_magic.data()) + journal_magic.size());
        put_u64(body, edit.file_size);
        put_u64(body, edit.old_head.size());
        put_u64(body, 0);  // checksum, filled below
        body.insert(body.end(), edit.old_head.begin(), edit.old_head.end());
        body.insert(body.end(), edit.new_head.begin(), edit.new_head.end());
        const std::uint64_t sum = fnv1a(std::span(body).subspan(journal_fixed));
        std::memcpy(body.data() + journal_magic.size() + 16, &sum, 8);
        {
            atomic_file_options o;
            o.replace_existing = false;  // a journal that appeared meanwhile is never overwritten
            o.mode = 0600;
            auto out = atomic_file::create(journal, o);
            if (!out) return unexpected(std::move(out).error());
            if (const auto s = detail::write_all(out->fd(), body, 0); !s.ok())
                return unexpected(detail::file_error(errc::io_error, journal, "write the undo journal", s.err));
            if (auto r = out->commit(); !r) {
                if (r.error().sys_errno == EEXIST) return unexpected(journal_present_error(edit.file));
                return r;
            }
        }
        // 2. The new head, durable. A failure here leaves the journal: recover_in_place restores.
        if (auto r = write_head(*fd, edit.file, edit.new_head); !r) {
            // Try to put the old head back at once; if that fails too, the journal stays for recovery.
            if (write_head(*fd, edit.file, edit.old_head)) (void)remove_journal(journal);
            return r;
        }
        // 3. The journal goes: the edit is complete.
        return remove_journal(journal);
    } catch (...) {
        return unexpected(detail::oom("an in-place edit"));
    }
}

result<recovery> recover_in_place(const std::filesystem::path& file) noexcept {
    try {
        const std::filesystem::path journal = undo_journal_path(file);
        fd_guard guard;
        auto fd = open_locked(file, guard);
        if (!fd) return unexpected(std::move(fd).error());

        fd_guard jguard;
        jguard.fd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (jguard.fd < 0) {
            if (errno == ENOENT) return recovery::nothing_to_do;
            return unexpected(detail::file_error(errc::io_error, journal, "open the undo journal", errno));
        }
        struct stat jst {};
        struct stat st {};
        if (::fstat(jguard.fd, &jst) != 0) return unexpected(detail::file_error(errc::io_error, journal, "stat", errno));
        if (::fstat(*fd, &st) != 0) return unexpected(detail::file_error(errc::io_error, file, "stat", errno));
        const auto jsize = static_cast<std::uint64_t>(jst.st_size);
        auto invalid = [&](std::string why) { return unexpected(detail::file_error(gguf::write_codes::journal_invalid, journal, std::move(why))); };
        if (jsize < journal_fixed) return invalid("it is shorter than its fixed header");
        // Its size is checked against the model before anything is allocated from it.
        const auto file_size = static_cast<std::uint64_t>(st.st_size);
        std::vector<std::byte> fixed(journal_fixed);
        if (const auto s = detail::read_all(jguard.fd, fixed, 0); !s.ok())
            return unexpected(detail::file_error(errc::io_error, journal, "read the undo journal", s.err));
        if (std::memcmp(fixed.data(), journal_magic.data(), journal_magic.size()) != 0)
            return invalid("it does not start with the journal magic");
        const std::uint64_t recorded_size = get_u64(fixed, 16);
        const std::uint64_t head = get_u64(fixed, 24);
        const std::uint64_t sum = get_u64(fixed, 32);
        if (recorded_size != file_size)
            return invalid("it was made for a file of " + std::to_string(recorded_size) + " bytes, this one has " +
                           std::to_string(file_size));
        if (head > file_size || head > (jsize - journal_fixed) / 2 || jsize != journal_fixed + 2 * head)
            return invalid("its recorded head size (" + std::to_string(head) + " bytes) does not match its length");
        std::vector<std::byte> heads(static_cast<std::size_t>(2 * head));
        if (const auto s = detail::read_all(jguard.fd, heads, journal_fixed); !s.ok())
            return unexpected(detail::file_error(errc::io_error, journal, "read the undo journal", s.err));
        if (fnv1a(heads) != sum) return invalid("its checksum does not match (the journal is damaged)");
        const std::span<const std::byte> old_head = std::span(heads).first(static_cast<std::size_t>(head));
        const std::span<const std::byte> new_head = std::span(heads).subspan(static_cast<std::size_t>(head));

        auto current = read_head(*fd, file, head);
        if (!current) return unexpected(std::move(current).error());
        if (std::equal(current->begin(), current->end(), new_head.begin())) {
            // The new head is what a read sees, but it may still be only in the page cache (the edit
            // was killed between its write and its fsync): make it durable before the journal, the
            // only other copy of it, goes. Without this a power loss could leave a torn head and no
            // journal.
            if (::fsync(*fd) != 0) return unexpected(detail::file_error(errc::io_error, file, "fsync", errno));
            if (auto r = remove_journal(journal); !r) return unexpected(std::move(r).error());
            return recovery::completed;
        }
        // Only a mix of the two heads is something this journal can explain.
        for (std::size_t i = 0; i < current->size(); ++i) {
            if ((*current)[i] != old_head[i] && (*current)[i] != new_head[i])
                return invalid("byte " + std::to_string(i) +
                               " of the file is neither the old nor the new header: the journal belongs to another "
                               "file or the file changed since");
        }
        if (auto r = write_head(*fd, file, old_head); !r) return unexpected(std::move(r).error());
        if (auto r = remove_journal(journal); !r) return unexpected(std::move(r).error());
        return recovery::rolled_back;
    } catch (...) {
        return unexpected(detail::oom("recovering an in-place edit"));
    }
}

result<bool> discard_journal(const std::filesystem::path& file) noexcept {
    try {
        const std::filesystem::path journal = undo_journal_path(file);
        // Under the model's lock, so that a journal an edit is writing right now is never taken.
        fd_guard guard;
        auto fd = open_locked(file, guard);
        if (!fd) return unexpected(std::move(fd).error());
        if (!path_exists(journal)) return false;
        if (auto r = remove_journal(journal); !r) return unexpected(std::move(r).error());
        return true;
    } catch (...) {
        return unexpected(detail::oom("discarding an undo journal"));
    }
}

}  // namespace minfer::gguf
