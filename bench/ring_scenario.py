#!/usr/bin/env python3
"""A ring of hosts, each with two RC QPs on one rxe device: host i's `out` QP connects to host
i+1's `in` QP. For runs across many hosts (qpo run --pmix under mpirun, --local, --agents).

    ring_scenario.py HOSTS [DEVICE] > ring.yaml
"""
import sys


def ring(hosts, device):
    names = ["h%d" % i for i in range(hosts)]
    out = ["version: 1", "name: ring-%d" % hosts,
           "description: %d hosts in a ring, two RC QPs each (out -> next host's in)." % hosts,
           "hosts:"]
    out += ["  %s: { address: localhost }" % h for h in names]
    out.append("devices:")
    out += ["  d_%s: { host: %s, name: %s, port: 1, gid_index: auto }" % (h, h, device) for h in names]
    out.append("pds:")
    out += ["  p_%s: { device: d_%s }" % (h, h) for h in names]
    out.append("cqs:")
    out += ["  c_%s: { device: d_%s, depth: 256 }" % (h, h) for h in names]
    out.append("qps:")
    states = ("    states:\n"
              "      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write] }\n"
              "      RTR:  { path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12,\n"
              "              ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }\n"
              "      RTS:  { sq_psn: random, timeout: 17, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 }")
    for i, h in enumerate(names):
        nxt, prv = names[(i + 1) % hosts], names[(i - 1) % hosts]
        for qp, peer in (("out", "in_" + nxt), ("in", "out_" + prv)):
            out.append("  %s_%s:" % (qp, h))
            out.append("    pd: p_%s" % h)
            out.append("    type: RC")
            out.append("    send_cq: c_%s" % h)
            out.append("    recv_cq: c_%s" % h)
            out.append("    cap: { max_send_wr: 16, max_recv_wr: 16 }")
            out.append("    connect: %s" % peer)
            out.append(states)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or int(sys.argv[1]) < 2:
        sys.exit("usage: ring_scenario.py HOSTS [DEVICE]   (HOSTS >= 2; DEVICE: rxe0)")
    sys.stdout.write(ring(int(sys.argv[1]), sys.argv[2] if len(sys.argv) == 3 else "rxe0"))
