/* The layout qpo's packet-event program (packet_events.bpf.c) and its loader
 * (wire/packet_events.cpp) share: rules in, per-rule state and the hits out. C, for both
 * compilers: clang -target bpf and the C++ build. */
#ifndef QPO_WIRE_BPF_PACKET_EVENTS_H
#define QPO_WIRE_BPF_PACKET_EVENTS_H

#include <linux/types.h>

#define QPO_MAX_RULES 32
#define QPO_MAX_HITS 1024
/* A duplicate's clone carries this mark through the hook again and passes untouched. */
#define QPO_CLONE_MARK 0x51504f31u

enum qpo_match { QPO_MATCH_PSN = 0, QPO_MATCH_NTH = 1 };
enum qpo_action { QPO_ACT_DROP = 0, QPO_ACT_CORRUPT = 1, QPO_ACT_ECN_CE = 2, QPO_ACT_DUPLICATE = 3, QPO_ACT_DELAY = 4 };
/* A delay runs on the sender's egress under a prio qdisc 5150: whose band 3 is a netem: the
 * program sends the packet there by its class (direct action; 0 leaves the priomap's band). */
#define QPO_PRIO_HANDLE 0x5150u
#define QPO_DELAY_CLASSID ((QPO_PRIO_HANDLE << 16) | 3u)
/* Which packets of the flow a rule counts (its relative PSNs and its Nth are among these). */
enum qpo_packets {
  QPO_PKTS_ANY = 0,
  QPO_PKTS_REQUEST = 1,       /* sends, writes, read requests, atomics */
  QPO_PKTS_ACK = 2,           /* Acknowledge with an ACK syndrome */
  QPO_PKTS_NAK = 3,           /* Acknowledge with a NAK syndrome */
  QPO_PKTS_RNR_NAK = 4,       /* Acknowledge with an RNR NAK syndrome */
  QPO_PKTS_READ_RESPONSE = 5, /* RDMA Read Response First/Middle/Last/Only */
  QPO_PKTS_OPCODE = 6,        /* exactly `opcode` */
};

struct qpo_rule {
  __u32 used;
  __u32 dest_qpn;      /* the BTH destination QP: the receiving QP of this host */
  __u32 match;         /* enum qpo_match */
  __u32 value;         /* the relative PSN (from the first counted packet's) or N (1: the first) */
  __u32 transmission;  /* QPO_MATCH_PSN: 0 every transmission, k the kth (1: the first) */
  __u32 action;        /* enum qpo_action */
  __u32 packets;       /* enum qpo_packets */
  __u32 opcode;        /* QPO_PKTS_OPCODE */
};

struct qpo_state {
  __u32 have_base;
  __u32 base;          /* the PSN of the first counted packet */
  __u32 seen;          /* counted packets so far */
  __u32 target_seen;   /* transmissions of the target PSN so far */
  __u32 hits;          /* packets the action was applied to */
  __u32 pad;
};

struct qpo_hit {
  __u64 ns;            /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
  __u32 rule;
  __u32 psn;
  __u32 transmission;  /* which transmission of its PSN this was (1: first) */
  __u32 opcode;
};

#endif
