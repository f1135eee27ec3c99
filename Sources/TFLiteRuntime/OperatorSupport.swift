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

extension OperatorSupport {
  /// Every operator of `model` this runtime cannot run, with why, found by loading it as
  /// `ModelRunner(model:options:)` does (lowering subgraph 0 and every subgraph its control flow
  /// calls: tensors and kernels, with nothing allocated or run) and also lowering every signature's
  /// subgraph, which a runner otherwise lowers when the signature is first used. It is the list
  /// ``RuntimeError/unsupportedOperators(_:)`` carries when loading or a signature's first use
  /// throws; empty when neither does. Other load errors (a graph that is not valid) are thrown.
  public static func unsupportedOperators(
    in model: TFLiteModel, options: RunnerOptions = RunnerOptions()
  ) throws -> [UnsupportedOperator] {
    do {
      _ = try ModelRunner(model: model, options: options, includingSignatureSubgraphs: true)
    } catch RuntimeError.unsupportedOperators(let list) {
      return list
    }
    return []
  }
}
