/// The kernels of the runtime, by operator name (schema `BuiltinOperator` name or custom code).
public enum KernelRegistry {
  /// Every kernel the runtime has. Each op family file contributes one table.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let builtin: [String: any Kernel.Type] = {
    let families: [[String: any Kernel.Type]] = []
    return families.reduce(into: [:]) { all, family in all.merge(family) { first, _ in first } }
  }()

  /// The kernel type for `opName`, if the runtime has one.
  public static func kernel(for opName: String) -> (any Kernel.Type)? { builtin[opName] }

  /// Names of every operator the runtime has a kernel for, sorted.
  public static var supportedOperators: [String] { builtin.keys.sorted() }
}
