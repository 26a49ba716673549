#ifndef SHIM_LINUX_KERNEL_H
#define SHIM_LINUX_KERNEL_H
#include <linux/types.h>
#include <string.h>
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#include <asm/byteorder.h>
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define __always_inline inline __attribute__((always_inline))
#define __init
#define __weak __attribute__((weak))
#define __alias(x) __attribute__((alias(#x)))

#include <errno.h>
#define pr_err(...) fprintf(stderr, __VA_ARGS__)
#define module_init(x)
#define late_initcall(x)
#include <stdio.h>
#define __must_check
#define EXPORT_SYMBOL(x)
#define EXPORT_SYMBOL_GPL(x)
#define MODULE_LICENSE(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_AUTHOR(x)
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define WARN_ON(c) (c)
#define IS_ENABLED(x) 0
#define __aligned(x) __attribute__((aligned(x)))
static inline u32 ror32(u32 w, unsigned int s) { return (w >> s) | (w << (32 - s)); }
static inline u32 rol32(u32 w, unsigned int s) { return (w << s) | (w >> (32 - s)); }
static inline void memzero_explicit(void *p, size_t n) { memset(p, 0, n); __asm__ volatile("" ::: "memory"); }
#endif
