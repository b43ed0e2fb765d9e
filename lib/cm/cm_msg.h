/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cm_msg.h
 * The IB connection manager's messages (IBTA Vol. 1 12.6.5-12.6.11 and 12.11): REQ, MRA,
 * REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP as host-order structs, parsed and built
 * field by field from a 256-byte MAD. LAP and APR are recognised (their comm IDs are
 * parsed) so that the CM can refuse them cleanly. DPDK-free.
 *
 * The bit layout is the one Linux's drivers/infiniband/core/cm_msgs.h uses on the wire:
 * offsets below are into the 232-byte MAD data that follows the 24-byte common header.
 */
#ifndef RW_CM_MSG_H
#define RW_CM_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "mad.h"

/* Private-data sizes (IBTA Vol. 1 12.6.5-12.6.11, 12.11) */
#define CM_REQ_PD 92u
#define CM_MRA_PD 222u
#define CM_REJ_PD 148u
#define CM_REJ_ARI 72u
#define CM_REP_PD 196u
#define CM_RTU_PD 224u
#define CM_DREQ_PD 220u
#define CM_DREP_PD 224u
#define CM_SIDR_REQ_PD 216u
#define CM_SIDR_REP_PD 136u
#define CM_SIDR_REP_INFO 72u
#define CM_APR_INFO 72u
#define CM_APR_PD 148u

/* REQ transport service type (12.6.5 table 99; kernel cm_req_get_qp_type) */
enum cm_transport {
	CM_TRANSPORT_RC = 0,
	CM_TRANSPORT_UC = 1,
	CM_TRANSPORT_RD = 2,
	CM_TRANSPORT_EXT = 3, /* extended transport type, e.g. XRC (1) */
};

/* "Message MRAed" / "Message REJected" (12.6.6, 12.6.7) */
enum cm_msg_ref {
	CM_MSG_REF_REQ = 0,
	CM_MSG_REF_REP = 1,
	CM_MSG_REF_OTHER = 2, /* LAP */
};

/* REJ reasons (IBTA Vol. 1 table 103; the kernel's enum ib_cm_rej_reason) */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_EEC = 2,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_UNSUPPORTED = 5,
	CM_REJ_INVALID_COMM_ID = 6,
	CM_REJ_INVALID_COMM_INSTANCE = 7,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_CONSUMER_DEFINED = 28,
};

/* SIDR_REP status (12.11.3 table 110) */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1, /* service ID not supported */
	CM_SIDR_REJECT = 2,
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* APR status (12.8.2 table 106) */
#define CM_APR_UNSUPPORTED 2u

/** One path of a REQ (12.6.5: 44 bytes at data offset 52 (primary) and 96 (alternate)). */
struct cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label; /* 20 bits */
	uint8_t packet_rate; /* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;		   /* 4 bits */
	uint8_t subnet_local;	   /* 1 bit */
	uint8_t local_ack_timeout; /* 5 bits */
};

/** REQ (12.6.5). */
struct cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn; /* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn; /* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		    /* 24 bits */
	uint8_t remote_cm_response_timeout; /* 5 bits */
	uint8_t transport;		    /* 2 bits, enum cm_transport */
	uint8_t flow_control;		    /* 1 bit */
	uint32_t starting_psn;		    /* 24 bits */
	uint8_t local_cm_response_timeout;  /* 5 bits */
	uint8_t retry_count;		    /* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;	 /* 4 bits, IB MTU enum (1=256 ... 5=4096) */
	uint8_t rdc_exists;	 /* 1 bit */
	uint8_t rnr_retry_count; /* 3 bits */
	uint8_t max_cm_retries;	 /* 4 bits */
	uint8_t srq;		 /* 1 bit */
	uint8_t ext_transport;	 /* 3 bits */
	struct cm_path primary;
	struct cm_path alternate; /* all zero: none (alternate local LID 0 and GID 0) */
	uint8_t private_data[CM_REQ_PD];
};

/** MRA (12.6.6). */
struct cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;	 /* 2 bits, enum cm_msg_ref */
	uint8_t service_timeout; /* 5 bits */
	uint8_t private_data[CM_MRA_PD];
};

/** REJ (12.6.7). */
struct cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected; /* 2 bits, enum cm_msg_ref */
	uint8_t ari_length;   /* 7 bits, at most CM_REJ_ARI */
	uint16_t reason;      /* enum cm_rej_reason */
	uint8_t ari[CM_REJ_ARI];
	uint8_t private_data[CM_REJ_PD];
};

/** REP (12.6.8). */
struct cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;    /* 24 bits */
	uint32_t local_eecn;   /* 24 bits */
	uint32_t starting_psn; /* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;  /* 5 bits */
	uint8_t failover_accepted; /* 2 bits */
	uint8_t flow_control;	   /* 1 bit */
	uint8_t rnr_retry_count;   /* 3 bits */
	uint8_t srq;		   /* 1 bit */
	uint64_t local_ca_guid;
	uint8_t private_data[CM_REP_PD];
};

/** RTU (12.6.9). */
struct cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[CM_RTU_PD];
};

/** DREQ (12.6.10). */
struct cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn; /* 24 bits: the receiver's QPN/EECN */
	uint8_t private_data[CM_DREQ_PD];
};

/** DREP (12.6.11). */
struct cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[CM_DREP_PD];
};

/** SIDR_REQ (12.11.2). */
struct cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[CM_SIDR_REQ_PD];
};

/** SIDR_REP (12.11.3). */
struct cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;	     /* enum cm_sidr_status */
	uint8_t info_length; /* at most CM_SIDR_REP_INFO */
	uint32_t qpn;	     /* 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[CM_SIDR_REP_INFO];
	uint8_t private_data[CM_SIDR_REP_PD];
};

/** LAP (12.8.1) and APR (12.8.2): only the comm IDs (and APR's status) are decoded. */
struct cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
};
struct cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_length;
	uint8_t status;
};

/** A parsed CM MAD: the common header plus the message its attribute ID names. */
struct cm_msg {
	struct mad_hdr hdr; /* hdr.attr_id selects the member of u */
	union {
		struct cm_req req;
		struct cm_mra mra;
		struct cm_rej rej;
		struct cm_rep rep;
		struct cm_rtu rtu;
		struct cm_dreq dreq;
		struct cm_drep drep;
		struct cm_sidr_req sidr_req;
		struct cm_sidr_rep sidr_rep;
		struct cm_lap lap;
		struct cm_apr apr;
	} u;
};

/* Parse errors, one per drop cause (values continue enum mad_err). */
enum cm_msg_err {
	CM_MSG_OK = 0,
	CM_MSG_E_SHORT = MAD_E_SHORT, /* fewer than 256 bytes */
	CM_MSG_E_BASE_VERSION = MAD_E_BASE_VERSION,
	CM_MSG_E_CLASS = 3,	    /* management class is not CM */
	CM_MSG_E_CLASS_VERSION = 4, /* CM class version is not 2 */
	CM_MSG_E_METHOD = 5,	    /* not SEND (CM MADs are unsolicited sends) */
	CM_MSG_E_ATTR = 6,	    /* unknown attribute ID */
	CM_MSG_E_FIELD = 7,	    /* a length field out of range */
	CM_MSG_E_COUNT
};

/** Name of a parse error ("short", "class_version", ...), for counters and logs. */
const char *cm_msg_err_name(int err);
/** Name of a CM attribute ("REQ", "MRA", ...); "?" for others. */
const char *cm_attr_name(uint16_t attr_id);

/**
 * Parse @p len bytes at @p p as a CM MAD into @p m. Returns 0 or -enum cm_msg_err; never
 * reads beyond @p len. LAP/APR parse successfully (the caller refuses them).
 */
int cm_msg_parse(const uint8_t *p, size_t len, struct cm_msg *m);

/**
 * Build the CM MAD named by @p m->hdr.attr_id (one of MAD_ATTR_CM_*) with transaction ID
 * @p m->hdr.tid into @p mad (MAD_SIZE bytes, every byte written: base version 1, class
 * 0x07 version 2, method SEND, status 0, attribute modifier 0, reserved fields zero).
 * Returns 0, or -CM_MSG_E_ATTR for an unknown attribute (nothing written).
 */
int cm_msg_build(uint8_t mad[MAD_SIZE], const struct cm_msg *m);

/* The IB time encoding (12.7.x): 4.096 us * 2^t, in nanoseconds (t is clamped to 31). */
static inline uint64_t
cm_time_ns(uint8_t t)
{
	return 4096ull << (t > 31 ? 31 : t);
}

#endif
