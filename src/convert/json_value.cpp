// json_value: views of a json_tree.
#include "minfer/convert/json_value.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "json_tree.hpp"

namespace minfer::convert {

using detail::json_node;
using detail::number_kind;

std::string_view describe(json_kind kind) noexcept {
    switch (kind) {
        case json_kind::absent: return "absent";
        case json_kind::null: return "null";
        case json_kind::boolean: return "a boolean";
        case json_kind::number: return "a number";
        case json_kind::string: return "a string";
        case json_kind::array: return "an array";
        case json_kind::object: return "an object";
    }
    return "absent";
}

namespace {
const json_node* node_of(const detail::json_tree* tree, std::uint32_t node) noexcept {
    return tree != nullptr && node < tree->nodes.size() ? &tree->nodes[node] : nullptr;
}
}  // namespace

json_kind json_value::kind() const noexcept {
    const json_node* n = node_of(tree_, node_);
    return n != nullptr ? n->kind : json_kind::absent;
}

std::optional<bool> json_value::as_bool() const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::boolean) return std::nullopt;
    return n->boolean;
}

std::optional<std::int64_t> json_value::as_int() const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::number) return std::nullopt;
    if (n->number == number_kind::signed_integer) return static_cast<std::int64_t>(n->bits);
    if (n->number == number_kind::unsigned_integer && n->bits <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(n->bits);
    return std::nullopt;
}

std::optional<std::uint64_t> json_value::as_uint() const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::number) return std::nullopt;
    if (n->number == number_kind::unsigned_integer) return n->bits;
    // "-0" is an integer token nlohmann reads as signed 0
    if (n->number == number_kind::signed_integer && n->bits == 0) return 0;
    return std::nullopt;
}

std::optional<double> json_value::as_double() const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::number) return std::nullopt;
    switch (n->number) {
        case number_kind::unsigned_integer: return static_cast<double>(n->bits);
        case number_kind::signed_integer: return static_cast<double>(static_cast<std::int64_t>(n->bits));
        case number_kind::floating: {
            double d = 0;
            std::memcpy(&d, &n->bits, sizeof d);
            return d;
        }
        case number_kind::none: break;
    }
    return std::nullopt;
}

bool json_value::is_integer() const noexcept {
    const json_node* n = node_of(tree_, node_);
    return n != nullptr && n->kind == json_kind::number &&
           (n->number == number_kind::unsigned_integer || n->number == number_kind::signed_integer);
}

std::optional<std::string_view> json_value::as_string() const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::string) return std::nullopt;
    return tree_->string(*n);
}

std::size_t json_value::size() const noexcept {
    const json_node* n = node_of(tree_, node_);
    return n != nullptr && (n->kind == json_kind::array || n->kind == json_kind::object) ? n->child_count : 0;
}

json_value json_value::at(std::size_t i) const noexcept {
    if (i >= size()) return {};
    const json_node* n = node_of(tree_, node_);
    return {tree_, tree_->children[n->first_child + i]};
}

std::string_view json_value::key_at(std::size_t i) const noexcept {
    if (kind() != json_kind::object || i >= size()) return {};
    const json_node* n = node_of(tree_, node_);
    return tree_->key(tree_->nodes[tree_->children[n->first_child + i]]);
}

json_value json_value::member(std::string_view key) const noexcept {
    const json_node* n = node_of(tree_, node_);
    if (n == nullptr || n->kind != json_kind::object) return {};
    for (std::uint32_t i = 0; i < n->child_count; ++i) {
        const std::uint32_t child = tree_->children[n->first_child + i];
        if (tree_->key(tree_->nodes[child]) == key) return {tree_, child};
    }
    return {};
}

std::uint64_t json_value::offset() const noexcept {
    const json_node* n = node_of(tree_, node_);
    return n != nullptr ? n->offset : 0;
}

}  // namespace minfer::convert
