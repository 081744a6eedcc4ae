// check_values: the value checks in a walk of their own (value_check.hpp). In a file of its own so
// that a program using only value_consumer (with its own walk) does not need the walker.
#include "minfer/check/value_check.hpp"

namespace minfer::check {

result<std::vector<tensor_verdict>> check_values(const gguf::model& m, const value_check_options& options,
                                                 const walk_options& walk) noexcept {
    if (auto whole = m.require_complete(); !whole) return gguf::unexpected(whole.error());
    auto c = value_consumer::make(m, options);
    if (!c) return gguf::unexpected(c.error());
    data_consumer* const list[] = {&*c};
    if (auto r = walk_model_data(m, list, walk); !r) return gguf::unexpected(r.error());
    return c->take();
}

}  // namespace minfer::check
