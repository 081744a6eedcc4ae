#pragma once
// Scratch space for tests: a fresh directory removed with everything in it, and a small tmpfs to fill
// (a full disk) mounted for one test and unmounted however the test ends. Shared by the toolbox's,
// the C API's and other tests that write files.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace minfer::test_support {

/// A fresh directory under the system temporary directory (mkdtemp: unique whatever runs beside it),
/// removed with everything in it.
class temp_dir {
public:
    explicit temp_dir(const std::string& tag = "test") {
        std::string pattern = (std::filesystem::temp_directory_path() / ("minfer." + tag + ".XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
        path_ = pattern;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& leaf) const { return path_ / leaf; }

private:
    std::filesystem::path path_;
};

/// A tmpfs of `size` (mount's size= text) mounted on a fresh directory. Needs root: check mounted()
/// and skip with why() otherwise.
class small_tmpfs {
public:
    explicit small_tmpfs(const std::string& size = "256k") : dir_("tmpfs") {
        mount_point_ = dir_ / "mnt";
        std::filesystem::create_directories(mount_point_);
        const std::string opts = "size=" + size + ",mode=0755";
        if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, opts.c_str()) != 0)
            why_ = "cannot mount a tmpfs on " + mount_point_.string() + ": " + std::strerror(errno);
        else
            mounted_ = true;
    }
    ~small_tmpfs() {
        if (mounted_ && ::umount(mount_point_.c_str()) != 0) (void)::umount2(mount_point_.c_str(), MNT_DETACH);
    }
    small_tmpfs(const small_tmpfs&) = delete;
    small_tmpfs& operator=(const small_tmpfs&) = delete;
    bool mounted() const { return mounted_; }
    const std::string& why() const { return why_; }
    /// The mount point: the small disk.
    const std::filesystem::path& path() const { return mount_point_; }
    /// The directory beside the mount point, on the normal disk.
    const temp_dir& disk() const { return dir_; }

private:
    temp_dir dir_;
    std::filesystem::path mount_point_;
    bool mounted_ = false;
    std::string why_;
};

}  // namespace minfer::test_support
