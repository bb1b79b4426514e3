#include "util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/strings.h"

namespace qpo::util {

namespace {

// "16 MiB", "4096 bytes"
std::string limit_text(size_t bytes) {
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string too_large(const std::string& shown, const InputKind& kind, const std::string& size) {
  return shown + " is " + size + "; a " + kind.noun + " is limited to " + limit_text(kind.max_bytes);
}

// Reads `fd` to its end or one byte past the cap, whichever comes first. `expected` (a regular
// file's size) sizes the buffer so the common case reads without growing it.
InputFile read_capped(int fd, const std::string& shown, const InputKind& kind, size_t expected = 0) {
  InputFile f;
  size_t got = 0;
  f.text.resize(std::min<size_t>(kind.max_bytes + 1, std::max<size_t>(expected + 1, 64 * 1024)));
  for (;;) {
    if (got == f.text.size()) {
      if (got > kind.max_bytes) break;
      f.text.resize(std::min<size_t>(kind.max_bytes + 1, f.text.size() * 2));
    }
    ssize_t n = ::read(fd, f.text.data() + got, f.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      f.problem = InputFile::Problem::Unreadable;
      f.error = "cannot read " + shown + ": " + std::strerror(errno);
      f.text.clear();
      return f;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  f.text.resize(got);
  if (got > kind.max_bytes) {
    f.problem = InputFile::Problem::TooLarge;
    f.error = too_large(shown, kind, "more than " + limit_text(kind.max_bytes));
    f.text.clear();
  }
  return f;
}

}  // namespace

const char* file_type_name(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

InputFile read_input_file(const std::string& path, const InputKind& kind) {
  std::string shown = printable(path, 512);
  InputFile f;
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    f.problem = InputFile::Problem::Unreadable;
    f.error = "cannot read " + shown + ": " + std::strerror(errno);
    return f;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    f.problem = InputFile::Problem::Unreadable;
    f.error = "cannot read " + shown + ": " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    f.problem = InputFile::Problem::NotRegular;
    f.error = "cannot read " + shown + ": it is " + file_type_name(st.st_mode) + "; a " + kind.noun + " must be a regular file";
  } else if (static_cast<unsigned long long>(st.st_size) > kind.max_bytes) {
    // Before reading a byte: a sparse file costs nothing to make and everything to read.
    f.problem = InputFile::Problem::TooLarge;
    f.error = too_large(shown, kind, std::to_string(static_cast<unsigned long long>(st.st_size)) + " bytes");
  } else {
    f = read_capped(fd, shown, kind, static_cast<size_t>(st.st_size));
  }
  ::close(fd);
  return f;
}

InputFile read_standard_input(const InputKind& kind) { return read_capped(STDIN_FILENO, "standard input", kind); }

}  // namespace qpo::util
