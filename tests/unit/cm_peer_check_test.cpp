// src/cm/peer_check.h without a device: which connect requests a listener takes as its peer's
// (issue 30 item 16).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cm/peer_check.h"

using namespace qpo;

namespace {
// A field as the CM delivers it: the text, then zero padding to the field's size.
std::vector<unsigned char> padded(const std::string& text, size_t size = 56) {
  std::vector<unsigned char> d(text.begin(), text.end());
  d.resize(size, 0);
  return d;
}
}  // namespace

TEST_CASE("cm peer check: the peer's QP number and private data pass") {
  cm::ExpectedPeer p{"qa", 18u, std::string("hello from a"), 0};
  CHECK(cm::not_the_peer(p, {18, false, padded("hello from a")}).empty());
}

TEST_CASE("cm peer check: another QP number is a stranger, named with both numbers") {
  cm::ExpectedPeer p{"qa", 18u, std::string("hello from a"), 0};
  CHECK(cm::not_the_peer(p, {19, false, padded("hello from a")}) == "QP number 19, not qa's 18");
}

TEST_CASE("cm peer check: other private data is a stranger, its bytes shown terminal-safe") {
  cm::ExpectedPeer p{"qa", std::nullopt, std::string("hello from a"), 0};
  CHECK(cm::not_the_peer(p, {18, false, padded("\x1b[2Jhi")}) == "private data '\\x1B[2Jhi', not qa's 'hello from a'");
  CHECK(cm::not_the_peer(p, {18, false, {}}) == "private data '', not qa's 'hello from a'");
}

TEST_CASE("cm peer check: a UD request (SIDR, no QP number) is judged by its private data only") {
  cm::ExpectedPeer p{"ua", 18u, std::string("ud hello"), 0};
  CHECK(cm::not_the_peer(p, {0, true, padded("ud hello")}).empty());
  CHECK(cm::not_the_peer(p, {0, true, padded("other")}) == "private data 'other', not ua's 'ud hello'");
}

TEST_CASE("cm peer check: with nothing known of the peer every request passes") {
  cm::ExpectedPeer p{"qa", std::nullopt, std::nullopt, 0};
  CHECK(cm::not_the_peer(p, {7, false, {}}).empty());
}

TEST_CASE("cm peer check: exchange_only wants the exchange's size and the request's own QP number first") {
  cm::ExpectedPeer p{"qa", std::nullopt, std::nullopt, 56};
  std::vector<unsigned char> ex(56, 0);
  ex[0] = 18;  // qp_num, little-endian
  CHECK(cm::not_the_peer(p, {18, false, ex}).empty());
  CHECK(cm::not_the_peer(p, {19, false, ex}) == "private data naming QP 18 from QP 19, not qa's exchange");
  CHECK(cm::not_the_peer(p, {18, false, std::vector<unsigned char>(20, 0)}) ==
        "20 bytes of private data, not qa's exchange (56 bytes)");
}

TEST_CASE("cm peer check: an external tool with from: is taken only from that address") {
  cm::ExpectedPeer p;
  p.name = "tool";
  p.address = "10.0.1.2";
  CHECK(cm::not_the_peer(p, {17, false, {}, "10.0.1.2"}).empty());
  CHECK(cm::not_the_peer(p, {17, false, {}, "::ffff:10.0.1.2"}).empty());  // the same IPv4 address, mapped
  CHECK(cm::not_the_peer(p, {17, false, {}, "fd00:1::2"}) == "address fd00:1::2, not tool's 10.0.1.2");
  CHECK(cm::not_the_peer(p, {17, false, {}, "10.0.1.9"}) == "address 10.0.1.9, not tool's 10.0.1.2");
}

TEST_CASE("cm peer check: from: is compared as an address, not as text") {
  cm::ExpectedPeer p;
  p.name = "tool";
  p.address = "FD00:1:0::2";
  CHECK(cm::not_the_peer(p, {0, true, {}, "fd00:1::2"}).empty());
  CHECK(cm::not_the_peer(p, {0, true, {}, "fd00:1::3"}) == "address fd00:1::3, not tool's FD00:1:0::2");
  p.address = "::ffff:10.0.1.2";
  CHECK(cm::not_the_peer(p, {0, true, {}, "10.0.1.2"}).empty());
}

TEST_CASE("cm peer check: an external tool without from: is taken from anywhere") {
  cm::ExpectedPeer p;
  p.name = "tool";
  CHECK(cm::not_the_peer(p, {17, false, padded("anything"), "10.0.1.9"}).empty());
}

TEST_CASE("cm peer check: the reject's private data names the peer and fits the REJ") {
  CHECK(cm::stranger_reject_text("qa", "qb") == "qpo: not qa, the peer qb waits for");
  CHECK(cm::stranger_reject_text(std::string(300, 'x'), "qb").size() == cm::kRejectPrivateData - 1);
}

TEST_CASE("cm peer check: a private data field's text ends at the CM's zero padding") {
  CHECK(cm::private_text(padded("go away")) == "go away");
  CHECK(cm::private_text({}) == "");
  CHECK(cm::private_text({'a', 'b'}) == "ab");
}
