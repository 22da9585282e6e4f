// DIST_API marks what dist's libraries export. Shared builds compile with hidden visibility, so
// only the marked API (and the internals one dist library calls in another) are visible.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define DIST_API __attribute__((visibility("default")))
#else
#define DIST_API
#endif
