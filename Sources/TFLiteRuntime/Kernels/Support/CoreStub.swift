// Phase A stand-in for the core's error type; removed when the runtime core lands on main.

/// Errors thrown by kernels while they are built, prepared or evaluated.
public enum KernelError: Error {
  /// The model uses an operand type or variant this runtime does not run.
  case unsupported(String)
  /// Shapes or values make the operation undefined.
  case invalid(String)
}
