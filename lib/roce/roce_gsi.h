/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_gsi.h
 * QP1, the General Services Interface (IBTA Vol. 1 13.5), of every device: a UD QP
 * with Q_Key 0x80010000 and the default P_Key from roce_dev_create() on. It
 * receives and sends Management Datagrams of exactly 256 bytes (13.4.1) as UD
 * SEND-only packets; what a MAD means is the consumer's business (an ops table,
 * e.g. the IB CM), QP1 only checks, counts and delivers.
 *
 * Receive checks, in order, each a counted drop (enum roce_gsi_drop):
 *   opcode UD SEND_ONLY (QP1 is a UD QP, 13.5.1; SEND_ONLY with immediate is refused,
 *   a MAD carries none), DETH Q_Key == 0x80010000 (13.5.1.1: QP1 accepts the GSI
 *   Q_Key only), BTH P_Key matches the default partition (C9-42), payload of
 *   256 bytes, the common MAD header's base version (13.4.2), a handler registered
 *   and taking it. Invariant: rx_total == delivered + sum(drop[]).
 */
#ifndef ROCE_GSI_H
#define ROCE_GSI_H

#include <stdbool.h>
#include <stdint.h>

#include "mad_kind.h"

struct roce_dev;

/** Where a received MAD came from (everything a reply needs). */
struct roce_gsi_src {
	uint8_t gid[16];     /**< source GID (IPv4 as ::ffff:a.b.c.d) */
	uint8_t dst_gid[16]; /**< the local GID it was sent to */
	uint8_t mac[6];	     /**< source MAC */
	uint32_t qpn;	     /**< source QPN (DETH) */
	uint16_t pkey;	     /**< BTH P_Key */
	bool has_vlan;
	uint16_t vlan_id;
	uint8_t pcp;
	uint8_t dscp;
	uint16_t udp_sport; /**< UDP source port */
};

/** The consumer of QP1's MADs. */
struct roce_gsi_ops {
	/**
	 * One MAD, byte-exact, valid during the call only. Return 0 when it was taken,
	 * or non-zero to have it counted as ROCE_GSI_DROP_UNCLAIMED (no consumer for it,
	 * e.g. no connection manager). May call roce_gsi_send().
	 */
	int (*on_mad)(void *ctx, const uint8_t *mad, const struct roce_gsi_src *src);
};

/** Receive drops by cause. */
enum roce_gsi_drop {
	ROCE_GSI_DROP_BAD_OPCODE = 0, /**< not a UD SEND_ONLY (RC/UC/CNP to QP 1, ...) */
	ROCE_GSI_DROP_IMM,	      /**< UD SEND_ONLY with immediate */
	ROCE_GSI_DROP_BAD_QKEY,	      /**< DETH Q_Key is not 0x80010000 */
	ROCE_GSI_DROP_BAD_PKEY,	      /**< BTH P_Key is not the default partition */
	ROCE_GSI_DROP_SHORT,	      /**< payload shorter than a MAD */
	ROCE_GSI_DROP_LONG,	      /**< payload longer than a MAD */
	ROCE_GSI_DROP_BASE_VERSION,   /**< common header base version is not 1 */
	ROCE_GSI_DROP_NO_HANDLER,     /**< no roce_gsi_ops registered */
	ROCE_GSI_DROP_UNCLAIMED,      /**< the handler did not take it */
	ROCE_GSI_DROP__COUNT
};

/** Transmit errors by cause. */
enum roce_gsi_tx_err {
	ROCE_GSI_TX_BAD_DEST = 0, /**< no such source GID, or IPv4 to IPv6 */
	ROCE_GSI_TX_NO_MAC,	  /**< no MAC given and none resolved */
	ROCE_GSI_TX_REFUSED,	  /**< the port refused the frame */
	ROCE_GSI_TX_ERR__COUNT
};

enum roce_gsi_dir { ROCE_GSI_RX = 0, ROCE_GSI_TX = 1 };

struct roce_gsi_stats {
	uint64_t rx_total;  /**< packets to QP 1 that passed the device's frame checks */
	uint64_t delivered; /**< MADs taken by the handler */
	uint64_t drop[ROCE_GSI_DROP__COUNT];
	/** MADs by kind: RX counts those with a valid header (delivered or unclaimed), TX those
	 * sent */
	uint64_t mad[2][MAD_KIND__COUNT];
	uint64_t tx_total; /**< MADs sent */
	uint64_t tx_err[ROCE_GSI_TX_ERR__COUNT];
};

/** A MAD's destination. */
struct roce_gsi_dest {
	uint8_t gid[16];	 /**< destination GID */
	unsigned int sgid_index; /**< local GID to send from */
	uint8_t mac[6];		 /**< destination MAC; all zero: the device's resolve_mac op */
	uint32_t qpn;		 /**< remote QP (1 for the peer's GSI) */
	uint32_t qkey;		 /**< remote Q_Key (0x80010000 for QP 1) */
	uint16_t pkey;		 /**< 0: the default P_Key */
	uint8_t traffic_class;	 /**< 0: the device's DSCP */
};

/** Internal state of QP1 (in struct roce_dev). */
struct roce_gsi {
	struct roce_gsi_ops ops;
	void *ctx;
	uint32_t psn; /**< next PSN QP1 sends */
	struct roce_gsi_stats st;
};

/** Register the consumer of QP1's MADs (NULL ops: none, MADs counted NO_HANDLER). */
void roce_gsi_set_ops(struct roce_dev *dev, const struct roce_gsi_ops *ops, void *ctx);
/** Set QP1's next send PSN (24 bits); the rnic derives it from --seed. */
void roce_gsi_set_psn(struct roce_dev *dev, uint32_t psn);
/**
 * Send the 256-byte @p mad from QP 1 to @p d: 0, or -errno (counted in tx_err). A MAD
 * the port refuses is not queued: the consumer's own retry timer (the CM's) resends
 * it. May be called from roce_gsi_ops.on_mad (a reply).
 */
int roce_gsi_send(struct roce_dev *dev, const struct roce_gsi_dest *d, const uint8_t *mad);
/** Snapshot of QP1's counters. */
void roce_gsi_stats(const struct roce_dev *dev, struct roce_gsi_stats *out);
/** Counter names: "bad_qkey", ...; "bad_dest", ... */
const char *roce_gsi_drop_name(enum roce_gsi_drop d);
const char *roce_gsi_tx_err_name(enum roce_gsi_tx_err e);

#endif
