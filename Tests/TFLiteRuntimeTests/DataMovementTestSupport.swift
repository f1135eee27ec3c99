// Naive reference machinery for the differential tests of the data-movement kernels:
// element-by-element index mappings written from the op definitions, compared byte for byte
// with the planned, pointer-walking implementations.

import XCTest

import TFLiteFormat

@testable import TFLiteRuntime


/// Every multi-index of `shape` in row-major order.
func allIndices(_ shape: [Int]) -> [[Int]] {
  if shape.contains(0) { return [] }
  var result: [[Int]] = [[]]
  for extent in shape {
    result = result.flatMap { prefix in (0..<extent).map { prefix + [$0] } }
  }
  return result
}

/// Row-major flat position of `index` in `shape`.
func flatPosition(_ index: [Int], _ shape: [Int]) -> Int {
  zip(index, shape).reduce(0) { $0 * $1.1 + $1.0 }
}

/// `count` elements of `elementSize` random bytes each.
func randomBytes(count: Int, elementSize: Int, using generator: inout SeededGenerator) -> [UInt8] {
  (0..<(count * elementSize)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}

/// The bytes of the tensor whose element `i` is source element `sourceElements[i]`
/// (or `fill` when that entry is nil).
func gatheredBytes(_ source: [UInt8], elementSize: Int, sourceElements: [Int?], fill: [UInt8] = []) -> [UInt8] {
  sourceElements.flatMap { element -> [UInt8] in
    guard let element else { return fill }
    return Array(source[(element * elementSize)..<((element + 1) * elementSize)])
  }
}

/// Runs `body` with a source buffer holding `source` and a destination of `outputBytes` bytes, and returns the destination.
func withBuffers(
  source: [UInt8], outputBytes: Int, _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) throws -> Void
) rethrows -> [UInt8] {
  var output = [UInt8](repeating: 0xEE, count: outputBytes)
  try source.withUnsafeBytes { input in
    try output.withUnsafeMutableBytes { output in
      // Empty arrays may have no base address; give the routines a valid pointer anyway.
      let inputBase = input.baseAddress ?? UnsafeRawPointer(bitPattern: 16)!
      let outputBase = output.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 16)!
      try body(inputBase, outputBase)
    }
  }
  return output
}

/// Runs a StridedLayout copy over `source` and returns the bytes written.
func stridedCopyBytes(_ layout: StridedLayout, source: [UInt8], elementSize: Int) -> [UInt8] {
  withBuffers(source: source, outputBytes: layout.elementCount * elementSize) { input, output in
    StridedCopy(layout, elementSize: elementSize).run(from: input, to: output)
  }
}

/// The element sizes every type-agnostic routine must handle.
let movableElementSizes = [1, 2, 4, 8]

/// A random shape of `rank` axes with extents in `extents`.
func randomShape(rank: Int, extents: ClosedRange<Int>, using generator: inout SeededGenerator) -> [Int] {
  (0..<rank).map { _ in Int.random(in: extents, using: &generator) }
}

// MARK: - Running one kernel on hand-made tensors

/// A tensor with its own zeroed memory; `bytes` (when given) are copied in and make it constant.
func makeTensor(
  _ index: Int, _ type: ElementType, _ shape: [Int], bytes: [UInt8]? = nil, quantization: Quantization? = nil
) -> RuntimeTensor {
  let tensor = RuntimeTensor(
    index: index, name: "t\(index)", type: type, shape: shape, shapeSignature: shape, quantization: quantization,
    isVariable: false, constantData: nil)
  tensor.allocateOwnedMemory()
  if let bytes {
    bytes.withUnsafeBytes { tensor.data!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    tensor.isConstant = true
  }
  return tensor
}

/// The little-endian bytes of `values`.
func bytesOf<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }

/// The elements of a tensor's memory.
func elements<T>(_ tensor: RuntimeTensor, as type: T.Type) -> [T] {
  Array(UnsafeBufferPointer(start: tensor.pointer(as: T.self), count: tensor.elementCount))
}

/// Builds kernel `kernelType` for a node of `opName`, prepares it, gives the outputs memory and runs it.
@discardableResult
func runKernel(
  _ kernelType: any Kernel.Type, opName: String, inputs: [RuntimeTensor?], outputs: [RuntimeTensor],
  options: BuiltinOptions = .none
) throws -> any Kernel {
  let node = Node(
    index: 0, opName: opName, version: 1, inputs: inputs, outputs: outputs, options: options,
    customOptions: UnsafeRawBufferPointer(start: nil, count: 0), subgraph: { _ in throw KernelError.unsupported("none") })
  let kernel = try kernelType.init(node: node)
  var context = PrepareContext(threadCount: 1)
  try kernel.prepare(&context)
  for output in outputs { output.allocateOwnedMemory() }
  try kernel.eval(EvalContext(threadCount: 1, scratch: nil))
  return kernel
}
