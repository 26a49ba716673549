#ifndef SHIM_LINUX_UNALIGNED_H
#define SHIM_LINUX_UNALIGNED_H
#include <linux/types.h>
#include <string.h>
static inline u32 get_unaligned_be32(const void *p) { u32 v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline void put_unaligned_be32(u32 v, void *p) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static inline void put_unaligned_be64(u64 v, void *p) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }
static inline u32 get_unaligned_le32(const void *p) { u32 v; memcpy(&v, p, 4); return v; }
#endif
