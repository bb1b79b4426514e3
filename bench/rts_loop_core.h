/* The reference for the bring-up benchmarks: the verbs qpo issues to bring RC pairs up,
 * written by hand (rts_loop_core.c). Used by rts_loop.c (one run per process, for
 * bench/qp_rate.sh) and by qp_rate_inproc.cpp (alternating with qpo in one process). */
#pragma once
/* The CQ depth both sides use by default (qp_rate.sh's scenario says 4096 too). */
#define RTS_LOOP_CQ_DEPTH 4096

#ifdef __cplusplus
extern "C" {
#endif

/* Opens DEVICE, makes a PD and a CQ of CQ_DEPTH entries, then - timed - creates 2*PAIRS RC QPs and brings each
 * to RTS connected to its neighbour (ibv_query_qp after every modify, as qpo verifies each
 * transition), then tears everything down. Returns the seconds from the first create to the
 * last RTS. A failing verb ends the process (perror, exit 1): it is a benchmark reference. */
double rts_loop_run(const char* device, int gid_index, int pairs, int cq_depth);

#ifdef __cplusplus
}
#endif
