#!/bin/sh
# qpo devices inside the lab guest: rxe0 with its port, GID table and caps, as text and JSON,
# and the facts of this lab's rxe that qpo's capability checks rely on (no XRC, no ODP).
#   tests/rxe/devices.sh QPO_BINARY
set -u
QPO=${1:?usage: devices.sh QPO_BINARY}
out=$("$QPO" devices --no-lab --format json) || { echo "FAIL qpo devices exited $?"; exit 1; }
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)["devices"]
rxe = [x for x in d if x["name"] == "rxe0"]
fails = 0
def check(name, ok):
    global fails
    print(("ok   " if ok else "FAIL ") + name)
    fails += 0 if ok else 1
check("rxe0 is listed", len(rxe) == 1)
r = rxe[0] if rxe else {"ports": [], "caps": {}}
p = r["ports"][0] if r["ports"] else {"gids": []}
check("port 1 is ACTIVE on Ethernet", p.get("port") == 1 and p.get("state") == "ACTIVE" and p.get("link_layer") == "Ethernet")
check("the active MTU is one of 256..4096", p.get("active_mtu") in (256, 512, 1024, 2048, 4096))
check("an IPv4-mapped RoCE v2 GID names its netdev and IP",
      any(g["type"] == "RoCE v2" and g["gid"].startswith("::ffff:") and g["ip"] and g["netdev"] for g in p["gids"]))
check("caps: rxe has SRQs, memory windows and atomics, no XRC, no ODP",
      r["caps"].get("max_srq", 0) > 0 and r["caps"].get("max_mw", 0) > 0 and r["caps"].get("atomic_cap") == "HCA"
      and r["caps"].get("xrc") is False and r["caps"].get("odp") is False)
sys.exit(1 if fails else 0)
' || exit 1
text=$("$QPO" devices --no-lab) || exit 1
printf '%s\n' "$text" | grep -q '^rxe0  guid 0x' && echo "ok   text: one line per device" || { echo "FAIL text: $text"; exit 1; }
printf '%s\n' "$text" | grep -q '^  port 1: ACTIVE, Ethernet, mtu ' && echo "ok   text: the port line" || { echo "FAIL text port"; exit 1; }
