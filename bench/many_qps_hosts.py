#!/usr/bin/env python3
"""QPS RC QPs on each host, for the many-QPs-across-hosts bench (bench/many_qps_hosts.sh).

    many_qps_hosts.py two QPS > two.yaml   host a's cli.I connects to host b's srv.I (QPS pairs)
    many_qps_hosts.py one QPS > one.yaml   the same QPS QPs on host a alone: QPS/2 loopback pairs

Both shapes put QPS QPs and QPS MRs on a host (each client QP writes from its own 64-byte MR
into its server's own), so a host's setup and bring-up per QP compare one for one. After
bring-up (no smoke: --no-smoke) each client QP writes 64 bytes once and the run verifies every
destination: each connection is shown to carry data.
"""
import sys

STATES = """    states:
      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write] }
      RTR:  { path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12 }
      RTS:  { sq_psn: random, timeout: 18, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 }"""


def qp_group(name, count, pd, cq, peer):
    return ("  %s:\n    count: %d\n    pd: %s\n    type: RC\n    send_cq: %s\n    recv_cq: %s\n"
            "    cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1 }\n"
            "    connect: %s\n%s" % (name, count, pd, cq, cq, peer, STATES))


def scenario(shape, qps):
    pairs = qps if shape == "two" else qps // 2
    server_host = "b" if shape == "two" else "a"
    # Each CQ takes its side's completions (one write per client QP) with room to spare; rxe
    # offers max_cqe 32,767.
    depth = min(32767, max(256, 2 * pairs))
    out = ["version: 1", "name: many-qps-%s-%d" % (shape, qps),
           "description: %d RC QPs per host, %s." % (qps, "across two hosts" if shape == "two" else "on one host"),
           "tags: [rc, scale]", "hosts:", "  a: { address: localhost }"]
    if shape == "two":
        out.append("  b: { address: localhost }")
    out += ["devices:", "  da: { host: a, name: auto, port: 1, gid_index: auto }",
            "  db: { host: %s, name: auto, port: 1, gid_index: auto }" % server_host,
            "mrs:", "  src: { pd: da, size: 64, access: [local_write], per_qp: cli }",
            "  dst: { pd: db, size: 64, access: [local_write, remote_write], per_qp: srv }",
            "cqs:", "  ca: { device: da, depth: %d }" % depth, "  cb: { device: db, depth: %d }" % depth,
            "qps:", qp_group("cli", pairs, "da", "ca", "srv"), qp_group("srv", pairs, "db", "cb", "cli"),
            "workloads:",
            "  touch: { qp: cli, op: rdma_write, local_mr: src, remote_mr: dst, size: 64, iterations: 1 }",
            "timeline:", "  - { workload: touch }"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("one", "two") or not sys.argv[2].isdigit() or int(sys.argv[2]) < 2:
        sys.exit("usage: many_qps_hosts.py one|two QPS_PER_HOST   (QPS_PER_HOST >= 2, even for one)")
    sys.stdout.write(scenario(sys.argv[1], int(sys.argv[2])))
