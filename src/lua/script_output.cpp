// What a script prints: marked, printable, cut and counted (lua/runtime.h, WorkerCtx).
#include "lua/runtime.h"
#include "util/strings.h"

namespace qpo::lua {

void WorkerCtx::script_line(std::string_view line) {
  if (output_shown >= kMaxScriptOutput) {
    output_cut += line.size() + 1;
    ++lines_cut;
    return;
  }
  output_shown += line.size() + 1;
  log(util::printable(line, kMaxScriptLine));
  if (output_shown >= kMaxScriptOutput)
    log("(the script printed " + std::to_string(kMaxScriptOutput >> 20) +
        " MiB; the rest of its output is counted, not shown)");
}

void WorkerCtx::script_write(std::string_view text) {
  for (;;) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    if (unfinished_line.empty()) {
      script_line(text.substr(0, nl));
    } else {
      unfinished_line.append(text.substr(0, nl));
      script_line(unfinished_line);
      unfinished_line.clear();
    }
    text.remove_prefix(nl + 1);
  }
  // A line without its end is kept up to the cut; the bytes past it are only counted.
  size_t room = unfinished_line.size() < kMaxScriptLine + 1 ? kMaxScriptLine + 1 - unfinished_line.size() : 0;
  unfinished_line.append(text.substr(0, room));
  if (text.size() > room) output_cut += text.size() - room;
}

void WorkerCtx::flush_script_output() {
  if (!unfinished_line.empty()) {
    std::string last;
    last.swap(unfinished_line);
    script_line(last);
  }
  if (output_cut == 0) return;
  log("(script output not shown: " + std::to_string(output_cut) + " bytes in " + std::to_string(lines_cut) +
      " lines)");
  output_cut = lines_cut = 0;
}

}  // namespace qpo::lua
