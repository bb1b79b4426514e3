// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qpo's deterministic packet events: a tc ingress program on the netdev a host's RoCEv2
 * packets arrive through. Each rule names the receiving QP (the BTH's destination QP), which
 * packets it counts (requests, ACKs, NAKs, read responses, an opcode), the one it acts on (a
 * PSN relative to the first counted one and which transmission of it, or the Nth counted
 * packet) and the action: drop, corrupt the ICRC, mark ECN CE, or duplicate. Everything else
 * (the run's control connection, any non-RoCE packet, other QPs) passes untouched. A delay runs
 * on the sending host's egress instead, under qpo's prio qdisc (see QPO_DELAY_CLASSID). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "packet_events.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, QPO_MAX_RULES);
  __type(key, __u32);
  __type(value, struct qpo_rule);
} qpo_rules SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, QPO_MAX_RULES);
  __type(key, __u32);
  __type(value, struct qpo_state);
} qpo_states SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, QPO_MAX_HITS);
  __type(key, __u32);
  __type(value, struct qpo_hit);
} qpo_hits SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} qpo_hit_count SEC(".maps");

#define ROCE_PORT 4791

static __always_inline int counted(const struct qpo_rule *r, __u8 opcode, __u8 syndrome) {
  switch (r->packets) {
    case QPO_PKTS_ANY: return 1;
    case QPO_PKTS_REQUEST: return (opcode <= 0x0C) || (opcode >= 0x13 && opcode <= 0x17) || (opcode >= 0x20 && opcode <= 0x2B) ||
                                  opcode == 0x64 || opcode == 0x65;
    case QPO_PKTS_ACK: return opcode == 0x11 && (syndrome >> 5) == 0;
    case QPO_PKTS_NAK: return opcode == 0x11 && (syndrome >> 5) == 3;
    case QPO_PKTS_RNR_NAK: return opcode == 0x11 && (syndrome >> 5) == 1;
    case QPO_PKTS_READ_RESPONSE: return opcode >= 0x0D && opcode <= 0x10;
    case QPO_PKTS_OPCODE: return opcode == r->opcode;
  }
  return 0;
}

static __always_inline void record(__u32 rule, __u32 psn, __u32 transmission, __u32 opcode) {
  __u32 zero = 0;
  __u32 *count = bpf_map_lookup_elem(&qpo_hit_count, &zero);
  if (!count) return;
  __u32 at = __sync_fetch_and_add(count, 1);
  if (at >= QPO_MAX_HITS) return;
  struct qpo_hit *h = bpf_map_lookup_elem(&qpo_hits, &at);
  if (!h) return;
  h->ns = bpf_ktime_get_ns();
  h->rule = rule;
  h->psn = psn;
  h->transmission = transmission;
  h->opcode = opcode;
}

SEC("tc")
int qpo_packet_events(struct __sk_buff *skb) {
  if (skb->mark == QPO_CLONE_MARK) return TC_ACT_OK;
  __u32 at = 0;
  __u16 proto = 0;
  if (bpf_skb_load_bytes(skb, 12, &proto, 2)) return TC_ACT_OK;
  at = 14;
  if (proto == bpf_htons(0x8100)) {
    if (bpf_skb_load_bytes(skb, 16, &proto, 2)) return TC_ACT_OK;
    at = 18;
  }
  __u32 ip = at, ip_end = 0;
  int v4 = 0;
  __u8 b[4];
  if (proto == bpf_htons(ETH_P_IP)) {
    if (bpf_skb_load_bytes(skb, ip, b, 4)) return TC_ACT_OK;
    __u8 l4 = 0;
    if (bpf_skb_load_bytes(skb, ip + 9, &l4, 1) || l4 != IPPROTO_UDP) return TC_ACT_OK;
    ip_end = ip + (((__u32)b[2] << 8) | b[3]);
    at = ip + (b[0] & 0x0f) * 4;
    v4 = 1;
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    if (bpf_skb_load_bytes(skb, ip, b, 4)) return TC_ACT_OK;
    __u8 l4 = 0;
    __u16 plen = 0;
    if (bpf_skb_load_bytes(skb, ip + 6, &l4, 1) || l4 != IPPROTO_UDP) return TC_ACT_OK;
    if (bpf_skb_load_bytes(skb, ip + 4, &plen, 2)) return TC_ACT_OK;
    ip_end = ip + 40 + bpf_ntohs(plen);
    at = ip + 40;
  } else {
    return TC_ACT_OK;
  }
  __u16 dport = 0;
  if (bpf_skb_load_bytes(skb, at + 2, &dport, 2) || dport != bpf_htons(ROCE_PORT)) return TC_ACT_OK;
  at += 8;
  __u8 bth[12];
  if (bpf_skb_load_bytes(skb, at, bth, 12)) return TC_ACT_OK;
  __u8 opcode = bth[0];
  __u32 qpn = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];
  __u32 psn = ((__u32)bth[9] << 16) | ((__u32)bth[10] << 8) | bth[11];
  __u8 syndrome = 0;
  if (opcode >= 0x0D && opcode <= 0x12) bpf_skb_load_bytes(skb, at + 12, &syndrome, 1);

  int action = -1;
  /* Unrolled: the verifier then sees QPO_MAX_RULES straight blocks, not a loop it must prove finite. */
#pragma unroll
  for (__u32 i = 0; i < QPO_MAX_RULES; i++) {
    __u32 key = i;
    struct qpo_rule *r = bpf_map_lookup_elem(&qpo_rules, &key);
    struct qpo_state *s = bpf_map_lookup_elem(&qpo_states, &key);
    if (!r || !s) break;
    if (!r->used) break;
    if (r->dest_qpn != qpn || !counted(r, opcode, syndrome)) continue;
    if (!s->have_base) {
      s->base = psn;
      s->have_base = 1;
    }
    __u32 seen = __sync_fetch_and_add(&s->seen, 1) + 1;
    __u32 transmission = 1;
    int acts = 0;
    if (r->match == QPO_MATCH_PSN) {
      if (((psn - s->base) & 0xffffff) != r->value) continue;
      transmission = __sync_fetch_and_add(&s->target_seen, 1) + 1;
      acts = r->transmission == 0 || r->transmission == transmission;
    } else {
      acts = seen == r->value;
    }
    if (!acts || action >= 0) continue;  /* one action per packet: the first rule's */
    __sync_fetch_and_add(&s->hits, 1);
    record(i, psn, transmission, opcode);
    action = (int)r->action;
  }
  if (action < 0) return TC_ACT_OK;
  if (action == QPO_ACT_DROP) return TC_ACT_SHOT;
  if (action == QPO_ACT_CORRUPT) {
    /* One bit of the ICRC, the datagram's last 4 bytes: the receiver must drop it. */
    __u8 c = 0;
    if (ip_end < 4 || bpf_skb_load_bytes(skb, ip_end - 1, &c, 1)) return TC_ACT_OK;
    c ^= 0x01;
    bpf_skb_store_bytes(skb, ip_end - 1, &c, 1, 0);
    return TC_ACT_OK;
  }
  if (action == QPO_ACT_ECN_CE) {
    if (v4) {
      __u8 tos = b[1];
      __u8 ce = tos | 3;
      __u16 old_word = bpf_htons(((__u16)b[0] << 8) | tos), new_word = bpf_htons(((__u16)b[0] << 8) | ce);
      bpf_l3_csum_replace(skb, ip + 10, old_word, new_word, 2);
      bpf_skb_store_bytes(skb, ip + 1, &ce, 1, 0);
    } else {
      __u8 tc_low = b[1] | 0x30; /* the traffic class's ECN bits sit in the second byte's high nibble */
      bpf_skb_store_bytes(skb, ip + 1, &tc_low, 1, 0);
    }
    return TC_ACT_OK;
  }
  if (action == QPO_ACT_DELAY) {
    skb->tc_classid = QPO_DELAY_CLASSID;
    return TC_ACT_OK;
  }
  if (action == QPO_ACT_DUPLICATE) {
    __u32 mark = skb->mark;
    skb->mark = QPO_CLONE_MARK;
    bpf_clone_redirect(skb, skb->ifindex, BPF_F_INGRESS);
    skb->mark = mark;
    return TC_ACT_OK;
  }
  return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
