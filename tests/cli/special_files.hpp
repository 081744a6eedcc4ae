#pragma once
// Names that are not regular files, made in a test's own directory, for the tests of the rule that
// an output never replaces one (docs/CLI.md "Output files"). The character device is made with
// mknod (major 1, minor 3: what /dev/null is) so that a test never risks the system's /dev/null;
// without the right to mknod (not root, a container without CAP_MKNOD) it is left out and said so.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace minfer_cli_test {

struct special_file {
    std::string kind;         ///< "FIFO", "character device", … as the error message says it
    std::filesystem::path path;
    std::filesystem::file_type type;  ///< what must still be there after a refused write
};

// Make a `type` (fifo, character, socket, directory) at `path`. @returns false, with a note, only
// for a character device that mknod may not make here; any other failure fails the test.
inline bool make_special(const std::filesystem::path& path, std::filesystem::file_type type) {
    namespace fs = std::filesystem;
    fs::remove(path);
    switch (type) {
        case fs::file_type::fifo:
            if (::mkfifo(path.c_str(), 0644) == 0) return true;
            ADD_FAILURE() << "mkfifo " << path << ": " << std::strerror(errno);
            return false;
        case fs::file_type::character:
            if (::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) return true;
            std::fprintf(stderr, "note: mknod %s: %s; the character-device case is left out\n", path.c_str(),
                         std::strerror(errno));
            return false;
        case fs::file_type::socket: {
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            if (path.string().size() >= sizeof addr.sun_path) {
                ADD_FAILURE() << "socket path too long: " << path;
                return false;
            }
            std::memcpy(addr.sun_path, path.c_str(), path.string().size());
            const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
            const bool ok = s >= 0 && ::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
            if (!ok) ADD_FAILURE() << "bind a UNIX socket at " << path << ": " << std::strerror(errno);
            if (s >= 0) ::close(s);  // the name stays
            return ok;
        }
        case fs::file_type::directory: fs::create_directories(path); return true;
        default: ADD_FAILURE() << "make_special: no such kind"; return false;
    }
}

// What the error message calls each kind ("it is a FIFO (named pipe)", …).
inline std::string kind_name(std::filesystem::file_type type) {
    namespace fs = std::filesystem;
    switch (type) {
        case fs::file_type::fifo: return "FIFO";
        case fs::file_type::character: return "character device";
        case fs::file_type::socket: return "socket";
        case fs::file_type::directory: return "directory";
        default: return "?";
    }
}

inline constexpr std::filesystem::file_type special_types[] = {
    std::filesystem::file_type::fifo, std::filesystem::file_type::character, std::filesystem::file_type::socket,
    std::filesystem::file_type::directory};

// A FIFO, a character device (when mknod is allowed), a UNIX socket, a directory, each named
// `stem`.<kind> in `dir`.
inline std::vector<special_file> make_special_files(const std::filesystem::path& dir, const std::string& stem) {
    std::vector<special_file> out;
    const char* ext[] = {".fifo", ".chr", ".sock", ".dir"};
    for (std::size_t i = 0; i < std::size(special_types); ++i) {
        const std::filesystem::path p = dir / (stem + ext[i]);
        if (make_special(p, special_types[i])) out.push_back({kind_name(special_types[i]), p, special_types[i]});
    }
    return out;
}

// The names in a directory (a temporary left behind by a refused write would show here).
inline std::set<std::string> names_in(const std::filesystem::path& dir) {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

}  // namespace minfer_cli_test
