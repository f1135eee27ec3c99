import TFLiteFormat

/// Answers whether this runtime has a kernel for an operator.
public enum OperatorSupport {
  /// True when the runtime has a kernel for builtin operator `builtinCode` (its schema value), or
  /// for custom operator `customCode`. Kernels accept every version the schema defines; the types
  /// and options a node actually uses are checked when the interpreter is built.
  public static func isSupported(builtinCode: Int32, version: Int32, customCode: String?) -> Bool {
    !KernelRegistry.kernels(for: operatorName(builtinCode: builtinCode, customCode: customCode)).isEmpty
  }

  /// The name kernels are registered under: the custom code for custom operators, else the schema name.
  static func operatorName(builtinCode: Int32, customCode: String?) -> String {
    let code = BuiltinOperator(rawValue: builtinCode)
    if code == .custom, let customCode { return customCode }
    return code.name
  }
}
