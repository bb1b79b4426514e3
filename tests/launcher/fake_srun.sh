#!/bin/sh
# A stand-in for srun, for a host's `launcher: "fake_srun.sh -w {host} -N1 {command}"`:
# appends its arguments as one line to $QPO_LAUNCHER_LOG (one short append: the controller
# launches every host at once, so several stand-ins write at the same time), then runs the command here
# (on loopback, with the standard input and output it was given), as srun would on node HOST.
: "${QPO_LAUNCHER_LOG:?fake_srun.sh: set QPO_LAUNCHER_LOG}"
echo "$*" >>"$QPO_LAUNCHER_LOG"
[ "$1" = -w ] && shift 2
[ "$1" = -N1 ] && shift
exec "$@"
