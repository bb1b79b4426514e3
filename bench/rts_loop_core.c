/* The hand-written bring-up (rts_loop_core.h). Same order as qpo's plan: create every QP,
 * RESET->INIT each, then INIT->RTR and RTR->RTS each, with ibv_query_qp after every modify
 * (qpo verifies each transition). Timed over the interval qpo reports: first create to last
 * RTS. */
#include "rts_loop_core.h"

#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void must(int ok, const char *what) {
  if (!ok) {
    perror(what);
    exit(1);
  }
}

static void modify_and_query(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) {
  struct ibv_qp_attr q;
  struct ibv_qp_init_attr init;
  must(ibv_modify_qp(qp, a, mask) == 0, "ibv_modify_qp");
  must(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &init) == 0,
       "ibv_query_qp");
  must(q.qp_state == a->qp_state, "state check");
}

double rts_loop_run(const char* device, int gid_index, int pairs, int cq_depth) {
  int n = 2 * pairs;
  struct ibv_device **list = ibv_get_device_list(NULL);
  must(list != NULL, "ibv_get_device_list");
  struct ibv_context *ctx = NULL;
  for (int i = 0; list[i]; ++i)
    if (strcmp(ibv_get_device_name(list[i]), device) == 0) ctx = ibv_open_device(list[i]);
  must(ctx != NULL, "ibv_open_device");
  struct ibv_port_attr port;
  must(ibv_query_port(ctx, 1, &port) == 0, "ibv_query_port");
  union ibv_gid gid;
  must(ibv_query_gid(ctx, 1, gid_index, &gid) == 0, "ibv_query_gid");
  struct ibv_pd *pd = ibv_alloc_pd(ctx);
  must(pd != NULL, "ibv_alloc_pd");
  /* The CQ of qpo's benchmark scenario. Its size is not neutral: on rxe every ibv_create_qp
   * took ~12 us longer in the process whose CQ had 4096 entries than in the one with 256
   * (bench/README.md), so the two sides must have the same. */
  struct ibv_cq *cq = ibv_create_cq(ctx, cq_depth, NULL, NULL, 0);
  must(cq != NULL, "ibv_create_cq");
  struct ibv_qp **qps = calloc(n, sizeof *qps);

  double t0 = now();
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                    .cap = {.max_send_wr = 16, .max_recv_wr = 0, .max_send_sge = 1, .max_recv_sge = 1}};
    qps[i] = ibv_create_qp(pd, &init);
    must(qps[i] != NULL, "ibv_create_qp");
  }
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
    modify_and_query(qps[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  }
  for (int i = 0; i < n; ++i) {
    struct ibv_qp *peer = qps[i ^ 1];
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = port.active_mtu, .dest_qp_num = peer->qp_num,
                            .rq_psn = 0x1234, .max_dest_rd_atomic = 1, .min_rnr_timer = 12};
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = 1;
    a.ah_attr.dlid = port.lid;
    a.ah_attr.grh.dgid = gid;
    a.ah_attr.grh.sgid_index = gid_index;
    a.ah_attr.grh.hop_limit = 1;
    modify_and_query(qps[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTS, .sq_psn = 0x1234, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
                            .max_rd_atomic = 1};
    modify_and_query(qps[i], &r, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_MAX_QP_RD_ATOMIC);
  }
  double secs = now() - t0;

  for (int i = n - 1; i >= 0; --i) ibv_destroy_qp(qps[i]);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  free(qps);
  return secs;
}
