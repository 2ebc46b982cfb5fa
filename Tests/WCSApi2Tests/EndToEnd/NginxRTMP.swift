import Foundation

/// nginx with libnginx-mod-rtmp in the foreground, serving only an RTMP `live` application on
/// `127.0.0.1:port`, its files in `directory`: the RTMP server of the pull and push tests.
enum NginxRTMP {
  static let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

  /// Whether nginx and its RTMP module are installed.
  static var isInstalled: Bool {
    FileManager.default.fileExists(atPath: module)
      && FileManager.default.fileExists(atPath: "/usr/sbin/nginx")
  }

  /// Starts nginx; stop it with SIGKILL (without a master process it ignores SIGTERM). With
  /// `record`, nginx also writes each published stream as it receives it to
  /// `directory/<name>.flv`.
  static func start(directory: URL, port: Int, record: Bool = false) throws -> Process {
    let recording = record ? " record all; record_path \(directory.path);" : ""
    let config = """
      daemon off;
      master_process off;
      pid \(directory.path)/nginx.pid;
      error_log \(directory.path)/nginx-error.log;
      load_module \(module);
      events {}
      rtmp { server { listen 127.0.0.1:\(port); application live { live on;\(recording) } } }
      """
    let path = directory.appendingPathComponent("nginx.conf")
    try config.write(to: path, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
    process.arguments = [
      "-p", directory.path, "-e", "\(directory.path)/nginx-error.log", "-c", path.path,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }
}
