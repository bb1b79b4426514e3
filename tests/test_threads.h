#pragma once
// Threads in device tests, made safe for a loaded CI machine:
//  - WorkerThread: a test's second thread. Whatever its body throws is kept and handed to the
//    test's own thread by join(), never to std::terminate (CI went red on "terminate called"
//    from a DataplaneError in a bare std::thread). The destructor joins, so a REQUIRE that
//    unwinds the test past a running worker does not terminate either.
//  - Rendezvous: both sides of a stream pass their `ready` through it, which the data path
//    calls after posting its receives. Ordering by it instead of a sleep means a sender never
//    starts before the receiver's queue is full, however slow the machine (a 50 ms sleep did
//    not hold under load: UD sends found no receive and the receiver waited in vain). A side
//    that dies before arriving abandons it, so the other never waits forever.
#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <utility>

namespace qpo::testing {

class Rendezvous {
 public:
  explicit Rendezvous(int parties = 2) : parties_(parties) {}

  // Arrives and waits for the others; returns false if one abandoned it.
  bool arrive() {
    arrived_.fetch_add(1);
    while (arrived_.load() < parties_) {
      if (abandoned_.load()) return false;
      std::this_thread::yield();
    }
    return true;
  }
  void abandon() { abandoned_.store(true); }
  // The callable a StreamConfig/PingPongConfig takes as `ready`.
  auto ready() {
    return [this] { arrive(); };
  }

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<bool> abandoned_{false};
};

class WorkerThread {
 public:
  // `on_exit` runs on the worker after its body, thrown or not (e.g. Rendezvous::abandon, so
  // the test's thread is not left waiting for a worker that failed before it arrived).
  template <class Body>
  explicit WorkerThread(Body body, Rendezvous* meeting = nullptr)
      : meeting_(meeting), thread_([this, body = std::move(body), meeting]() mutable {
          try {
            body();
          } catch (const std::exception& e) {
            error_ = e.what();
          } catch (...) {
            error_ = "an exception that is not a std::exception";
          }
          if (meeting) meeting->abandon();
        }) {}
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  // Still running here means the test's thread is leaving early (a REQUIRE failed, or its own
  // side threw): the worker must not wait at the meeting for a side that will never come.
  ~WorkerThread() {
    if (!thread_.joinable()) return;
    if (meeting_) meeting_->abandon();
    thread_.join();
  }

  // Waits for the body to end; the message of what it threw, or "" when it returned.
  const std::string& join() {
    if (thread_.joinable()) thread_.join();
    return error_;
  }

 private:
  Rendezvous* meeting_;
  std::string error_;   // before thread_: written by the thread, so constructed first
  std::thread thread_;
};

}  // namespace qpo::testing
