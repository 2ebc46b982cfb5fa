import Foundation

extension FuzzTarget {
  /// The fuzz executables' `main` when built without libFuzzer (the normal `swift build`):
  /// runs the target on each file named in `arguments` (a crash input to reproduce, a corpus
  /// file) and prints what it did. Exits 1 when a property does not hold.
  public func replayMain(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never
  {
    guard !arguments.isEmpty else {
      print("usage: Fuzz\(rawValue) FILE...  (built with scripts/fuzz.sh it is a libFuzzer target)")
      exit(64)
    }
    var failed = false
    for path in arguments {
      guard let data = FileManager.default.contents(atPath: path) else {
        print("\(path): cannot read")
        failed = true
        continue
      }
      do {
        let accepted = try run(Array(data))
        print("\(path): \(accepted ? "accepted" : "refused")")
      } catch {
        print("\(path): VIOLATION \(error)")
        failed = true
      }
    }
    exit(failed ? 1 : 0)
  }
}

// Only with libFuzzer linked in (scripts/fuzz.sh passes -DFUZZING to every module).
#if FUZZING
  /// libFuzzer's own driver (`FuzzerDriver.cpp`), linked in by `-sanitize=fuzzer`.
  @_silgen_name("LLVMFuzzerRunDriver")
  private func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32

  extension FuzzTarget {
    /// The fuzz executables' `main` when built with `-DFUZZING`. SwiftPM links an executable's
    /// entry as `<Module>_main` and defines `main` as that symbol, so libFuzzer's `main` is never
    /// linked in: this hands the arguments to libFuzzer's driver instead.
    public static func runLibFuzzer(
      _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
      _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32 {
      var count = argc
      var arguments = argv
      return llvmFuzzerRunDriver(&count, &arguments, callback)
    }
  }
#endif
