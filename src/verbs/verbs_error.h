#pragma once
// The system refused (as opposed to the scenario being wrong, which is a Diagnostic): a verb
// failed with an errno. The message names the verb, the scenario object, and for
// ibv_modify_qp the transition and the attribute mask in words.
#include <stdexcept>
#include <string>

namespace qpo::verbs {

class VerbsError : public std::runtime_error {
 public:
  VerbsError(std::string verb, std::string object, int err, std::string detail = "");
  const std::string& verb() const { return verb_; }
  const std::string& object() const { return object_; }
  int error() const { return err_; }
  const std::string& detail() const { return detail_; }
  // EOPNOTSUPP, ENOSYS, EPROTONOSUPPORT: the device lacks the feature.
  bool unsupported() const;

 private:
  std::string verb_, object_, detail_;
  int err_;
};

// A verb call as messages name it: "ibv_modify_qp(qp0, INIT->RTR mask=...)", or
// "ibv_query_qp(qp0)" without a detail. A VerbsError's text begins with it.
std::string call_text(const std::string& verb, const std::string& object, const std::string& detail = "");

// "EINVAL" for 22; "errno 123" when unnamed.
std::string errno_name(int err);

// Verbs return either -1 with errno set, or a positive errno (ibv_modify_qp, ibv_post_send):
// normalise to a positive errno, 0 on success.
int verb_errno(int ret);

}  // namespace qpo::verbs
