/// A command-line mistake, reported with the command's usage and exit code 64.
public struct UsageError: Error, CustomStringConvertible {
  /// What is wrong with the command line.
  public var message: String
  /// Creates a usage error.
  public init(_ message: String) { self.message = message }
  /// The message.
  public var description: String { message }
}

/// One `--option` a command accepts.
public struct OptionSpecification: Sendable {
  /// Long name without the dashes, e.g. `threads` for `--threads`.
  public var name: String
  /// Placeholder for the value (`N`, `FILE`), or nil for a flag that takes no value.
  public var valueName: String?
  /// Whether the option may be given more than once (`--input a.npy --input b.npy`).
  public var isRepeatable: Bool
  /// One line of help.
  public var help: String

  /// A flag (`--json`).
  public static func flag(_ name: String, help: String) -> Self {
    Self(name: name, valueName: nil, isRepeatable: false, help: help)
  }
  /// An option with a value (`--threads N`), repeatable when `repeatable` is true.
  public static func option(_ name: String, value: String, repeatable: Bool = false, help: String) -> Self {
    Self(name: name, valueName: value, isRepeatable: repeatable, help: help)
  }
}

/// Name, usage and options of a subcommand; parses its arguments.
public struct CommandSpecification: Sendable {
  /// The subcommand's name (`inspect`).
  public var name: String
  /// One-line description shown by `tflite --help`.
  public var abstract: String
  /// Positional arguments as shown in the usage line (`MODEL`).
  public var positionals: [String]
  /// Accepted options.
  public var options: [OptionSpecification]
  /// Extra help text printed after the options.
  public var discussion: String

  /// Creates a specification.
  public init(
    name: String, abstract: String, positionals: [String] = [], options: [OptionSpecification] = [],
    discussion: String = ""
  ) {
    self.name = name
    self.abstract = abstract
    self.positionals = positionals
    self.options = options
    self.discussion = discussion
  }

  /// The help text: usage line, abstract, options.
  public var help: String {
    var text = "usage: tflite \(name)"
    for positional in positionals { text += " \(positional)" }
    if !options.isEmpty { text += " [options]" }
    text += "\n\n\(abstract)\n"
    if !options.isEmpty {
      text += "\noptions:\n"
      let labels = options.map { "--\($0.name)" + ($0.valueName.map { " \($0)" } ?? "") }
      let width = labels.map(\.count).max() ?? 0
      for (label, option) in zip(labels, options) {
        text += "  \(label)\(String(repeating: " ", count: width - label.count))  \(option.help)\n"
      }
    }
    if !discussion.isEmpty { text += "\n\(discussion)\n" }
    return text
  }

  /// Splits `arguments` into positionals and options; `--name=value` and `--name value` both work.
  public func parse(_ arguments: [String]) throws -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      guard !onlyPositionals, argument.hasPrefix("--"), argument.count > 2 else {
        if argument == "--" && !onlyPositionals { onlyPositionals = true } else { parsed.positionals.append(argument) }
        continue
      }
      var name = String(argument.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      guard let option = options.first(where: { $0.name == name }) else {
        throw UsageError("unknown option '--\(name)'")
      }
      if option.valueName == nil {
        guard inlineValue == nil else { throw UsageError("'--\(name)' takes no value") }
        parsed.flags.insert(name)
        continue
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else {
        guard index < arguments.count else { throw UsageError("'--\(name)' needs a value") }
        value = arguments[index]
        index += 1
      }
      if !option.isRepeatable && parsed.values[name] != nil {
        throw UsageError("'--\(name)' may be given only once")
      }
      parsed.values[name, default: []].append(value)
    }
    return parsed
  }
}

/// The result of parsing a command line against a ``CommandSpecification``.
public struct ParsedArguments: Sendable {
  /// Arguments that are not options, in order.
  public var positionals: [String] = []
  /// Values of options that take one, by option name, in command-line order.
  public var values: [String: [String]] = [:]
  /// Flags that were given.
  public var flags: Set<String> = []

  /// Creates an empty result.
  public init() {}

  /// Whether flag `name` was given.
  public func flag(_ name: String) -> Bool { flags.contains(name) }

  /// The last value of option `name`, if given.
  public func value(_ name: String) -> String? { values[name]?.last }

  /// Every value of a repeatable option `name`.
  public func allValues(_ name: String) -> [String] { values[name] ?? [] }

  /// The value of option `name` as an integer in `range`, or `defaultValue` when absent.
  public func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
    guard let text = value(name) else { return defaultValue }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError("'--\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
    }
    return number
  }

  /// The value of option `name` as a non-negative finite number, or `defaultValue` when absent.
  public func number(_ name: String, default defaultValue: Double) throws -> Double {
    guard let text = value(name) else { return defaultValue }
    guard let number = Double(text), number.isFinite, number >= 0 else {
      throw UsageError("'--\(name)' must be a non-negative number, got '\(text)'")
    }
    return number
  }

  /// The single positional argument, named `what` in the error when it is missing or repeated.
  public func singlePositional(_ what: String) throws -> String {
    guard positionals.count == 1, let only = positionals.first else {
      throw UsageError(positionals.isEmpty ? "missing \(what)" : "expected one \(what), got \(positionals.count) arguments")
    }
    return only
  }
}
