// SIGN: −1, 0 or 1 by the sign of each element (0 for NaN, as TFLite's comparisons give).

/// SIGN, on the driver of NEG and ABS.
enum Signum: ArithmeticUnaryKind {
  static let operatorName = "SIGN"
  static let elementTypes: [ElementType] = [.float32, .int32]
  @inline(__always)
  static func apply<Scalar: ArithmeticScalar>(_ x: SIMD16<Scalar>) -> SIMD16<Scalar> {
    let zero = SIMD16<Scalar>(repeating: 0)
    let one = SIMD16<Scalar>(repeating: 1)
    return zero.replacing(with: one, where: Scalar.isLess(zero, x)).replacing(
      with: Scalar.negate(one), where: Scalar.isLess(x, zero))
  }
}

extension KernelRegistry {
  /// SIGN.
  // Written once by its initializer and only read afterwards.
  nonisolated(unsafe) static let sign: [String: any Kernel.Type] = [
    Signum.operatorName: UnaryKernel<ArithmeticUnaryDefinition<Signum>>.self
  ]
}
