#include "verbs/verbs_error.h"

#include <cerrno>
#include <cstring>

#include "util/errno_names.h"

namespace qpo::verbs {

std::string call_text(const std::string& verb, const std::string& object, const std::string& detail) {
  return verb + "(" + object + (detail.empty() ? "" : ", " + detail) + ")";
}

std::string errno_name(int err) { return util::errno_name(err); }

int verb_errno(int ret) {
  if (ret == 0) return 0;
  if (ret > 0) return ret;
  return errno ? errno : EIO;
}

VerbsError::VerbsError(std::string verb, std::string object, int err, std::string detail)
    : std::runtime_error(call_text(verb, object, detail) + " failed: " + errno_name(err) + " (" +
                         std::strerror(err) + ")"),
      verb_(std::move(verb)),
      object_(std::move(object)),
      detail_(std::move(detail)),
      err_(err) {}

bool VerbsError::unsupported() const {
  return err_ == EOPNOTSUPP || err_ == ENOSYS || err_ == EPROTONOSUPPORT;
}

}  // namespace qpo::verbs
