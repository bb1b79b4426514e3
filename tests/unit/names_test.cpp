// One errno-name table (util/errno_names.h) and one WC-status table (util/wc_status_names.h)
// for the whole tree: the data path, verbs errors and the validator all answer from them.
#include <doctest/doctest.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "dataplane/error.h"
#include "dataplane/names.h"
#include "util/errno_names.h"
#include "util/wc_status_names.h"
#include "verbs/verbs_error.h"

TEST_CASE("the data path names every errno of the table: ETIMEDOUT, not 'errno 110'") {
  CHECK(qpo::dataplane::errno_text(ETIMEDOUT) == "ETIMEDOUT (" + std::string(std::strerror(ETIMEDOUT)) + ")");
  CHECK(qpo::dataplane::errno_text(ENODEV) == "ENODEV (" + std::string(std::strerror(ENODEV)) + ")");
}

TEST_CASE("the data path, verbs errors and the table give the same name, and 'errno N' outside it") {
  for (int err : {EINVAL, ENOMEM, ETIMEDOUT, ENETUNREACH, 12345}) {
    CAPTURE(err);
    CHECK(qpo::verbs::errno_name(err) == qpo::util::errno_name(err));
    CHECK(qpo::dataplane::errno_text(err).rfind(qpo::util::errno_name(err) + " (", 0) == 0);
  }
  CHECK(qpo::util::errno_name(12345) == "errno 12345");
}

TEST_CASE("WC statuses come from util's table, whatever layer asks") {
  CHECK(std::string(qpo::util::wc_status_name(IBV_WC_REM_ACCESS_ERR)) == "IBV_WC_REM_ACCESS_ERR");
  CHECK(qpo::dataplane::wc_status_name(IBV_WC_RETRY_EXC_ERR) == qpo::util::wc_status_name(IBV_WC_RETRY_EXC_ERR));
  CHECK(std::string(qpo::util::wc_status_name(9999)) == "IBV_WC_UNKNOWN");
  CHECK(qpo::util::parse_wc_status("rem_access_err") == IBV_WC_REM_ACCESS_ERR);
  CHECK(qpo::util::parse_wc_status("IBV_WC_GENERAL_ERR") == IBV_WC_GENERAL_ERR);
  CHECK_FALSE(qpo::util::parse_wc_status("IBV_WC_NOPE").has_value());
  auto names = qpo::util::wc_status_names();
  REQUIRE(names.size() == 22);
  CHECK(names.front() == "IBV_WC_SUCCESS");
}
