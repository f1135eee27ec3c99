import TFLiteFormat
import TFLiteLinearAlgebra

extension FloatClampRange {
  /// The clamp of a fused activation, as TFLite's `CalculateActivationRange` computes it for float.
  /// TANH and SIGN_BIT are not clamps; TFLite's float kernels silently skip them, so we refuse them.
  init(_ activation: ActivationFunctionType, op: String) throws {
    switch activation {
    case .none: self = .none
    case .relu: self = .relu
    case .reluN1To1: self = .reluMinusOneToOne
    case .relu6: self = .relu6
    default: throw KernelError.unsupported("\(op) with fused activation \(activation.name)")
    }
  }
}

/// Regions of a node's scratch memory, each 64-byte aligned: offsets are fixed in `prepare` and
/// added to `EvalContext.scratch` in `eval`.
struct ScratchLayout {
  /// Total bytes reserved so far.
  private(set) var byteCount = 0

  /// Reserves `bytes` and returns the region's offset.
  mutating func reserve(bytes: Int) -> Int {
    let offset = byteCount
    byteCount += (max(bytes, 0) + 63) & ~63
    return offset
  }

  /// Reserves room for `count` floats and returns the region's offset.
  mutating func reserve(floats count: Int) -> Int { reserve(bytes: count * MemoryLayout<Float>.stride) }
}

/// The operands of the weighted kernels (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): input,
/// weights, an optional bias and one output, all FLOAT32.
struct WeightedOperands {
  /// Input 0.
  let input: RuntimeTensor
  /// Input 1: the filter or weights.
  let weights: RuntimeTensor
  /// Input 2 when present.
  let bias: RuntimeTensor?
  /// The output.
  let output: RuntimeTensor

  /// Reads and checks the operands of `node`.
  init(_ node: Node, op: String) throws {
    try node.expect(inputs: 2, maxInputs: 3, outputs: 1)
    input = try node.input(0)
    weights = try node.input(1)
    bias = node.optionalInput(2)
    output = try node.output(0)
    try FloatOperands.require([input, weights, bias, output], op: op)
  }
}

/// Shared operand checks of the float32 kernels.
enum FloatOperands {
  /// The node's options when `match` finds them in the union, `defaults` when the node has none.
  static func options<Options>(
    of node: Node, op: String, defaults: Options, _ match: (BuiltinOptions) -> Options?
  ) throws -> Options {
    if let options = match(node.options) { return options }
    guard case .none = node.options else { throw KernelError.invalid("\(op) has options of another operator") }
    return defaults
  }

  /// Throws `unsupported` unless every tensor is FLOAT32.
  static func require(_ tensors: [RuntimeTensor?], op: String) throws {
    for case let tensor? in tensors where tensor.type != .float32 {
      throw KernelError.unsupported("\(op) with \(tensor.type.name) operand '\(tensor.name)' (only FLOAT32 here)")
    }
  }

  /// The product of `factors`, or `KernelError.invalid` naming `what` when it is negative or too large.
  static func checkedCount(_ factors: [Int], _ what: @autoclosure () -> String) throws -> Int {
    guard let count = checkedProduct(factors) else {
      throw KernelError.invalid("\(what()) \(factors) is not a valid size")
    }
    return count
  }

  /// Throws unless `tensor` has rank `rank`.
  static func requireRank(_ tensor: RuntimeTensor, _ rank: Int, op: String, role: String) throws {
    guard tensor.shape.count == rank else {
      throw KernelError.invalid("\(op) \(role) must have rank \(rank), got \(tensor.shape)")
    }
  }

  /// Throws unless the optional bias has exactly `count` elements.
  static func requireBias(_ bias: RuntimeTensor?, count: Int, op: String) throws {
    guard let bias else { return }
    guard bias.elementCount == count else {
      throw KernelError.invalid("\(op) bias has \(bias.elementCount) elements, expected \(count)")
    }
  }
}

/// A constant bias padded to whole GEMM panels once, or the scratch region it is padded into in
/// `eval` when the bias is computed at run time. `eval` reads it through ``pointer(_:scratch:)``, a
/// plain pointer: a closure over a copy of the padded values retained and released them per node.
struct PaddedBias {
  /// Owns the constant padded bias that `constantPointer` points into.
  private var constant: PackedMatrices<Float>?
  private var constantPointer: UnsafePointer<Float>?
  private var scratchOffset: Int?
  private var groups = 0
  private var columns = 0
  private var isPresent = false

  /// Plans the bias for `groups` groups of `columns` outputs.
  mutating func prepare(_ bias: RuntimeTensor?, groups: Int, columns: Int, scratch: inout ScratchLayout) {
    self.groups = groups
    self.columns = columns
    isPresent = bias != nil
    constant = nil
    constantPointer = nil
    scratchOffset = nil
    guard let bias else { return }
    if bias.isConstant {
      // Each group's bias is a 1 × `columns` matrix: packed, it is padded with zeros to whole
      // panels, one group after the other, as `PanelPacking.padBias` lays it out.
      let padded = PackedMatrices(
        UnsafePointer(bias.pointer(as: Float.self)), sourceStride: columns, count: groups,
        layout: .depthMajor(columns: columns), depth: 1, columns: columns)
      constant = padded
      constantPointer = padded.matrix(0)
    } else {
      scratchOffset = scratch.reserve(floats: PanelPacking.paddedBiasCount(groups: groups, columns: columns))
    }
  }

  /// The padded bias (nil when the node has none), padded into scratch first if it is not constant.
  func pointer(_ bias: RuntimeTensor?, scratch: UnsafeMutableRawPointer?) -> UnsafePointer<Float>? {
    if let constantPointer { return constantPointer }
    guard isPresent, let bias, let scratchOffset, let scratch else { return nil }
    let destination = (scratch + scratchOffset).assumingMemoryBound(to: Float.self)
    PanelPacking.padBias(bias.pointer(as: Float.self), groups: groups, columns: columns, into: destination)
    return UnsafePointer(destination)
  }
}

/// The right-hand matrices of a GEMM kernel taken from a weight tensor: packed once in `prepare`
/// when the tensor is constant (and repacked only when its data or shape changes), else packed
/// into scratch at every `eval`.
struct PackedWeights {
  private var constant: PackedMatrices<Float>?
  /// The first packed matrix of `constant`.
  private var constantPointer: UnsafePointer<Float>?
  private var constantSource: UnsafeMutableRawPointer?
  private var scratchOffset: Int?
  private var count = 0
  private var sourceStride = 0
  private var layout = MatrixLayout(depthStride: 0, columnStride: 0)
  private var depth = 0
  private var columns = 0

  /// Elements between the starts of consecutive packed matrices.
  var matrixStride: Int { PanelPacking.packedCount(depth: depth, columns: columns) }

  /// Plans `count` matrices of `depth × columns`; matrix `i` of `tensor` starts at element `i * sourceStride`.
  mutating func prepare(
    _ tensor: RuntimeTensor, count: Int, sourceStride: Int, layout: MatrixLayout, depth: Int, columns: Int,
    scratch: inout ScratchLayout
  ) throws {
    let unchanged =
      self.count == count && self.sourceStride == sourceStride && self.depth == depth && self.columns == columns
      && self.layout.depthStride == layout.depthStride && self.layout.columnStride == layout.columnStride
    self.count = count
    self.sourceStride = sourceStride
    self.layout = layout
    self.depth = depth
    self.columns = columns
    scratchOffset = nil
    if tensor.isConstant, let data = tensor.data {
      guard !(unchanged && constant != nil && constantSource == data) else { return }
      constantSource = data
      let packed = PackedMatrices(
        UnsafePointer(data.assumingMemoryBound(to: Float.self)), sourceStride: sourceStride, count: count,
        layout: layout, depth: depth, columns: columns)
      constant = packed
      constantPointer = packed.matrix(0)
    } else {
      constant = nil
      constantPointer = nil
      constantSource = nil
      scratchOffset = scratch.reserve(floats: count * matrixStride)
    }
  }

  /// The packed matrices (matrix `i` at `i * matrixStride`), packed into scratch first if needed.
  /// A plain pointer, read without retaining the packed constant (see ``PaddedBias``).
  func pointer(_ tensor: RuntimeTensor, scratch: UnsafeMutableRawPointer?) throws -> UnsafePointer<Float> {
    if let constantPointer { return constantPointer }
    guard let scratch, let scratchOffset else { throw KernelError.invalid("weights were not prepared") }
    let destination = (scratch + scratchOffset).assumingMemoryBound(to: Float.self)
    let source = tensor.pointer(as: Float.self)
    for index in 0..<count {
      PanelPacking.pack(
        source + index * sourceStride, layout: layout, depth: depth, columns: columns,
        into: destination + index * matrixStride)
    }
    return UnsafePointer(destination)
  }
}
