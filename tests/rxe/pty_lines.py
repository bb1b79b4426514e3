#!/usr/bin/env python3
"""Runs a command under a pseudo-terminal (as on a user's terminal, where stdout is line
buffered) and prints each line it writes with the time it arrived, in seconds since the start:
"1.54 <line>"; the last line is "<time> exit <code>".
  tests/rxe/pty_lines.py COMMAND [ARG...]"""
import os
import pty
import sys
import time

start = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
pending = b""
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:  # EIO: the child closed the terminal
        break
    if not data:
        break
    pending += data
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        text = line.decode(errors="replace").rstrip("\r")
        print("%.2f %s" % (time.monotonic() - start, text), flush=True)
_, status = os.waitpid(pid, 0)
print("%.2f exit %d" % (time.monotonic() - start, os.waitstatus_to_exitcode(status)), flush=True)
