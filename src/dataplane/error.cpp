#include "dataplane/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "dataplane/names.h"
#include "util/errno_names.h"

#include <infiniband/verbs.h>

namespace qpo::dataplane {

DataplaneError::DataplaneError(Kind kind, std::string qp, const std::string& message, int wc_status, int err)
    : std::runtime_error(message), kind_(kind), qp_(std::move(qp)), wc_status_(wc_status), err_(err) {}

void usage_error(const std::string& qp, const std::string& message) {
  throw DataplaneError(DataplaneError::Kind::Usage, qp, "QP '" + qp + "': " + message);
}

std::string errno_text(int err) {
  return util::errno_name(err) + " (" + std::strerror(err) + ")";
}

void post_error(const std::string& qp, const char* verb, int err, const std::string& detail) {
  std::string msg = std::string(verb) + " on QP '" + qp + "' failed: " + errno_text(err);
  if (!detail.empty()) msg += " " + detail;
  throw DataplaneError(DataplaneError::Kind::Post, qp, msg, 0, err);
}

void completion_error(const std::string& qp, int wc_status, uint32_t vendor_err,
                      const std::string& detail) {
  char vendor[32];
  std::snprintf(vendor, sizeof vendor, "vendor_err 0x%x", vendor_err);
  std::string msg = "QP '" + qp + "': completion " + wc_status_name(wc_status);
  msg += " (" + std::string(vendor) + ")";
  if (!detail.empty()) msg += ": " + detail;
  if (wc_status == IBV_WC_WR_FLUSH_ERR) msg += " (the QP is in the error state: an earlier operation on it failed)";
  throw DataplaneError(DataplaneError::Kind::Completion, qp, msg, wc_status);
}

}  // namespace qpo::dataplane
