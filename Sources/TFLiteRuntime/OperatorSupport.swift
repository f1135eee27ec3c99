import TFLiteFormat

/// Answers whether this runtime has a kernel for an operator.
public enum OperatorSupport {
  /// True when the runtime has a kernel for builtin operator `builtinCode` (its schema value), or
  /// for custom operator `customCode`. Kernels accept every version the schema defines; the types
  /// and options a node actually uses are checked when the interpreter is built.
  public static func isSupported(builtinCode: Int32, customCode: String?) -> Bool {
    let kind = OperatorKind(builtinCode: BuiltinOperator(rawValue: builtinCode), customCode: customCode)
    return KernelDispatch.hasKernel(for: kind)
  }

  /// The names (schema names of builtins, custom codes) of every operator the runtime has a kernel for, sorted.
  public static var supportedOperatorNames: [String] {
    let builtins = BuiltinOperator.allKnown.filter { KernelDispatch.hasKernel(for: .builtin($0)) }.map(\.name)
    return (builtins + CustomOperator.allCases.map(\.rawValue)).sorted()
  }
}
