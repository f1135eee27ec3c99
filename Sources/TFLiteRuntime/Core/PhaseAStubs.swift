// TEMPORARY (phase A of the shapes branch): stands in for the lead's core until "Runtime core" lands.
// Deleted when main is merged.

/// Why a kernel cannot run a node.
public enum KernelError: Error {
  /// A type or variant the runtime does not implement.
  case unsupported(String)
  /// Shapes, values or options that are invalid for the op.
  case invalid(String)
}
