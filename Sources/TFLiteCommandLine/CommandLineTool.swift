#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// Entry point of the `tflite` command-line tool.
public enum CommandLineTool {
  /// Runs the tool with `arguments` (without the program name) and returns the process exit code.
  public static func main(arguments: [String]) -> Int {
    print("usage: tflite <command> [options]")
    return arguments.isEmpty ? 64 : 0
  }
}
