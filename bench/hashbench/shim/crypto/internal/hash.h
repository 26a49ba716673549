#ifndef SHIM_CRYPTO_INTERNAL_HASH_H
#define SHIM_CRYPTO_INTERNAL_HASH_H
#include <asm/byteorder.h>
struct shash_desc { void *tfm; char ctx[256]; };
#define shash_desc_ctx(d) ((void *)(d)->ctx)
#define crypto_shash_digestsize(tfm) 32	/* sha256, not sha224 */
#endif
