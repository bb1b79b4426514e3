// `qpo rules check`: one "<qp_type> <cur> <next> <attr_mask>" line in, one verdict out.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "cli/rules_check.h"

using qpo::cli::check_line;
using qpo::cli::run_rules_check;

namespace {

// Runs run_rules_check over `input` through tmpfile()s; returns the output text.
std::string run_through_files(const std::string& input, size_t* malformed = nullptr) {
  std::FILE* in = std::tmpfile();
  std::FILE* out = std::tmpfile();
  REQUIRE(in);
  REQUIRE(out);
  REQUIRE(std::fwrite(input.data(), 1, input.size(), in) == input.size());
  std::rewind(in);
  size_t bad = run_rules_check(in, out);
  if (malformed) *malformed = bad;
  std::rewind(out);
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) text.append(buf, n);
  std::fclose(in);
  std::fclose(out);
  return text;
}

size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("a complete RC RESET->INIT mask is ok") {
  auto r = check_line("RC RESET INIT IBV_QP_STATE|IBV_QP_PKEY_INDEX|IBV_QP_PORT|IBV_QP_ACCESS_FLAGS");
  CHECK(r.verdict == "ok");
  CHECK_FALSE(r.malformed);
}

TEST_CASE("missing required attributes are listed in bit order") {
  auto r = check_line("RC INIT RTR IBV_QP_STATE|IBV_QP_AV");
  CHECK(r.verdict ==
        "EINVAL missing: IBV_QP_PATH_MTU|IBV_QP_RQ_PSN|IBV_QP_MIN_RNR_TIMER|IBV_QP_MAX_DEST_RD_ATOMIC|IBV_QP_DEST_QPN");
  CHECK_FALSE(r.malformed);
}

TEST_CASE("attributes outside required + optional are forbidden") {
  auto r = check_line("UD RESET INIT STATE|PKEY_INDEX|PORT|QKEY|ACCESS_FLAGS");
  CHECK(r.verdict == "EINVAL forbidden: IBV_QP_ACCESS_FLAGS");
  CHECK_FALSE(r.malformed);
}

TEST_CASE("missing and forbidden are reported together") {
  auto r = check_line("UD RESET INIT STATE|PORT|QKEY|ACCESS_FLAGS");
  CHECK(r.verdict == "EINVAL missing: IBV_QP_PKEY_INDEX; forbidden: IBV_QP_ACCESS_FLAGS");
}

TEST_CASE("a transition that is not a table cell is an invalid transition") {
  CHECK(check_line("RC RESET RTS 0x1").verdict == "EINVAL invalid transition RESET->RTS");
  CHECK(check_line("RC RESET ERR IBV_QP_STATE").verdict == "EINVAL invalid transition RESET->ERR");
}

TEST_CASE("IBV_QP_CUR_STATE from INIT is rejected, and is also outside INIT->INIT's optional set") {
  auto r = check_line("RC INIT INIT STATE|CUR_STATE");
  CHECK(r.verdict == "EINVAL IBV_QP_CUR_STATE not allowed from INIT; forbidden: IBV_QP_CUR_STATE");
  CHECK_FALSE(r.malformed);
}

TEST_CASE("IBV_QP_CUR_STATE from RTS is accepted") {
  CHECK(check_line("RC RTS RTS STATE|CUR_STATE").verdict == "ok");
}

TEST_CASE("without IBV_QP_STATE the verdict says the QP stays where it is") {
  CHECK(check_line("RC RTR RTS TIMEOUT|RETRY_CNT|RNR_RETRY|SQ_PSN|MAX_QP_RD_ATOMIC").verdict ==
        "EINVAL invalid transition RTR->RTR (IBV_QP_STATE not in mask: the QP stays in RTR)");
  CHECK(check_line("RC RTS SQD 0").verdict == "ok (IBV_QP_STATE not in mask: the QP stays in RTS)");
}

TEST_CASE("hex and decimal masks mean the same bits as names") {
  CHECK(check_line("RC RESET INIT 0x39").verdict == "ok");
  CHECK(check_line("RC RESET INIT 57").verdict == "ok");
  CHECK(check_line("RC RESET INIT 0x31").verdict == "EINVAL missing: IBV_QP_ACCESS_FLAGS");
  CHECK(check_line("RC RESET INIT 49").verdict == "EINVAL missing: IBV_QP_ACCESS_FLAGS");
}

TEST_CASE("an unknown bit in a numeric mask is forbidden and shown in hex") {
  CHECK(check_line("RC RTS RTS 0x40000001").verdict == "EINVAL forbidden: 0x40000000");
}

TEST_CASE("attribute names work with and without the IBV_QP_ prefix, in any case") {
  std::string full = check_line("RC RESET INIT IBV_QP_STATE|IBV_QP_PKEY_INDEX|IBV_QP_PORT").verdict;
  CHECK(full == "EINVAL missing: IBV_QP_ACCESS_FLAGS");
  CHECK(check_line("RC RESET INIT STATE|PKEY_INDEX|PORT").verdict == full);
  CHECK(check_line("rc reset init state|pkey_index|ibv_qp_port").verdict == full);
}

TEST_CASE("spaces around '|' are allowed") {
  CHECK(check_line("RC RESET INIT IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS").verdict == "ok");
  CHECK(check_line("RC\tRESET\tINIT\tSTATE |PKEY_INDEX|  PORT| ACCESS_FLAGS").verdict == "ok");
}

TEST_CASE("QP types and states accept the IBV_QPT_/IBV_QPS_ and kernel spellings") {
  CHECK(check_line("IBV_QPT_RC IBV_QPS_RESET IBV_QPS_INIT 0x39").verdict == "ok");
  CHECK(check_line("XRC_INI RESET INIT 0x39").verdict == "ok");
  CHECK(check_line("IB_QPT_XRC_TGT RTR RTS STATE|TIMEOUT|SQ_PSN").verdict == "ok");
}

TEST_CASE("an unknown QP type is malformed and suggests the closest type") {
  auto r = check_line("RCC RESET INIT 0x39");
  CHECK(r.verdict == "error: unknown QP type 'RCC' (did you mean RC?)");
  CHECK(r.malformed);
}

TEST_CASE("an unknown QP type with no close match has no suggestion") {
  auto r = check_line("INFINIBAND RESET INIT 0x39");
  CHECK(r.verdict == "error: unknown QP type 'INFINIBAND'");
  CHECK(r.malformed);
}

TEST_CASE("an unknown state is malformed") {
  auto r = check_line("RC RESET FOO 0x1");
  CHECK(r.verdict == "error: unknown state 'FOO'");
  CHECK(r.malformed);
}

TEST_CASE("an unknown attribute name is malformed and suggests the closest IBV_QP_ name") {
  auto r = check_line("RC RESET INIT STATE|PORTT");
  CHECK(r.verdict == "error: unknown attribute 'PORTT' (did you mean IBV_QP_PORT?)");
  CHECK(r.malformed);
}

TEST_CASE("a numeric mask wider than 32 bits is malformed") {
  auto r = check_line("RC RESET INIT 0x100000000");
  CHECK(r.verdict == "error: bad attribute mask '0x100000000'");
  CHECK(r.malformed);
}

TEST_CASE("fewer than four fields is malformed") {
  for (const char* line : {"RC RESET INIT", "RC", "", "   \t "}) {
    CAPTURE(line);
    auto r = check_line(line);
    CHECK(r.verdict == "error: expected '<qp_type> <cur_state> <next_state> <attr_mask>'");
    CHECK(r.malformed);
  }
}

TEST_CASE("a trailing CR (CRLF input) is ignored") {
  CHECK(check_line("RC RESET INIT 0x39\r").verdict == "ok");
}

TEST_CASE("run_rules_check skips blank and comment lines and counts malformed ones") {
  size_t malformed = 0;
  std::string out = run_through_files("# header\n\nRC RESET INIT 0x39\nRCC RESET INIT 0x39\nRC RESET RTS 0x1", &malformed);
  CHECK(out == "ok\nerror: unknown QP type 'RCC' (did you mean RC?)\nEINVAL invalid transition RESET->RTS\n");
  CHECK(malformed == 1);
}

TEST_CASE("run_rules_check answers 200k generated lines with 200k verdicts") {
  const char* lines[] = {"RC RESET INIT 0x39\n", "UD INIT RTR IBV_QP_STATE|IBV_QP_QKEY\n",
                         "RC INIT RTR STATE | AV\n", "XRC_RECV RTR RTS 0x10201\n", "RAW_PACKET RTS RTS 0x2000001\n",
                         "UC SQE RTS 0x3\n", "RC RESET ERR 1\n", "BOGUS RESET INIT 1\n"};
  std::string input;
  const size_t n = 200000;
  for (size_t i = 0; i < n; ++i) input += lines[i % std::size(lines)];
  size_t malformed = 0;
  std::string out = run_through_files(input, &malformed);
  CHECK(count_lines(out) == n);
  CHECK(malformed == n / std::size(lines));
}

TEST_CASE("one line longer than the read buffer still yields exactly one verdict") {
  // 3 MiB of junk on one line, then a normal line: two lines in, two verdicts out.
  std::string input(3u << 20, 'x');
  input += "\nRC RESET INIT 0x39\n";
  std::string out = run_through_files(input);
  CHECK(count_lines(out) == 2);
  CHECK(out.size() >= 3);
  CHECK(out.substr(out.size() - 3) == "ok\n");
}

TEST_CASE("XRC_SEND: the bits uverbs removes are 'ok, ignored' for user space, EINVAL --in-kernel") {
  const char* line = "XRC_SEND INIT RTR STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC";
  CHECK(check_line(line).verdict ==
        "ok (ignored: IBV_QP_MIN_RNR_TIMER|IBV_QP_MAX_DEST_RD_ATOMIC; uverbs removes them from a user-space call's mask "
        "for XRC_SEND QPs)");
  CHECK(check_line(line, true).verdict == "EINVAL forbidden: IBV_QP_MIN_RNR_TIMER|IBV_QP_MAX_DEST_RD_ATOMIC");
}

TEST_CASE("XRC_RECV: retry_cnt, rnr_retry and max_rd_atomic at RTS are ignored for user space") {
  const char* line = "XRC_RECV RTR RTS STATE|TIMEOUT|SQ_PSN|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC";
  CHECK(check_line(line).verdict.rfind("ok (ignored: IBV_QP_RETRY_CNT|IBV_QP_RNR_RETRY|IBV_QP_MAX_QP_RD_ATOMIC;", 0) == 0);
  CHECK(check_line(line, true).verdict == "EINVAL forbidden: IBV_QP_RETRY_CNT|IBV_QP_RNR_RETRY|IBV_QP_MAX_QP_RD_ATOMIC");
}

TEST_CASE("an XRC verdict that fails for other reasons still fails after the ignored bits are removed") {
  CHECK(check_line("XRC_SEND INIT RTR STATE|AV|MIN_RNR_TIMER").verdict.rfind("EINVAL missing: IBV_QP_PATH_MTU", 0) == 0);
}
