#pragma once
// Framing between controller and agents: a 4-byte big-endian length, then that many bytes of
// JSON. Every read has a deadline; a closed peer or a timeout is an error with a reason.
#include <optional>
#include <string>

namespace qpo::cluster {

constexpr uint32_t kMaxMessageBytes = 64u << 20;  // a 10k-QP directory is ~3 MB
// Before a controller has shown its token an agent reads nothing bigger than a hello.
constexpr uint32_t kMaxHelloBytes = 64u << 10;

// Writes one message; false with `error` set when the peer is gone.
bool write_message(int fd, const std::string& json, std::string* error);

// Reads one message within `timeout_ms` (-1: wait forever); nullopt with `error` set on EOF,
// timeout, oversize or I/O error.
std::optional<std::string> read_message(int fd, int timeout_ms, std::string* error,
                                        uint32_t max_bytes = kMaxMessageBytes);

}  // namespace qpo::cluster
