#!/usr/bin/env python3
"""tshark as the oracle of qpo's packet listing: for each pcap, the opcode/PSN (and AETH
syndrome) sequence of every flow (source, destination, destination QP) that Wireshark's
InfiniBand dissector decodes must equal the one `qpo packets --format json` lists.
Prints one line per file ("tshark agrees: ...") and exits 1 on any difference."""
import json
import subprocess
import sys


def tshark_flows(path):
    out = subprocess.run(
        ["tshark", "-r", path, "-Y", "infiniband", "-T", "fields", "-E", "separator=\t",
         "-e", "ip.src", "-e", "ip.dst", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.opcode",
         "-e", "infiniband.bth.psn", "-e", "infiniband.aeth.syndrome"],
        check=True, capture_output=True, text=True).stdout
    flows = {}
    for line in out.splitlines():
        src, dst, qpn, opcode, psn, syndrome = (line.split("\t") + [""] * 6)[:6]
        key = (src, dst, int(qpn, 16))
        flows.setdefault(key, []).append((int(opcode), int(psn), int(syndrome, 0) if syndrome else None))
    return flows


def qpo_flows(qpo, path):
    out = subprocess.run([qpo, "packets", "--format", "json", path], check=True, capture_output=True, text=True).stdout
    # qpo keeps a QP's requests and its READs' responses apart (two PSN spaces); tshark's
    # key is (source, destination, QP): merge them back in capture order.
    merged = {}
    for f in json.loads(out)["flows"]:
        key = (f["src"], f["dst"], f["dest_qpn"])
        merged.setdefault(key, []).extend((p["t_us"], p["opcode"], p["psn"], p.get("syndrome")) for p in f["packets"])
    return {key: [p[1:] for p in sorted(rows, key=lambda r: r[0])] for key, rows in merged.items()}


def main():
    qpo, files = sys.argv[1], sys.argv[2:]
    bad = 0
    for path in files:
        theirs, ours = tshark_flows(path), qpo_flows(qpo, path)
        if theirs != ours:
            bad += 1
            print(f"{path}: tshark and qpo differ")
            for key in sorted(set(theirs) | set(ours), key=str):
                if theirs.get(key) != ours.get(key):
                    print(f"  flow {key}: tshark {theirs.get(key)}\n  {' ' * len(str(key))}   qpo    {ours.get(key)}")
            continue
        packets = sum(len(v) for v in ours.values())
        print(f"{path}: tshark agrees: {packets} packets in {len(ours)} flows")
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(main())
