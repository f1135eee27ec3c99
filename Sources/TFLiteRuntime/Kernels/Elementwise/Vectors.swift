// Shared SIMD plumbing for the elementwise, activation and reduction kernels: 16-lane loads and
// stores over raw pointers (with partial tails), runs of vectors (memory streamed or one value
// repeated, mapped or combined by an operation), a store loop and a multi-accumulator reduction.

/// Lanes processed per step by the elementwise kernels.
let vectorLaneCount = 16

/// Loads 16 consecutive elements (no alignment needed).
@inline(__always)
func loadVector<Scalar: SIMDScalar & BitwiseCopyable>(_ pointer: UnsafePointer<Scalar>) -> SIMD16<Scalar> {
  UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Scalar>.self)
}

/// Loads `count` (< 16) elements; the remaining lanes repeat the first element, so lane-wise
/// operations on them stay as well defined as on the real data (no division by a padding zero).
@inline(__always)
func loadPartialVector<Scalar: SIMDScalar>(_ pointer: UnsafePointer<Scalar>, count: Int) -> SIMD16<Scalar> {
  var vector = SIMD16<Scalar>(repeating: pointer[0])
  withUnsafeMutableBytes(of: &vector) { bytes in
    bytes.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count &* MemoryLayout<Scalar>.stride))
  }
  return vector
}

/// Stores 16 lanes to consecutive elements (no alignment needed).
@inline(__always)
func storeVector<Scalar: SIMDScalar & BitwiseCopyable>(_ vector: SIMD16<Scalar>, _ pointer: UnsafeMutablePointer<Scalar>) {
  UnsafeMutableRawPointer(pointer).storeBytes(of: vector, as: SIMD16<Scalar>.self)
}

/// Stores the first `count` lanes, 16 when the vector is whole.
@inline(__always)
func storeVector<Scalar: SIMDScalar & BitwiseCopyable>(
  _ vector: SIMD16<Scalar>, _ pointer: UnsafeMutablePointer<Scalar>, lanes count: Int
) {
  if count == vectorLaneCount {
    storeVector(vector, pointer)
  } else {
    withUnsafeBytes(of: vector) { bytes in
      UnsafeMutableRawBufferPointer(start: pointer, count: count &* MemoryLayout<Scalar>.stride)
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<(count &* MemoryLayout<Scalar>.stride)]))
    }
  }
}

/// A run of elements delivered 16 lanes at a time.
///
/// Kernels compose their loops from these value types rather than from closures: every
/// `vector(at:lanes:)` is `@inline(__always)`, so the whole chain inlines into one loop body
/// whatever its size (a closure holding a large body, e.g. an exponential, stays an outlined
/// call that passes each `SIMD16` through memory, measured 2–3× slower with AVX-512).
protocol LaneVectors {
  /// Element type of the run.
  associatedtype Scalar: SIMDScalar & BitwiseCopyable
  /// Lanes for elements `index ..< index + lanes` of the run (`lanes` ≤ 16).
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar>
}

/// Where an operand's lanes come from inside one contiguous run of output elements.
protocol VectorSource: LaneVectors {
  /// A source for the run whose first element sits at `base + offset`.
  init(_ base: UnsafePointer<Scalar>, offset: Int)
}

/// An operand that advances with the output (stride 1).
struct StreamedOperand<Scalar: SIMDScalar & BitwiseCopyable>: VectorSource {
  let base: UnsafePointer<Scalar>

  @inline(__always)
  init(_ base: UnsafePointer<Scalar>, offset: Int) { self.base = base + offset }

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar> {
    lanes == vectorLaneCount ? loadVector(base + index) : loadPartialVector(base + index, count: lanes)
  }
}

/// An operand broadcast along the run (stride 0): one value repeated.
struct RepeatedOperand<Scalar: SIMDScalar & BitwiseCopyable>: VectorSource {
  let value: SIMD16<Scalar>

  @inline(__always)
  init(_ base: UnsafePointer<Scalar>, offset: Int) { value = SIMD16(repeating: base[offset]) }

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Scalar> { value }
}

/// A unary operation applied to a run.
struct MappedVectors<Source: LaneVectors, Operation: UnaryLanewiseOperation>: LaneVectors
where Operation.Operand == Source.Scalar {
  let source: Source
  let operation: Operation

  @inline(__always)
  init(_ source: Source, _ operation: Operation) {
    self.source = source
    self.operation = operation
  }

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Operation.Result> {
    operation(source.vector(at: index, lanes: lanes))
  }
}

/// A binary operation applied to two runs of the same length.
struct CombinedVectors<Left: LaneVectors, Right: LaneVectors, Operation: BinaryLanewiseOperation>: LaneVectors
where Operation.Operand == Left.Scalar, Operation.Operand == Right.Scalar {
  let left: Left
  let right: Right
  let operation: Operation

  @inline(__always)
  init(_ left: Left, _ right: Right, _ operation: Operation) {
    self.left = left
    self.right = right
    self.operation = operation
  }

  @inline(__always)
  func vector(at index: Int, lanes: Int) -> SIMD16<Operation.Result> {
    operation(left.vector(at: index, lanes: lanes), right.vector(at: index, lanes: lanes))
  }
}

/// Stores the first `count` elements of `vectors` to `output`, 16 at a time with one partial tail.
@inline(__always)
func storeEachVector<Vectors: LaneVectors>(
  _ vectors: Vectors, count: Int, into output: UnsafeMutablePointer<Vectors.Scalar>
) {
  var index = 0
  while count &- index >= vectorLaneCount {
    storeVector(vectors.vector(at: index, lanes: vectorLaneCount), output + index)
    index &+= vectorLaneCount
  }
  if index < count {
    let lanes = count &- index
    storeVector(vectors.vector(at: index, lanes: lanes), output + index, lanes: lanes)
  }
}

/// An associative, commutative combination with an identity (sum, product, max, min…).
protocol ReductionOperation {
  /// Element type reduced.
  associatedtype Scalar: SIMDScalar & BitwiseCopyable
  /// The value that leaves any other unchanged when combined with it.
  var identity: Scalar { get }
  /// Lane-wise combination.
  func combine(_ lhs: SIMD16<Scalar>, _ rhs: SIMD16<Scalar>) -> SIMD16<Scalar>
}

extension ReductionOperation {
  /// Combination of two single values.
  @inline(__always)
  func combine(_ lhs: Scalar, _ rhs: Scalar) -> Scalar {
    combine(SIMD16(repeating: lhs), SIMD16(repeating: rhs))[0]
  }

  /// Combination of the 16 lanes of one vector.
  @inline(__always)
  func combineLanes(_ vector: SIMD16<Scalar>) -> Scalar {
    var result = vector[0]
    for lane in 1..<vectorLaneCount { result = combine(result, vector[lane]) }
    return result
  }
}

/// Reduces the first `count` elements of `vectors` with four independent accumulators, so the
/// float combination does not serialize on one register.
@inline(__always)
func reduceVectors<Operation: ReductionOperation, Vectors: LaneVectors>(
  _ operation: Operation, _ vectors: Vectors, count: Int
) -> Operation.Scalar where Vectors.Scalar == Operation.Scalar {
  let identity = SIMD16<Operation.Scalar>(repeating: operation.identity)
  var accumulator0 = identity, accumulator1 = identity
  var accumulator2 = identity, accumulator3 = identity
  var index = 0
  while count &- index >= 4 &* vectorLaneCount {
    accumulator0 = operation.combine(accumulator0, vectors.vector(at: index, lanes: vectorLaneCount))
    accumulator1 = operation.combine(accumulator1, vectors.vector(at: index &+ vectorLaneCount, lanes: vectorLaneCount))
    accumulator2 = operation.combine(accumulator2, vectors.vector(at: index &+ 2 &* vectorLaneCount, lanes: vectorLaneCount))
    accumulator3 = operation.combine(accumulator3, vectors.vector(at: index &+ 3 &* vectorLaneCount, lanes: vectorLaneCount))
    index &+= 4 &* vectorLaneCount
  }
  while count &- index >= vectorLaneCount {
    accumulator0 = operation.combine(accumulator0, vectors.vector(at: index, lanes: vectorLaneCount))
    index &+= vectorLaneCount
  }
  if index < count {
    let lanes = count &- index
    var tail = vectors.vector(at: index, lanes: lanes)
    for lane in lanes..<vectorLaneCount { tail[lane] = operation.identity }
    accumulator1 = operation.combine(accumulator1, tail)
  }
  let combined = operation.combine(
    operation.combine(accumulator0, accumulator1), operation.combine(accumulator2, accumulator3))
  return operation.combineLanes(combined)
}
