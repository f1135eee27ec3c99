/// Affine quantization of a tensor: `real = scale * (quantized - zeroPoint)`, per tensor or per axis.
public struct Quantization: Sendable, Hashable {
  /// One scale per tensor, or one per slice along ``axis``.
  public var scales: [Float]
  /// Zero points, as many as ``scales``.
  public var zeroPoints: [Int]
  /// The quantized dimension (meaningful when there is more than one scale).
  public var axis: Int

  /// Creates quantization parameters.
  public init(scales: [Float], zeroPoints: [Int], axis: Int = 0) {
    self.scales = scales
    self.zeroPoints = zeroPoints
    self.axis = axis
  }

  /// True when each slice along ``axis`` has its own scale.
  public var isPerAxis: Bool { scales.count > 1 }

  /// The per-tensor scale (the first one).
  public var scale: Float { scales.first ?? 0 }

  /// The per-tensor zero point (the first one).
  public var zeroPoint: Int { zeroPoints.first ?? 0 }
}
