#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Entry point of the `tflite` command-line tool: dispatches to one ``Subcommand``.
public enum CommandLineTool {
  /// Every subcommand, in the order `tflite help` lists them.
  static var subcommands: [any Subcommand.Type] {
    [
      InspectCommand.self, CheckCommand.self, RunCommand.self, CompareCommand.self, BenchCommand.self, ProfileCommand.self, GraphCommand.self,
      DemoCommand.self, DownloadCommand.self, ModelsCommand.self, ImageCommand.self, DetectCommand.self, ClassifyCommand.self,
    ]
  }

  /// Runs the tool with `arguments` (without the program name) and returns the process exit code.
  public static func main(arguments: [String], output: any TextSink = StandardOutput()) -> Int32 {
    var output = output
    guard let name = arguments.first, !["-h", "--help", "help"].contains(name) || arguments.count > 1
    else {
      output.write(overview)
      return arguments.isEmpty ? ExitCode.usage : ExitCode.success
    }
    if name == "help", let topic = arguments.dropFirst().first {
      guard let command = subcommands.first(where: { $0.specification.name == topic }) else {
        output.writeError("tflite: unknown command '\(topic)'\n\n" + overview)
        return ExitCode.usage
      }
      output.write(command.specification.help)
      return ExitCode.success
    }
    guard let command = subcommands.first(where: { $0.specification.name == name }) else {
      output.writeError("tflite: unknown command '\(name)'\n\n" + overview)
      return ExitCode.usage
    }
    let rest = Array(arguments.dropFirst())
    if rest.contains("-h") || rest.contains("--help") {
      output.write(command.specification.help)
      return ExitCode.success
    }
    do {
      let parsed = try command.specification.parse(rest)
      return try command.run(parsed, output: &output)
    } catch let error as UsageError {
      output.writeError("tflite \(name): \(error.message)\n\n" + command.specification.help)
      return ExitCode.usage
    } catch {
      output.writeError("tflite \(name): error: \(error)\n")
      return ExitCode.failure
    }
  }

  /// The text of `tflite --help`.
  static var overview: String {
    var text = "usage: tflite <command> [options]\n\ncommands:\n"
    let width = subcommands.map { $0.specification.name.count }.max() ?? 0
    for command in subcommands {
      let name = command.specification.name
      text += "  \(name)\(String(repeating: " ", count: width - name.count))  \(command.specification.abstract)\n"
    }
    text += "\nRun `tflite help <command>` for a command's options.\n"
    return text
  }
}

/// Process exit codes used by the tool (64 = usage error, as in BSD `sysexits.h`).
public enum ExitCode {
  /// The command did what was asked.
  public static let success: Int32 = 0
  /// The command ran but failed (a load error, an out-of-tolerance comparison, a failed download).
  public static let failure: Int32 = 1
  /// The command could not use its input (`compare --reference` with a dump that does not fit the model).
  public static let unusableInput: Int32 = 2
  /// The command line itself was wrong.
  public static let usage: Int32 = 64
}

/// One `tflite` subcommand.
public protocol Subcommand {
  /// Name, abstract and options of the command.
  static var specification: CommandSpecification { get }
  /// Runs the command on already-parsed arguments and returns the exit code.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32
}

/// Where command output goes: standard output and standard error, or a buffer in tests.
public protocol TextSink {
  /// Writes `text` to the normal output.
  mutating func write(_ text: String)
  /// Writes `text` to the error output.
  mutating func writeError(_ text: String)
  /// True when normal output is an interactive terminal (progress bars, colours).
  var isTerminal: Bool { get }
}

/// `write(2)`, named apart from ``TextSink/write(_:)``.
private func unistd_write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}

/// A ``TextSink`` writing to the process's standard output and standard error.
public struct StandardOutput: TextSink {
  /// Creates a sink over the process streams.
  public init() {}
  /// Writes `text` to standard output.
  public mutating func write(_ text: String) { Self.write(text, to: 1) }
  /// Writes `text` to standard error.
  public mutating func writeError(_ text: String) { Self.write(text, to: 2) }
  /// Writes all of `text` to file descriptor `descriptor`, retrying short writes.
  private static func write(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = unistd_write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written <= 0 { return }
        offset += written
      }
    }
  }
  /// True when standard output is a terminal.
  public var isTerminal: Bool { isatty(1) != 0 }
}

/// A ``TextSink`` that keeps everything in memory (for tests). A class, so that the copy
/// ``CommandLineTool/main(arguments:output:)`` writes to is the caller's object.
public final class CapturedOutput: TextSink {
  /// Everything written to the normal output.
  public var standardOutput = ""
  /// Everything written to the error output.
  public var standardError = ""
  /// Creates an empty capture.
  public init() {}
  /// Appends `text` to ``standardOutput``.
  public func write(_ text: String) { standardOutput += text }
  /// Appends `text` to ``standardError``.
  public func writeError(_ text: String) { standardError += text }
  /// Always false.
  public var isTerminal: Bool { false }
}
