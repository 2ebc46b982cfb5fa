import Foundation

/// User + system CPU time of a process in seconds (`/proc/PID/stat` fields 14–15, clock ticks),
/// 0 when it cannot be read.
public func cpuSeconds(pid: Int32) -> Double {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = text.lastIndex(of: ")")
  else { return 0 }
  // Fields after the command name start at field 3 (state).
  let fields = text[text.index(after: close)...].split(separator: " ")
  guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
    return 0
  }
  return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
