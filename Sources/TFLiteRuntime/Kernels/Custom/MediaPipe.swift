import TFLiteFormat
import TFLiteLinearAlgebra

import TFLiteLinearAlgebra

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The first `count` little-endian int32 fields of raw custom options (MediaPipe stores some
/// options as TFLite's C parameter structs); throws when the bytes are too short.
private func rawInt32Fields(_ bytes: UnsafeRawBufferPointer, count: Int, op: String) throws -> [Int] {
  guard bytes.count >= count * 4 else {
    throw KernelError.invalid("\(op) custom options have \(bytes.count) bytes, expected at least \(count * 4)")
  }
  return (0..<count).map { Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))) }
}

/// True for TFLite's C padding value 1 (SAME), false for 2 (VALID); throws for any other value.
private func isSamePadding(_ value: Int, op: String) throws -> Bool {
  guard value == 1 || value == 2 else { throw KernelError.unsupported("\(op) padding \(value) (only 1 SAME and 2 VALID)") }
  return value == 1
}

/// The options MediaPipe stores for Convolution2DTransposeBias: the leading fields of TFLite's
/// transpose-convolution parameter struct as raw bytes, three little-endian int32 (padding,
/// stride width, stride height).
struct TransposeConvolutionBiasOptions: Equatable {
  /// True for SAME padding (1), false for VALID (2).
  let samePadding: Bool
  /// Horizontal stride.
  let strideWidth: Int
  /// Vertical stride.
  let strideHeight: Int

  /// Reads the options; throws when the bytes are too short or the values are out of range.
  init(customOptions bytes: UnsafeRawBufferPointer, op: String) throws {
    let fields = try rawInt32Fields(bytes, count: 3, op: op)
    samePadding = try isSamePadding(fields[0], op: op)
    strideWidth = fields[1]
    strideHeight = fields[2]
    guard strideWidth > 0, strideHeight > 0 else {
      throw KernelError.invalid("\(op) strides must be positive, got \(strideWidth)×\(strideHeight)")
    }
  }
}

/// MediaPipe's Convolution2DTransposeBias (float32): a transposed convolution with a bias and no
/// output-shape operand. Inputs `input [N,H,W,I]`, `weights [O,KH,KW,I]`, `bias [O]`; the output
/// size follows from the input, kernel, strides and padding (see
/// `WindowAxis.init(transposedConvolutionBiasOf:kernel:stride:samePadding:op:)`).
final class TransposeConvolutionBiasKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "Convolution2DTransposeBias"
  private let input: RuntimeTensor
  private let weights: RuntimeTensor
  private let bias: RuntimeTensor
  private let output: RuntimeTensor
  private let options: TransposeConvolutionBiasOptions
  private var shape: TransposeConvolutionShape?
  private var packedWeights = PackedTransposeConvolutionWeights()

  init(node: Node) throws {
    let op = Self.customCode
    try node.expect(inputs: 3, maxInputs: 3, outputs: 1)
    input = try node.input(0)
    weights = try node.input(1)
    bias = try node.input(2)
    output = try node.output(0)
    try FloatOperands.require([input, weights, bias, output], op: op)
    options = try TransposeConvolutionBiasOptions(customOptions: node.customOptions, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    try FloatOperands.requireRank(weights, 4, op: op, role: "weights")
    try FloatOperands.requireRank(bias, 1, op: op, role: "bias")
    guard weights.shape[3] == input.shape[3] else {
      throw KernelError.invalid("\(op) weights \(weights.shape) do not take input channels of \(input.shape)")
    }
    let shape = TransposeConvolutionShape(
      batch: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2], inputChannels: input.shape[3],
      outputChannels: weights.shape[0],
      height: try WindowAxis(
        transposedConvolutionBiasOf: input.shape[1], kernel: weights.shape[1], stride: options.strideHeight,
        samePadding: options.samePadding, op: op),
      width: try WindowAxis(
        transposedConvolutionBiasOf: input.shape[2], kernel: weights.shape[2], stride: options.strideWidth,
        samePadding: options.samePadding, op: op))
    try shape.validateFloatBuffers(bias: bias, op: op)
    _ = try FloatOperands.checkedCount(shape.outputShape, "\(op) output")
    output.shape = shape.outputShape
    packedWeights.prepare(weights, shape: shape, context: &context)
    self.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    guard let shape, let scratch = context.scratch else {
      throw KernelError.invalid("\(Self.customCode) was not prepared")
    }
    packedWeights.run(
      shape, weights: weights, input: input, bias: bias, activation: .none, output: output, context: context,
      scratch: scratch)
  }
}

// MARK: - Face-mesh attention (face_landmark_with_attention): version 2 of each op

/// Reads the FlexBuffer map of a MediaPipe custom op's options.
struct MediaPipeOptionMap {
  private let root: FlexBufferReference
  private let op: String

  /// Parses `bytes`; throws when they are not a FlexBuffer map.
  init(_ bytes: UnsafeRawBufferPointer, op: String) throws {
    guard !bytes.isEmpty else { throw KernelError.invalid("\(op) has no custom options") }
    let root = try FlexBufferReference(bytes)
    guard root.asMap != nil else { throw KernelError.invalid("\(op) options are not a FlexBuffer map") }
    self.root = root
    self.op = op
  }

  /// The 32-bit integer at `key`.
  func integer(_ key: String) throws -> Int {
    guard let value = root[key]?.asInt, Int32(exactly: value) != nil else {
      throw KernelError.invalid("\(op) option '\(key)' is missing or not a 32-bit integer")
    }
    return value
  }

  /// The number at `key`, as a float.
  func real(_ key: String) throws -> Float {
    guard let value = root[key]?.asDouble else { throw KernelError.invalid("\(op) option '\(key)' is missing or not a number") }
    return Float(value)
  }

  /// The vector of 32-bit integers at `key`.
  func integers(_ key: String) throws -> [Int] {
    guard let vector = root[key]?.asVector else { throw KernelError.invalid("\(op) option '\(key)' is missing or not a vector") }
    return try vector.map { element in
      guard let value = element.asInt, Int32(exactly: value) != nil else {
        throw KernelError.invalid("\(op) option '\(key)' holds a value that is not a 32-bit integer")
      }
      return value
    }
  }
}

/// Checks the operand count, FLOAT32 types and that the op is version 2 (version 1 of these ops
/// has other options and semantics).
private func requireVersionTwoFloat(_ node: Node, inputs: Int, op: String) throws {
  guard node.version == 2 else { throw KernelError.unsupported("\(op) version \(node.version) (only version 2)") }
  try node.expect(inputs: inputs, maxInputs: inputs, outputs: 1)
  try FloatOperands.require(node.inputs + [node.outputs[0] as RuntimeTensor?], op: op)
}

/// Checks that `matrix` holds at least the first two rows of a 4×4 matrix.
private func requireTransformMatrix(_ matrix: RuntimeTensor, op: String) throws {
  guard matrix.elementCount >= 8 else {
    throw KernelError.invalid("\(op) transform matrix \(matrix.shape) has fewer than 8 values")
  }
}

/// The x and y rows of a 4×4 row-major matrix: each maps `(x, y, 0, 1)` to one coordinate.
private struct AffineRows {
  var x: (Float, Float, Float)
  var y: (Float, Float, Float)

  init(_ matrix: UnsafePointer<Float>) {
    x = (matrix[0], matrix[1], matrix[3])
    y = (matrix[4], matrix[5], matrix[7])
  }

  @inline(__always)
  func apply(_ px: Float, _ py: Float) -> (x: Float, y: Float) {
    (x.0 * px + x.1 * py + x.2, y.0 * px + y.1 * py + y.2)
  }
}

/// MediaPipe's TransformLandmarks (version 2): landmarks `[1, N, D]` (D = 2 or 3) and a `[1,4,4]`
/// matrix; each `(x, y)` becomes rows 0 and 1 of the matrix applied to `(x, y, 0, 1)`, z is copied.
final class TransformLandmarksKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "TransformLandmarks"
  private let landmarks: RuntimeTensor
  private let matrix: RuntimeTensor
  private let output: RuntimeTensor

  init(node: Node) throws {
    try requireVersionTwoFloat(node, inputs: 2, op: Self.customCode)
    landmarks = try node.input(0)
    matrix = try node.input(1)
    output = try node.output(0)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(landmarks, 3, op: op, role: "landmarks")
    guard landmarks.shape[0] == 1, landmarks.shape[2] == 2 || landmarks.shape[2] == 3 else {
      throw KernelError.invalid("\(op) landmarks must be [1, N, 2] or [1, N, 3], got \(landmarks.shape)")
    }
    try requireTransformMatrix(matrix, op: op)
    output.shape = landmarks.shape
  }

  func eval(_ context: EvalContext) throws {
    let dimensions = landmarks.shape[2]
    let rows = AffineRows(matrix.pointer(as: Float.self))
    let source = landmarks.pointer(as: Float.self)
    let destination = output.pointer(as: Float.self)
    for landmark in 0..<landmarks.shape[1] {
      let offset = landmark * dimensions
      let moved = rows.apply(source[offset], source[offset + 1])
      destination[offset] = moved.x
      destination[offset + 1] = moved.y
      if dimensions == 3 { destination[offset + 2] = source[offset + 2] }
    }
  }
}

/// MediaPipe's TransformTensorBilinear (version 2): samples `input [1,H,W,C]` into an
/// `[1, output_height, output_width, C]` crop. Output pixel `(x, y)` reads the input at rows 0 and
/// 1 of the `[1,4,4]` matrix applied to `(x + ½, y + ½, 0, 1)`, minus ½ (pixel centres), with
/// bilinear weights; points outside `[0, W-1] × [0, H-1]` give 0, corners past the edge read 0.
final class TransformTensorBilinearKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "TransformTensorBilinear"
  private let input: RuntimeTensor
  private let matrix: RuntimeTensor
  private let output: RuntimeTensor
  private let outputHeight: Int
  private let outputWidth: Int

  init(node: Node) throws {
    let op = Self.customCode
    try requireVersionTwoFloat(node, inputs: 2, op: op)
    input = try node.input(0)
    matrix = try node.input(1)
    output = try node.output(0)
    let options = try MediaPipeOptionMap(node.customOptions, op: op)
    outputHeight = try options.integer("output_height")
    outputWidth = try options.integer("output_width")
    guard outputHeight > 0, outputWidth > 0 else {
      throw KernelError.invalid("\(op) output size \(outputHeight)×\(outputWidth) must be positive")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    guard input.shape[0] == 1 else { throw KernelError.invalid("\(op) input must have one image, got \(input.shape)") }
    try requireTransformMatrix(matrix, op: op)
    let shape = [1, outputHeight, outputWidth, input.shape[3]]
    _ = try FloatOperands.checkedCount(shape, "\(op) output")
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (height, width, channels) = (input.shape[1], input.shape[2], input.shape[3])
    let source = input.pointer(as: Float.self)
    let destination = output.pointer(as: Float.self)
    var rows = AffineRows(matrix.pointer(as: Float.self))
    // Pixel-centre correction, computed in double as MediaPipe's constants are doubles.
    func centred(_ row: (Float, Float, Float)) -> Float {
      Float(Double(row.2) + (Double(row.0) * 0.5 + Double(row.1) * 0.5 - 0.5))
    }
    rows.x.2 = centred(rows.x)
    rows.y.2 = centred(rows.y)
    let (lastX, lastY) = (Float(width - 1), Float(height - 1))
    for y in 0..<outputHeight {
      for x in 0..<outputWidth {
        let out = destination + (y * outputWidth + x) * channels
        let point = rows.apply(Float(x), Float(y))
        guard point.x >= 0, point.x <= lastX, point.y >= 0, point.y <= lastY else {
          out.update(repeating: 0, count: channels)
          continue
        }
        let (left, top) = (point.x.rounded(.down), point.y.rounded(.down))
        let (column, row) = (Int(left), Int(top))
        let (right, lower) = (point.x - left, point.y - top)
        func pixel(_ r: Int, _ c: Int) -> UnsafePointer<Float>? {
          r < height && c < width ? UnsafePointer(source + (r * width + c) * channels) : nil
        }
        let (q11, q21, q12, q22) = (pixel(row, column), pixel(row, column + 1), pixel(row + 1, column), pixel(row + 1, column + 1))
        // MediaPipe mixes double constants (1.0 - weight) with float products; kept as written.
        func mix(_ a: Float, _ b: Float, weight: Float) -> Float {
          Float((1 - Double(weight)) * Double(a) + Double(weight * b))
        }
        for channel in 0..<channels {
          let upper = mix(q11?[channel] ?? 0, q21?[channel] ?? 0, weight: right)
          let below = mix(q12?[channel] ?? 0, q22?[channel] ?? 0, weight: right)
          out[channel] = mix(upper, below, weight: lower)
        }
      }
    }
  }
}

/// MediaPipe's Landmarks2TransformMatrix (version 2): from landmarks `[1, N, 3]`, the `[1,4,4]`
/// matrix that maps an `output_width × output_height` crop onto the box around the subset
/// landmarks. The box is rotated by `target_rotation_radians - atan2(right - left)` (the line from
/// the left to the right rotation landmark), measured in that rotated frame, scaled by
/// `scale_x` / `scale_y`: `M = shift(centre) · rotate(-angle) · scale(scale·size / output) ·
/// shift(-output / 2)`.
final class LandmarksToTransformMatrixKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "Landmarks2TransformMatrix"
  private let landmarks: RuntimeTensor
  private let output: RuntimeTensor
  private let subset: [Int]
  private let leftIndex: Int
  private let rightIndex: Int
  private let targetRotation: Float
  private let outputHeight: Int
  private let outputWidth: Int
  private let scaleX: Float
  private let scaleY: Float

  init(node: Node) throws {
    let op = Self.customCode
    try requireVersionTwoFloat(node, inputs: 1, op: op)
    landmarks = try node.input(0)
    output = try node.output(0)
    let options = try MediaPipeOptionMap(node.customOptions, op: op)
    subset = try options.integers("subset_idxs")
    leftIndex = try options.integer("left_rotation_idx")
    rightIndex = try options.integer("right_rotation_idx")
    targetRotation = try options.real("target_rotation_radians")
    outputHeight = try options.integer("output_height")
    outputWidth = try options.integer("output_width")
    scaleX = try options.real("scale_x")
    scaleY = try options.real("scale_y")
    guard !subset.isEmpty else { throw KernelError.invalid("\(op) subset_idxs is empty") }
    guard outputHeight > 0, outputWidth > 0, scaleX > 0, scaleY > 0 else {
      throw KernelError.invalid(
        "\(op) output size \(outputHeight)×\(outputWidth) and scales \(scaleX), \(scaleY) must be positive")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(landmarks, 3, op: op, role: "landmarks")
    guard landmarks.shape[0] == 1, landmarks.shape[2] == 3 else {
      throw KernelError.invalid("\(op) landmarks must be [1, N, 3], got \(landmarks.shape)")
    }
    let count = landmarks.shape[1]
    for index in subset + [leftIndex, rightIndex] where index < 0 || index >= count {
      throw KernelError.invalid("\(op) landmark index \(index) is outside 0..<\(count)")
    }
    output.shape = [1, 4, 4]
  }

  func eval(_ context: EvalContext) throws {
    let points = landmarks.pointer(as: Float.self)
    func point(_ index: Int) -> (x: Float, y: Float) { (points[index * 3], points[index * 3 + 1]) }
    let (left, right) = (point(leftIndex), point(rightIndex))
    let rotation = targetRotation - atan2f(right.y - left.y, right.x - left.x)
    let (cosine, sine) = (cosf(rotation), sinf(rotation))
    var (minimumX, minimumY) = (Float.infinity, Float.infinity)
    var (maximumX, maximumY) = (-Float.infinity, -Float.infinity)
    for (position, index) in subset.enumerated() {
      let p = point(index)
      let rotatedX = cosine * p.x + -sine * p.y
      let rotatedY = sine * p.x + cosine * p.y
      if position == 0 {
        (minimumX, maximumX, minimumY, maximumY) = (rotatedX, rotatedX, rotatedY, rotatedY)
        continue
      }
      if maximumX < rotatedX { maximumX = rotatedX }
      if maximumY < rotatedY { maximumY = rotatedY }
      if minimumX > rotatedX { minimumX = rotatedX }
      if minimumY > rotatedY { minimumY = rotatedY }
    }
    let (middleX, middleY) = ((minimumX + maximumX) / 2, (minimumY + maximumY) / 2)
    let (backCosine, backSine) = (cosf(-rotation), sinf(-rotation))
    let centerX = backCosine * middleX + -backSine * middleY
    let centerY = backSine * middleX + backCosine * middleY
    let scaledX = scaleX * (maximumX - minimumX) / Float(outputWidth)
    let scaledY = scaleY * (maximumY - minimumY) / Float(outputHeight)
    let (shiftX, shiftY) = (-Float(outputWidth) / 2, -Float(outputHeight) / 2)
    let (m00, m01) = (backCosine * scaledX, -backSine * scaledY)
    let (m10, m11) = (backSine * scaledX, backCosine * scaledY)
    let out = output.pointer(as: Float.self)
    out.update(repeating: 0, count: 16)
    (out[0], out[1], out[3]) = (m00, m01, m00 * shiftX + m01 * shiftY + centerX)
    (out[4], out[5], out[7]) = (m10, m11, m10 * shiftX + m11 * shiftY + centerY)
    (out[10], out[15]) = (1, 1)
  }
}

// MARK: - Segmentation pooling pair: MaxPoolingWithArgmax2D and MaxUnpooling2D

/// The options MediaPipe stores for MaxPoolingWithArgmax2D and MaxUnpooling2D: the leading fields
/// of TFLite's pooling parameter struct as raw bytes, six little-endian int32 (padding 1 SAME /
/// 2 VALID, stride width, stride height, filter width, filter height, fused activation).
struct MediaPipePoolOptions {
  /// SAME padding (else VALID).
  let samePadding: Bool
  /// Horizontal and vertical strides.
  let strideWidth: Int, strideHeight: Int
  /// Window width and height.
  let filterWidth: Int, filterHeight: Int
  /// The clamp of the fused activation (TFLite's activations other than clamps do not clamp).
  let activation: FloatClampRange

  /// Reads the options; throws when the bytes are too short or the values are out of range.
  init(customOptions bytes: UnsafeRawBufferPointer, op: String) throws {
    let fields = try rawInt32Fields(bytes, count: 6, op: op)
    samePadding = try isSamePadding(fields[0], op: op)
    (strideWidth, strideHeight, filterWidth, filterHeight) = (fields[1], fields[2], fields[3], fields[4])
    guard [strideWidth, strideHeight, filterWidth, filterHeight].allSatisfy({ $0 > 0 }) else {
      throw KernelError.invalid("\(op) strides and window must be positive, got \(Array(fields[1...4]))")
    }
    switch fields[5] {
    case 0...3: activation = try FloatClampRange(ActivationFunctionType(rawValue: Int8(fields[5])), op: op)
    case 4...6: activation = .none
    default: throw KernelError.unsupported("\(op) fused activation \(fields[5])")
    }
  }
}

/// MediaPipe's MaxPoolingWithArgmax2D (float32): MAX_POOL_2D of `input [N,H,W,C]` (output 0,
/// fused activation applied) and, as output 1, where each maximum lies in its window:
/// `row · filter width + column + 0.1` as a float (the first maximum in row-major order).
final class MaxPoolingWithArgmaxKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "MaxPoolingWithArgmax2D"
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let indices: RuntimeTensor
  private let options: MediaPipePoolOptions
  private var axes: (height: WindowAxis, width: WindowAxis)?

  init(node: Node) throws {
    let op = Self.customCode
    try node.expect(inputs: 1, maxInputs: 1, outputs: 2)
    input = try node.input(0)
    output = try node.output(0)
    indices = try node.output(1)
    try FloatOperands.require([input, output, indices], op: op)
    options = try MediaPipePoolOptions(customOptions: node.customOptions, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    let padding: Padding = options.samePadding ? .same : .valid
    let height = try WindowAxis(
      op: op, axis: "height", inputSize: input.shape[1], filterSize: options.filterHeight,
      stride: Int32(options.strideHeight), dilation: 1, padding: padding)
    let width = try WindowAxis(
      op: op, axis: "width", inputSize: input.shape[2], filterSize: options.filterWidth,
      stride: Int32(options.strideWidth), dilation: 1, padding: padding)
    let shape = [input.shape[0], height.outputSize, width.outputSize, input.shape[3]]
    _ = try FloatOperands.checkedCount(shape, "\(op) output")
    output.shape = shape
    indices.shape = shape
    axes = (height, width)
  }

  func eval(_ context: EvalContext) throws {
    guard let axes else { throw KernelError.invalid("\(Self.customCode) was not prepared") }
    let (batch, inputHeight, inputWidth, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
    let source = input.pointer(as: Float.self)
    let values = output.pointer(as: Float.self)
    let positions = indices.pointer(as: Float.self)
    var outputIndex = 0
    for image in 0..<batch {
      for outY in 0..<axes.height.outputSize {
        let rows = axes.height.validTaps(outY)
        let originY = axes.height.inputOrigin(outY)
        for outX in 0..<axes.width.outputSize {
          let columns = axes.width.validTaps(outX)
          let originX = axes.width.inputOrigin(outX)
          for channel in 0..<channels {
            var maximum = -Float.greatestFiniteMagnitude
            var position = 0
            for row in rows.first..<rows.end {
              let rowStart = (image * inputHeight + originY + row) * inputWidth + originX
              for column in columns.first..<columns.end {
                let value = source[(rowStart + column) * channels + channel]
                if value > maximum { (maximum, position) = (value, row * options.filterWidth + column) }
              }
            }
            values[outputIndex] = options.activation.apply(maximum)
            positions[outputIndex] = Float(position) + 0.1
            outputIndex += 1
          }
        }
      }
    }
  }
}

/// MediaPipe's MaxUnpooling2D (float32): the inverse of MaxPoolingWithArgmax2D. Output
/// `[N, H·filter height, W·filter width, C]` is zero except that each input value is written at
/// the window position its index (truncated to an integer) names; positions outside the output
/// and indices that are not finite are skipped.
final class MaxUnpoolingKernel: Kernel {
  /// The custom code MediaPipe's models use.
  static let customCode = "MaxUnpooling2D"
  private let input: RuntimeTensor
  private let indices: RuntimeTensor
  private let output: RuntimeTensor
  private let options: MediaPipePoolOptions
  /// Rows and columns before the first window (TFLite's padding for the input as the pooled size).
  private var padding = (top: 0, left: 0)

  init(node: Node) throws {
    let op = Self.customCode
    try node.expect(inputs: 2, maxInputs: 2, outputs: 1)
    input = try node.input(0)
    indices = try node.input(1)
    output = try node.output(0)
    try FloatOperands.require([input, indices, output], op: op)
    options = try MediaPipePoolOptions(customOptions: node.customOptions, op: op)
  }

  func prepare(_ context: inout PrepareContext) throws {
    let op = Self.customCode
    try FloatOperands.requireRank(input, 4, op: op, role: "input")
    guard indices.shape == input.shape else {
      throw KernelError.invalid("\(op) indices \(indices.shape) must have the input's shape \(input.shape)")
    }
    let height = try FloatOperands.checkedCount([input.shape[1], options.filterHeight], "\(op) output height")
    let width = try FloatOperands.checkedCount([input.shape[2], options.filterWidth], "\(op) output width")
    let shape = [input.shape[0], height, width, input.shape[3]]
    _ = try FloatOperands.checkedCount(shape, "\(op) output")
    func before(size: Int, pooled: Int, stride: Int, filter: Int) -> Int {
      max(((pooled - 1) * stride + filter - size) / 2, 0)
    }
    padding = (
      before(size: height, pooled: input.shape[1], stride: options.strideHeight, filter: options.filterHeight),
      before(size: width, pooled: input.shape[2], stride: options.strideWidth, filter: options.filterWidth)
    )
    output.shape = shape
  }

  func eval(_ context: EvalContext) throws {
    let (batch, height, width, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
    let (outputHeight, outputWidth) = (output.shape[1], output.shape[2])
    let source = input.pointer(as: Float.self)
    let positions = indices.pointer(as: Float.self)
    let destination = output.pointer(as: Float.self)
    destination.update(repeating: 0, count: output.elementCount)
    var inputIndex = 0
    for image in 0..<batch {
      for y in 0..<height {
        for x in 0..<width {
          for channel in 0..<channels {
            defer { inputIndex += 1 }
            // MediaPipe truncates the index to an integer; only values an Int can hold are used.
            let position = positions[inputIndex]
            guard position.isFinite, abs(position) < 1e9 else { continue }
            let tap = Int(position)
            let outY = y * options.strideHeight - padding.top + tap / options.filterWidth
            let outX = x * options.strideWidth - padding.left + tap % options.filterWidth
            guard outY >= 0, outY < outputHeight, outX >= 0, outX < outputWidth else { continue }
            destination[((image * outputHeight + outY) * outputWidth + outX) * channels + channel] = source[inputIndex]
          }
        }
      }
    }
  }
}
