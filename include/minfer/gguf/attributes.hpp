#pragma once
// Compiler attributes used across the public API.

// MINFER_LIFETIMEBOUND marks an accessor whose returned view borrows from `*this` (or from an argument):
// clang then warns when the view outlives a temporary owner. Other compilers ignore it.
#if defined(__clang__) && defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define MINFER_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef MINFER_LIFETIMEBOUND
#define MINFER_LIFETIMEBOUND
#endif
