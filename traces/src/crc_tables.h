/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef TR_CRC_TABLES_H
#define TR_CRC_TABLES_H

#include <stdint.h>

extern const uint32_t tr_crc32_table[8][256];
extern const uint16_t tr_crc16_table[256];

#endif
