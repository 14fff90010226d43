// Whether this test binary is built with AddressSanitizer (gcc says so with __SANITIZE_ADDRESS__,
// clang with __has_feature): a few tests do less there, and say what and why where they do.
#pragma once

namespace akview::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}   // namespace akview::testing
