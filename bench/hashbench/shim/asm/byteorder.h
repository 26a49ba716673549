#ifndef SHIM_ASM_BYTEORDER_H
#define SHIM_ASM_BYTEORDER_H
#define cpu_to_be32(x) __builtin_bswap32(x)
#define cpu_to_be64(x) __builtin_bswap64(x)
#define be32_to_cpu(x) __builtin_bswap32(x)
#define le32_to_cpu(x) (x)
#define cpu_to_le32(x) (x)
#define le32_to_cpus(x) do { } while (0)
#define cpu_to_le32_array(p, n) do { } while (0)
#define le32_to_cpu_array(p, n) do { } while (0)
#endif
