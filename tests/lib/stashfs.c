// SPDX-License-Identifier: GPL-2.0-only
/* Placeholder until the filesystem helpers land. */
