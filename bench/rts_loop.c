/* The reference for bench/qp_rate.sh: one hand-written bring-up per process
 * (rts_loop_core.c). Prints the QPs-to-RTS rate over the interval qpo reports.
 * usage: rts_loop DEVICE GID_INDEX PAIRS */
#include <stdio.h>
#include <stdlib.h>

#include "rts_loop_core.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: rts_loop DEVICE GID_INDEX PAIRS\n");
    return 2;
  }
  int pairs = atoi(argv[3]);
  double secs = rts_loop_run(argv[1], atoi(argv[2]), pairs, RTS_LOOP_CQ_DEPTH);
  printf("qps=%d seconds=%.6f rate=%.1f\n", 2 * pairs, secs, 2 * pairs / secs);
  return 0;
}
