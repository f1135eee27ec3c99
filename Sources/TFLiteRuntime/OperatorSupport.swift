// Temporary stub: the issue "Run float models" fills in the kernel registry.

/// Answers whether this runtime has a kernel for an operator.
public enum OperatorSupport {
  /// True when the runtime can run builtin operator `code` (its schema value) at `version`, or custom op `customCode`.
  public static func isSupported(builtinCode: Int32, version: Int32, customCode: String?) -> Bool { false }
}
