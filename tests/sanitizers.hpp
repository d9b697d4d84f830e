#pragma once
// Whether this test binary was built with AddressSanitizer (.ci/run's second build). Figures
// about the process's own memory mean nothing there: ASan's shadow memory and quarantine
// multiply every allocation's footprint.
namespace symmesh::testing {

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

}  // namespace symmesh::testing
