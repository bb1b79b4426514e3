#pragma once
// Why a data path stopped. Two kinds, as elsewhere in qpo: the caller asked for something that
// cannot work (Usage: bad size, missing MR; no verbs call was made), or the system refused
// (a post returned an errno, a completion came back with a bad status, nothing completed in
// time). Messages always name the scenario QP.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace qpo::dataplane {

class DataplaneError : public std::runtime_error {
 public:
  enum class Kind { Usage, Post, Completion, Timeout, Data };
  DataplaneError(Kind kind, std::string qp, const std::string& message, int wc_status = 0, int err = 0);
  Kind kind() const { return kind_; }
  const std::string& qp() const { return qp_; }
  int wc_status() const { return wc_status_; }  // Completion: the IBV_WC_* value
  int error() const { return err_; }            // Post: the errno

 private:
  Kind kind_;
  std::string qp_;
  int wc_status_, err_;
};

[[noreturn]] void usage_error(const std::string& qp, const std::string& message);
// "ibv_post_send on QP 'qa' failed: ENOMEM (Cannot allocate memory) at WR 3 of 4"
[[noreturn]] void post_error(const std::string& qp, const char* verb, int err, const std::string& detail);
// "QP 'qa': completion IBV_WC_REM_ACCESS_ERR (vendor_err 0x..): write #17 of 5000". The
// caller names the operation: the opcode field of an error completion is undefined.
[[noreturn]] void completion_error(const std::string& qp, int wc_status, uint32_t vendor_err,
                                   const std::string& detail);
std::string errno_text(int err);  // "ENOMEM (Cannot allocate memory)"

}  // namespace qpo::dataplane
