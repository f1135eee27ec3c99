// UNSORTED_SEGMENT_SUM / MAX / MIN / PROD: data [d0, …] whose leading axes match the segment ids'
// shape; every data slice is combined into the output row named by its id. The output has
// `num_segments` rows (a scalar or one-element int32 tensor). As in TFLite: rows start at the
// operation's identity (0, the lowest float / int, the largest one, 1) and keep it when no id names
// them; negative ids are skipped; an id ≥ num_segments is an error; int32 arithmetic wraps.

/// Element types of the unsorted segment reductions (float32, int32).
protocol SegmentScalar: ArithmeticScalar {
  /// lhs + rhs (wrapping for integers).
  static func segmentSum(_ lhs: Self, _ rhs: Self) -> Self
  /// lhs × rhs (wrapping for integers).
  static func segmentProduct(_ lhs: Self, _ rhs: Self) -> Self
}

extension Float: SegmentScalar {
  @inline(__always) static func segmentSum(_ lhs: Float, _ rhs: Float) -> Float { lhs + rhs }
  @inline(__always) static func segmentProduct(_ lhs: Float, _ rhs: Float) -> Float { lhs * rhs }
}

extension Int32: SegmentScalar {
  @inline(__always) static func segmentSum(_ lhs: Int32, _ rhs: Int32) -> Int32 { lhs &+ rhs }
  @inline(__always) static func segmentProduct(_ lhs: Int32, _ rhs: Int32) -> Int32 { lhs &* rhs }
}

/// How one unsorted segment reduction combines values.
protocol SegmentReduction {
  /// The TFLite operator name.
  static var operatorName: String { get }
  /// The value of a row no id names.
  static func identity<Scalar: SegmentScalar>(_: Scalar.Type) -> Scalar
  /// `accumulated` combined with `value`.
  static func combine<Scalar: SegmentScalar>(_ accumulated: Scalar, _ value: Scalar) -> Scalar
}

/// UNSORTED_SEGMENT_SUM.
enum SegmentSumReduction: SegmentReduction {
  static let operatorName = "UNSORTED_SEGMENT_SUM"
  static func identity<Scalar: SegmentScalar>(_: Scalar.Type) -> Scalar { .zero }
  @inline(__always)
  static func combine<Scalar: SegmentScalar>(_ accumulated: Scalar, _ value: Scalar) -> Scalar {
    Scalar.segmentSum(accumulated, value)
  }
}

/// UNSORTED_SEGMENT_PROD.
enum SegmentProductReduction: SegmentReduction {
  static let operatorName = "UNSORTED_SEGMENT_PROD"
  static func identity<Scalar: SegmentScalar>(_: Scalar.Type) -> Scalar { 1 }
  @inline(__always)
  static func combine<Scalar: SegmentScalar>(_ accumulated: Scalar, _ value: Scalar) -> Scalar {
    Scalar.segmentProduct(accumulated, value)
  }
}

/// UNSORTED_SEGMENT_MAX.
enum SegmentMaximumReduction: SegmentReduction {
  static let operatorName = "UNSORTED_SEGMENT_MAX"
  static func identity<Scalar: SegmentScalar>(_: Scalar.Type) -> Scalar { Scalar.leastFiniteValue }
  @inline(__always)
  static func combine<Scalar: SegmentScalar>(_ accumulated: Scalar, _ value: Scalar) -> Scalar {
    accumulated < value ? value : accumulated
  }
}

/// UNSORTED_SEGMENT_MIN.
enum SegmentMinimumReduction: SegmentReduction {
  static let operatorName = "UNSORTED_SEGMENT_MIN"
  static func identity<Scalar: SegmentScalar>(_: Scalar.Type) -> Scalar { Scalar.greatestFiniteValue }
  @inline(__always)
  static func combine<Scalar: SegmentScalar>(_ accumulated: Scalar, _ value: Scalar) -> Scalar {
    value < accumulated ? value : accumulated
  }
}

/// An unsorted segment reduction of float32 or int32 data with int32 ids and segment count.
final class UnsortedSegmentKernel<Reduction: SegmentReduction>: Kernel {
  private let data: RuntimeTensor
  private let ids: RuntimeTensor
  private let segmentCount: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    try node.expect(inputs: 3, outputs: 1)
    data = try node.input(0)
    ids = try node.input(1)
    segmentCount = try node.input(2)
    output = try node.output(0)
    _ = try commonElementType([data, output], allowed: [.float32, .int32], operatorName: Reduction.operatorName)
    guard ids.type == .int32, segmentCount.type == .int32 else {
      throw KernelError.unsupported(
        "\(Reduction.operatorName) with \(ids.type.name) ids and \(segmentCount.type.name) num_segments")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard ids.shape.count <= data.shape.count, Array(data.shape.prefix(ids.shape.count)) == ids.shape else {
      throw KernelError.invalid(
        "\(Reduction.operatorName): segment ids \(ids.shape) are not the leading axes of data \(data.shape)")
    }
    guard segmentCount.shape.isEmpty || segmentCount.shape == [1] else {
      throw KernelError.invalid("\(Reduction.operatorName): num_segments must be one value, has shape \(segmentCount.shape)")
    }
    guard segmentCount.hasValuesForPrepare, let countData = segmentCount.data else {
      throw KernelError.needsInputValues("\(Reduction.operatorName) num_segments is computed at run time")
    }
    let segments = Int(countData.assumingMemoryBound(to: Int32.self).pointee)
    guard segments >= 0 else { throw KernelError.invalid("\(Reduction.operatorName): num_segments \(segments) < 0") }
    let shape = [segments] + data.shape[ids.shape.count...]
    _ = try checkedElementCount(shape, op: Reduction.operatorName)
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let idValues = UnsafePointer(try tensorData(ids).assumingMemoryBound(to: Int32.self))
    let segments = output.shape.first ?? 0
    guard Int(try tensorData(segmentCount).assumingMemoryBound(to: Int32.self).pointee) == segments else {
      throw KernelError.invalid("\(Reduction.operatorName): num_segments changed after the output was sized")
    }
    for position in 0..<ids.elementCount where Int(idValues[position]) >= segments {
      throw KernelError.invalid(
        "\(Reduction.operatorName): segment id \(idValues[position]) is not below num_segments \(segments)")
    }
    let (source, destination) = try evalPointers(data, output, op: Reduction.operatorName)
    if data.type == .float32 {
      reduce(Float.self, source, idValues, destination)
    } else {
      reduce(Int32.self, source, idValues, destination)
    }
  }

  private func reduce<Scalar: SegmentScalar>(
    _: Scalar.Type, _ source: UnsafeRawPointer, _ idValues: UnsafePointer<Int32>,
    _ destination: UnsafeMutableRawPointer
  ) {
    let values = source.assumingMemoryBound(to: Scalar.self)
    let rows = destination.assumingMemoryBound(to: Scalar.self)
    rows.update(repeating: Reduction.identity(Scalar.self), count: output.elementCount)
    let sliceLength = output.shape.dropFirst().reduce(1, *)
    for position in 0..<ids.elementCount where idValues[position] >= 0 {
      let row = rows + Int(idValues[position]) * sliceLength
      let slice = values + position * sliceLength
      for element in 0..<sliceLength { row[element] = Reduction.combine(row[element], slice[element]) }
    }
  }
}
