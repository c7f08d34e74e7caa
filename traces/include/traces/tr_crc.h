/* SPDX-License-Identifier: BSD-2-Clause
 * The CRCs of InfiniBand and RoCEv2: the ICRC (CRC-32 over the invariant fields, see WIRE.md)
 * and, on native InfiniBand links, the VCRC (CRC-16 over the whole packet, IBA 7.8.2). */
#ifndef TR_CRC_H
#define TR_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CRC-32 as zlib's crc32(0, buf, len). */
uint32_t tr_crc32(const void *buf, size_t len);

/* The raw register update behind tr_crc32 (no initial or final inversion), for CRCs fed in
 * pieces: tr_crc32(b, n) == ~tr_crc32_update(~0u, b, n). */
uint32_t tr_crc32_update(uint32_t state, const void *buf, size_t len);

/* ICRC of a RoCEv2 packet. ip points at the IPv4 or IPv6 header; len counts the bytes from there
 * to the start of the ICRC (IP, UDP, BTH, extended headers, payload, pad). The result is the value
 * stored little-endian in the 4 bytes after the pad. Returns 0 when len is too short to hold the
 * headers the ICRC masks (callers check lengths first). */
uint32_t tr_icrc_roce(const uint8_t *ip, size_t len);

/* The same when the UDP header is not right after the fixed IP header: udp_off bytes from ip,
 * past IPv4 options or IPv6 extension headers, which the ICRC covers as they are. */
uint32_t tr_icrc_roce_at(const uint8_t *ip, size_t udp_off, size_t len);

/* ICRC of a native InfiniBand packet: lrh points at the LRH, len counts the bytes up to the ICRC.
 * Without a GRH only the LRH's VL is variant; with one (LNH = 3) the whole LRH is, as routers
 * rewrite it — the rule RoCEv2's eight 0xFF bytes inherit. Checked on 43/43 frames of
 * srinivaskoritala_infiniband.pcap. */
uint32_t tr_icrc_ib(const uint8_t *lrh, size_t len);

/* VCRC of a native InfiniBand packet: CRC-16 (x^16+x^12+x^3+x+1, reflected, initial and final
 * value 0xFFFF) over LRH..ICRC; len counts the bytes up to the VCRC, which is stored
 * little-endian after the ICRC. */
uint16_t tr_vcrc(const uint8_t *lrh, size_t len);

#ifdef __cplusplus
}
#endif

#endif
