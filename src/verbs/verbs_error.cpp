#include "verbs/verbs_error.h"

#include <cerrno>
#include <cstring>

namespace qpo::verbs {

std::string errno_name(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EIO: return "EIO";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case ENODEV: return "ENODEV";
    case EINVAL: return "EINVAL";
    case ENOSPC: return "ENOSPC";
    case ENOSYS: return "ENOSYS";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ENETUNREACH: return "ENETUNREACH";
    default: return "errno " + std::to_string(err);
  }
}

int verb_errno(int ret) {
  if (ret == 0) return 0;
  if (ret > 0) return ret;
  return errno ? errno : EIO;
}

VerbsError::VerbsError(std::string verb, std::string object, int err, std::string detail)
    : std::runtime_error(verb + "(" + object + (detail.empty() ? "" : ", " + detail) + ") failed: " +
                         errno_name(err) + " (" + std::strerror(err) + ")"),
      verb_(std::move(verb)),
      object_(std::move(object)),
      detail_(std::move(detail)),
      err_(err) {}

bool VerbsError::unsupported() const {
  return err_ == EOPNOTSUPP || err_ == ENOSYS || err_ == EPROTONOSUPPORT;
}

}  // namespace qpo::verbs
