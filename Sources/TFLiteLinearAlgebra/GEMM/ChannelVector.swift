/// A group of adjacent float channels processed together: `SIMD16/8/4<Float>` or a single `Float`.
///
/// Channel-vectorised kernels (depthwise convolution, pooling) are written once, generic over this
/// protocol, and `forEachChannelBlock` runs them with the widest vector that still fits.
@usableFromInline package protocol ChannelVector {
  /// Channels per vector.
  static var laneCount: Int { get }
  /// Every lane set to `value`.
  init(repeating value: Float)
  /// Loads `laneCount` consecutive floats (no alignment needed).
  static func load(_ pointer: UnsafePointer<Float>) -> Self
  /// Stores `laneCount` consecutive floats (no alignment needed).
  func store(to pointer: UnsafeMutablePointer<Float>)
  /// Lane-wise sum.
  static func + (lhs: Self, rhs: Self) -> Self
  /// Lane-wise product.
  static func * (lhs: Self, rhs: Self) -> Self
  /// Lane-wise quotient.
  static func / (lhs: Self, rhs: Self) -> Self
  /// `self + lhs * rhs` with a single rounding.
  func addingProduct(_ lhs: Self, _ rhs: Self) -> Self
  /// Lane-wise square root.
  func squareRoot() -> Self
  /// Lane-wise `other > self ? other : self` (TFLite's `std::max(self, other)`).
  func maximum(_ other: Self) -> Self
  /// `min(max(self, lower), upper)` lane by lane.
  func clamped(_ range: FloatClampRange) -> Self
}

extension ChannelVector {
  /// `self += a * b`: separate multiply and add on x86-64 (no FMA on the baseline target, where
  /// `addingProduct` would call libm's `fmaf` per lane), fused on AArch64.
  @inlinable @inline(__always)
  package mutating func multiplyAdd(_ a: Self, _ b: Self) {
    #if arch(arm64)
      self = addingProduct(a, b)
    #else
      self = self + a * b
    #endif
  }
}

extension Float: ChannelVector {
  @inlinable package static var laneCount: Int { 1 }
  @inlinable package init(repeating value: Float) { self = value }
  @inlinable @inline(__always) package static func load(_ pointer: UnsafePointer<Float>) -> Float { pointer.pointee }
  @inlinable @inline(__always) package func store(to pointer: UnsafeMutablePointer<Float>) { pointer.pointee = self }
  @inlinable @inline(__always) package func maximum(_ other: Float) -> Float { other > self ? other : self }
  @inlinable @inline(__always) package func clamped(_ range: FloatClampRange) -> Float { range.apply(self) }
}

/// The shared conformance of the float SIMD vectors.
@usableFromInline package protocol FloatSIMDChannelVector: ChannelVector, SIMD where Scalar == Float {}

extension FloatSIMDChannelVector {
  @inlinable package static var laneCount: Int { scalarCount }
  @inlinable @inline(__always) package static func load(_ pointer: UnsafePointer<Float>) -> Self {
    UnsafeRawPointer(pointer).loadUnaligned(as: Self.self)
  }
  @inlinable @inline(__always) package func store(to pointer: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: self, as: Self.self)
  }
  @inlinable @inline(__always) package func squareRoot() -> Self {
    var result = self
    for lane in 0..<Self.scalarCount { result[lane] = self[lane].squareRoot() }
    return result
  }
  @inlinable @inline(__always) package func maximum(_ other: Self) -> Self {
    var result = self
    for lane in 0..<Self.scalarCount { result[lane] = other[lane] > self[lane] ? other[lane] : self[lane] }
    return result
  }
}

// `clamped` is spelled out per type: as a shared generic default it was left as an out-of-line
// call in the specialised depthwise loop, passing each vector through registers and back.
extension SIMD16: ChannelVector, FloatSIMDChannelVector where Scalar == Float {
  @inlinable @inline(__always) package func clamped(_ range: FloatClampRange) -> Self { range.apply(self) }
}
extension SIMD8: ChannelVector, FloatSIMDChannelVector where Scalar == Float {
  @inlinable @inline(__always) package func clamped(_ range: FloatClampRange) -> Self { range.apply(self) }
}
extension SIMD4: ChannelVector, FloatSIMDChannelVector where Scalar == Float {
  @inlinable @inline(__always) package func clamped(_ range: FloatClampRange) -> Self { range.apply(self) }
}

/// A computation over one block of adjacent channels, written once for every vector width.
@usableFromInline package protocol ChannelBlockOperation {
  /// Processes channels `channel ..< channel + Vector.laneCount`.
  func run<Vector: ChannelVector>(_ vector: Vector.Type, channel: Int)
}

/// Covers channels `first ..< channels` with 16-lane blocks, then at most one 8- and one 4-lane
/// block, then single channels.
@inlinable @inline(__always)
package func forEachChannelBlock<Operation: ChannelBlockOperation>(
  channels: Int, startingAt first: Int = 0, _ operation: Operation
) {
  var channel = first
  while channel + 16 <= channels {
    operation.run(SIMD16<Float>.self, channel: channel)
    channel += 16
  }
  if channel + 8 <= channels {
    operation.run(SIMD8<Float>.self, channel: channel)
    channel += 8
  }
  if channel + 4 <= channels {
    operation.run(SIMD4<Float>.self, channel: channel)
    channel += 4
  }
  while channel < channels {
    operation.run(Float.self, channel: channel)
    channel += 1
  }
}
