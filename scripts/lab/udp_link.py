#!/usr/bin/env python3
"""Runs a command (a guest's QEMU) holding one end of the two-guest lab's link: a UDP socket
on host loopback, bound to PORT and connected to PEER_PORT, with a receive buffer of BYTES
(the kernel keeps twice that for its bookkeeping: 512 KiB asked is 1 MiB held).

QEMU's own `-netdev dgram` opens its socket with the kernel's default (208 KiB held): a burst
of 320 RoCE packets that met a guest busy in emulation overflowed it (the host's UDP
RcvbufErrors rose by 3 to 124 per run beside three CPU hogs), and those losses, which no
scenario asked for, broke the one-NAK-per-drop checks of tests/rxe/wire_events.sh. 1 MiB
held takes such bursts (0 drops in 6 runs under the same load). Neither more nor a link that
never drops: a flood of seven perftest streams then queues for longer than the requesters'
ACK timeout (8 MiB held) or makes the sending guest drop locally (a Unix datagram link, which
pushes back), and rxe, resending, ends a stream with IBV_WC_REM_INV_REQ_ERR; at 1 MiB the
flood still loses packets on the host (~2,000 in tests/rxe/interop.sh), and resends cover them.
Every "{fd}" in the command becomes the socket's descriptor number
(`-netdev dgram,id=n0,local.type=fd,local.str={fd}`).

usage: udp_link.py PORT PEER_PORT BYTES -- COMMAND [ARGS...]
"""
import os
import socket
import sys

SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)  # Linux: past rmem_max, for root


def main(argv):
    if len(argv) < 6 or argv[4] != "--":
        sys.exit(__doc__.strip().splitlines()[-1])
    port, peer, size = int(argv[1]), int(argv[2]), int(argv[3])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)  # capped at net.core.rmem_max
    sock.bind(("127.0.0.1", port))
    sock.connect(("127.0.0.1", peer))
    fd = sock.detach()
    os.set_inheritable(fd, True)
    command = [a.replace("{fd}", str(fd)) for a in argv[5:]]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
