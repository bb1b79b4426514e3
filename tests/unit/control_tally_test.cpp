// The control plane's tally (cluster/tally.h), as `qpo run --verbose` prints it at the end of a
// multi-host run: messages and bytes per type and direction, the wall time per round.
#include <doctest/doctest.h>

#include <string>

#include "cluster/tally.h"

using qpo::cluster::ControlTally;

TEST_CASE("control tally: messages and bytes per type, with the 4-byte frame, both directions") {
  ControlTally t;
  t.sent(R"({"type":"hello","version":3})");          // 28 + 4
  t.sent(R"({"type":"hello","version":3})");
  t.sent(R"({"type":"exchange_result","ok":true})");  // 36 + 4
  t.received("exchange", 99996);                      // 100,000 with the frame: kB from 10,000 B
  t.received("exchange", 99996);
  t.received("", 6);                                  // a message without a type
  t.lap("launch + hello", 0.5);
  t.lap("setup + bring-up to the exchange", 4.25);
  t.lap("to 'smoke'", 31);
  t.lap("the rest + reports", 1);
  CHECK(t.text(2) ==
        "qpo: control plane: 2 hosts, 2 rounds in 36.75 s; sent 3 messages, 104 B: 1 exchange_result (40 B), "
        "2 hello (64 B); received 3 messages, 200.0 kB: 1 ? (10 B), 2 exchange (200.0 kB)\n"
        "qpo: wall time per round: launch + hello 0.50 s, setup + bring-up to the exchange 4.25 s, to 'smoke' "
        "31.00 s, the rest + reports 1.00 s\n");
}

TEST_CASE("control tally: past 30 laps the middle rounds are summed into one, the last is shown") {
  ControlTally t;
  for (int i = 0; i < 30; ++i) t.lap("r" + std::to_string(i), 1);
  for (int i = 0; i < 5; ++i) t.lap("meeting", 0.5);
  t.lap("the rest + reports", 2);
  std::string text = t.text(2);
  CHECK(text.find("qpo: control plane: 2 hosts, 34 rounds in 34.50 s; sent 0 messages, 0 B; received 0 messages, 0 B\n") == 0);
  CHECK(text.find(", r29 1.00 s, 5 more rounds 2.50 s, the rest + reports 2.00 s\n") != std::string::npos);
  CHECK(text.find("meeting") == std::string::npos);
}
