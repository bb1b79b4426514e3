// The device tests' thread helpers (test_threads.h): a worker's exception reaches the test's
// thread as a message, and a side that never arrives does not leave the other waiting.
#include <doctest/doctest.h>

#include <stdexcept>

#include "test_threads.h"

using qpo::testing::Rendezvous;
using qpo::testing::WorkerThread;

TEST_CASE("what a worker throws is handed to join(), not to std::terminate") {
  WorkerThread t([] { throw std::runtime_error("no completion within 5000 ms"); });
  CHECK(t.join() == "no completion within 5000 ms");
}

TEST_CASE("a worker that returns joins with no message") {
  int ran = 0;
  WorkerThread t([&] { ran = 1; });
  CHECK(t.join() == "");
  CHECK(ran == 1);
}

TEST_CASE("a worker that fails before the meeting releases the side waiting there") {
  Rendezvous meet;
  WorkerThread t([] { throw std::runtime_error("setup failed"); }, &meet);
  CHECK_FALSE(meet.arrive());  // returns instead of waiting forever for the worker
  CHECK(t.join() == "setup failed");
}

TEST_CASE("a test that leaves early releases its worker from the meeting") {
  Rendezvous meet;
  bool met = true;
  {
    WorkerThread t([&] { met = meet.arrive(); }, &meet);
  }  // the test's thread never arrives: the destructor abandons the meeting and joins
  CHECK_FALSE(met);
}

TEST_CASE("both sides pass the meeting together") {
  Rendezvous meet;
  bool worker_met = false;
  WorkerThread t([&] { worker_met = meet.arrive(); }, &meet);
  CHECK(meet.arrive());
  CHECK(t.join() == "");
  CHECK(worker_met);
}
