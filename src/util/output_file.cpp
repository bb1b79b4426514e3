#include "util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "util/input_file.h"
#include "util/strings.h"

namespace qpo::util {

namespace {

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The descriptor a /dev/stdout-like path names, or -1. Through the descriptor itself, output
// lands where the shell pointed it (at its offset, in its file), whatever the descriptor is.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.rfind(prefix, 0) == 0)
      if (auto n = parse_uint(std::string_view(path).substr(prefix.size())); n && *n <= 1024) return static_cast<int>(*n);
  return -1;
}

std::string system_error(const std::string& shown, const char* doing) {
  return shown + ": " + doing + ": " + std::strerror(errno);
}

// A character device or a FIFO, opened by name (following links: /dev/stdout is one).
bool write_through(const std::string& path, const std::string& shown, std::string_view text, std::string* error) {
  // O_NONBLOCK for the open only: a FIFO nobody reads fails with ENXIO instead of waiting.
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno == ENXIO ? shown + ": no process is reading this FIFO" : system_error(shown, "cannot open");
    return false;
  }
  struct stat st{};
  bool ok = ::fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
  if (!ok) {
    *error = shown + ": changed while it was opened; not writing";
  } else {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    ok = write_all(fd, text);
    if (!ok) *error = system_error(shown, "cannot write");
  }
  ::close(fd);
  return ok;
}

// A new file beside `path`, renamed over it once complete.
bool write_replacing(const std::string& path, const std::string& shown, std::string_view text, std::string* error) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::random_device seed;
  std::mt19937_64 rng((static_cast<uint64_t>(seed()) << 32) ^ seed() ^ static_cast<uint64_t>(::getpid()));
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = dir + "." + base + "." + hex(rng()).substr(2) + ".tmp";
    // O_EXCL|O_NOFOLLOW: a name someone else made (a file, a symlink) is never opened.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *error = system_error(shown, "cannot create a file in its directory");
    return false;
  }
  // A file replaced keeps its permissions (a results file made group-readable stays so), and
  // the data is on disk before the rename, so a crash leaves the old file or the new, never an
  // empty one.
  struct stat old {};
  if (::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) ::fchmod(fd, old.st_mode & 07777);
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  if (!ok) *error = system_error(shown, "cannot write");
  if (::close(fd) != 0 && ok) {
    ok = false;
    *error = system_error(shown, "cannot write");
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    *error = system_error(shown, "cannot replace");
  }
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

}  // namespace

OutputStream::~OutputStream() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

bool OutputStream::open(const std::string& path, std::string* error) {
  std::string shown = printable(path, 512);
  if (path.empty()) {
    *error = "no file name given";
    return false;
  }
  if (path == "-" || named_descriptor(path) >= 0) {
    fd_ = path == "-" ? STDOUT_FILENO : named_descriptor(path);
    struct stat st{};
    if (::fstat(fd_, &st) != 0) {
      *error = system_error(shown, "cannot write");
      fd_ = -1;
      return false;
    }
    return true;
  }
  struct stat link{};
  bool exists = ::lstat(path.c_str(), &link) == 0;
  if (exists && !S_ISREG(link.st_mode)) {
    struct stat target{};
    bool resolves = ::stat(path.c_str(), &target) == 0;
    if (!(resolves && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode)))) {
      *error = S_ISLNK(link.st_mode) ? shown + ": it is a symbolic link; not writing through it: give the path of the file itself"
                                     : shown + ": it is " + file_type_name(link.st_mode) +
                                           "; give a regular file, a character device or a FIFO";
      return false;
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
  }
  if (fd_ < 0) {
    *error = errno == ENXIO ? shown + ": no process is reading this FIFO" : system_error(shown, "cannot open");
    return false;
  }
  owned_ = true;
  return true;
}

bool OutputStream::write(std::string_view text) {
  if (fd_ < 0 || failed_) return false;
  failed_ = !write_all(fd_, text);
  return !failed_;
}

bool write_output_file(const std::string& path, std::string_view text, std::string* error) {
  std::string shown = printable(path, 512);
  if (path.empty()) {
    *error = "no file name given";
    return false;
  }
  if (int fd = named_descriptor(path); fd >= 0) {
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
      *error = system_error(shown, "cannot write");
      return false;
    }
    if (!write_all(fd, text)) {
      *error = system_error(shown, "cannot write");
      return false;
    }
    return true;
  }
  struct stat link{};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT) return write_replacing(path, shown, text, error);
    *error = system_error(shown, "cannot write");
    return false;
  }
  if (S_ISREG(link.st_mode)) return write_replacing(path, shown, text, error);
  struct stat target{};
  bool resolves = ::stat(path.c_str(), &target) == 0;
  if (resolves && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) return write_through(path, shown, text, error);
  if (S_ISLNK(link.st_mode))
    *error = shown + ": it is a symbolic link" + (resolves ? std::string(" to ") + file_type_name(target.st_mode) : std::string()) +
             "; not writing through it: give the path of the file itself";
  else
    *error = shown + ": it is " + file_type_name(link.st_mode) + "; give a regular file, a character device or a FIFO";
  return false;
}

}  // namespace qpo::util
