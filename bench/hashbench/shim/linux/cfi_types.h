/* SPDX-License-Identifier: GPL-2.0-only */
/* Enough of <linux/cfi_types.h> to assemble arch/x86/crypto/sha256*.S. */
#define SYM_TYPED_FUNC_START(name)	SYM_FUNC_START(name)
