#include "out_buffer.hpp"

namespace minfer::cli {

bool out_buffer::flush() noexcept {
    if (buf_.size() > 0 && ok_) {
        if (std::fwrite(buf_.data(), 1, buf_.size(), sink_) != buf_.size()) ok_ = false;
    }
    buf_.clear();
    if (ok_ && std::fflush(sink_) != 0) ok_ = false;
    return ok_;
}

}  // namespace minfer::cli
