#pragma once
// handle_registry: the open handles of one kind (contexts, writers), so that a NULL, freed or
// foreign pointer a C caller passes is refused instead of dereferenced. A pointer is looked up, never
// read. Each kind has its own registry: a writer passed where a context is expected is foreign.
#include <mutex>
#include <unordered_set>

namespace minfer::capi {

class handle_registry {
public:
    /// Register a new handle. Throws std::bad_alloc (callers catch).
    void add(const void* handle) {
        const std::lock_guard lock(mutex_);
        live_.insert(handle);
    }
    /// Unregister; false when the handle was not registered (nothing to free). Like contains(), it
    /// throws only what std::mutex::lock may (std::system_error): callers catch.
    bool remove(const void* handle) {
        const std::lock_guard lock(mutex_);
        return live_.erase(handle) != 0;
    }
    /// Whether the handle is registered (false for NULL).
    bool contains(const void* handle) const {
        if (handle == nullptr) return false;
        const std::lock_guard lock(mutex_);
        return live_.find(handle) != live_.end();
    }

private:
    mutable std::mutex mutex_;
    std::unordered_set<const void*> live_;
};

/// One registry per kind, created on first use and leaked on purpose: a call during static
/// destruction (another library's atexit) still finds it. May throw std::bad_alloc on first use.
template <class Kind>
handle_registry& registry_of() {
    static handle_registry* r = new handle_registry;
    return *r;
}

}  // namespace minfer::capi
