/* Userspace stand-in for the kernel headers lib/crypto needs (hashbench only). */
#ifndef SHIM_LINUX_TYPES_H
#define SHIM_LINUX_TYPES_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef uint32_t __le32;
typedef uint64_t __le64;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef uint32_t __u32;
typedef uint8_t __u8;
#endif
