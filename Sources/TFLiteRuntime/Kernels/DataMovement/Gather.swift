// GATHER and GATHER_ND: copy whole slices picked by index tensors; indices are checked at eval.

import TFLiteFormat

/// How GATHER walks its operands: for each batch and each outer position, one slice of
/// `innerCount` elements per index, taken from an axis of `axisExtent` slices.
struct GatherPlan: Equatable {
  /// Product of the leading `batch_dims` axes (shared by params and indices).
  var batchCount: Int
  /// Product of the params axes between the batch axes and the gather axis.
  var outerCount: Int
  /// Size of the gathered axis.
  var axisExtent: Int
  /// Indices per batch.
  var indicesPerBatch: Int
  /// Elements per gathered slice (product of the axes after the gather axis).
  var innerCount: Int
  /// Output shape: params[..<axis] + indices[batchDims...] + params[(axis+1)...].
  var outputShape: [Int]

  /// Validates `axis` and `batchDims` (both may be negative) and lays out the gather.
  init(paramsShape: [Int], indicesShape: [Int], axis requestedAxis: Int, batchDims requestedBatchDims: Int) throws {
    let axis = try normalizedAxis(requestedAxis, rank: paramsShape.count, op: "GATHER")
    let batchDims = requestedBatchDims < 0 ? requestedBatchDims + indicesShape.count : requestedBatchDims
    guard batchDims >= 0, batchDims <= axis, batchDims <= indicesShape.count else {
      throw KernelError.invalid(
        "GATHER: batch_dims \(requestedBatchDims) must lie in [0, \(min(axis, indicesShape.count))] for axis \(axis)")
    }
    guard Array(paramsShape[..<batchDims]) == Array(indicesShape[..<batchDims]) else {
      throw KernelError.invalid("GATHER: batch axes differ between params \(paramsShape) and indices \(indicesShape)")
    }
    batchCount = paramsShape[..<batchDims].reduce(1, *)
    outerCount = paramsShape[batchDims..<axis].reduce(1, *)
    axisExtent = paramsShape[axis]
    indicesPerBatch = indicesShape[batchDims...].reduce(1, *)
    innerCount = paramsShape[(axis + 1)...].reduce(1, *)
    outputShape = Array(paramsShape[..<axis]) + Array(indicesShape[batchDims...]) + Array(paramsShape[(axis + 1)...])
    _ = try checkedElementCount(outputShape, op: "GATHER")
  }

  /// Copies the gathered slices; throws when an index lies outside `[0, axisExtent)`.
  func run<Index: BinaryInteger>(
    params: UnsafeRawPointer, indices: UnsafePointer<Index>, output: UnsafeMutableRawPointer, elementSize: Int
  ) throws {
    let sliceBytes = innerCount &* elementSize
    var destination = output
    for batch in 0..<batchCount {
      let batchIndices = indices + batch &* indicesPerBatch
      for outer in 0..<outerCount {
        let base = params + ((batch &* outerCount &+ outer) &* axisExtent) &* sliceBytes
        for position in 0..<indicesPerBatch {
          let index = Int(truncatingIfNeeded: batchIndices[position])
          guard index >= 0, index < axisExtent else {
            throw KernelError.invalid("GATHER: index \(batchIndices[position]) is out of range [0, \(axisExtent))")
          }
          destination.copyMemory(from: base + index &* sliceBytes, byteCount: sliceBytes)
          destination += sliceBytes
        }
      }
    }
  }
}

/// How GATHER_ND walks its operands: each of `sliceCount` index tuples of `indexDepth`
/// coordinates selects one slice of `sliceElements` elements of params.
struct GatherNDPlan: Equatable {
  /// Number of index tuples (product of all indices axes but the last).
  var sliceCount: Int
  /// Coordinates per tuple (the last indices axis).
  var indexDepth: Int
  /// Extent of each indexed params axis.
  var indexedExtents: [Int]
  /// Params elements per unit of each indexed axis.
  var indexedStrides: [Int]
  /// Elements per selected slice.
  var sliceElements: Int
  /// Output shape: indices[..<last] + params[indexDepth...].
  var outputShape: [Int]

  /// Validates the shapes and lays out the gather.
  init(paramsShape: [Int], indicesShape: [Int]) throws {
    guard !paramsShape.isEmpty, let depth = indicesShape.last else {
      throw KernelError.invalid("GATHER_ND: params \(paramsShape) and indices \(indicesShape) must both be at least 1-D")
    }
    guard depth <= paramsShape.count else {
      throw KernelError.invalid("GATHER_ND: index depth \(depth) exceeds the params rank \(paramsShape.count)")
    }
    indexDepth = depth
    sliceCount = indicesShape.dropLast().reduce(1, *)
    indexedExtents = Array(paramsShape[..<depth])
    indexedStrides = Array(denseStrides(paramsShape)[..<depth])
    sliceElements = paramsShape[depth...].reduce(1, *)
    outputShape = Array(indicesShape.dropLast()) + Array(paramsShape[depth...])
    _ = try checkedElementCount(outputShape, op: "GATHER_ND")
  }

  /// Copies the selected slices; throws when a coordinate lies outside its axis.
  func run<Index: BinaryInteger>(
    params: UnsafeRawPointer, indices: UnsafePointer<Index>, output: UnsafeMutableRawPointer, elementSize: Int
  ) throws {
    let sliceBytes = sliceElements &* elementSize
    try indexedExtents.withUnsafeBufferPointer { extents in
      try indexedStrides.withUnsafeBufferPointer { strides in
        for slice in 0..<sliceCount {
          var start = 0
          for axis in 0..<indexDepth {
            let raw = indices[slice &* indexDepth &+ axis]
            let coordinate = Int(truncatingIfNeeded: raw)
            guard coordinate >= 0, coordinate < extents[axis] else {
              throw KernelError.invalid("GATHER_ND: index \(raw) is out of range [0, \(extents[axis])) on axis \(axis)")
            }
            start &+= coordinate &* strides[axis]
          }
          (output + slice &* sliceBytes).copyMemory(from: params + start &* elementSize, byteCount: sliceBytes)
        }
      }
    }
  }
}

// MARK: - Kernel

/// GATHER (along an axis, with optional batch dimensions) and GATHER_ND, chosen by the node's
/// operator. Indices may be int16, int32 or int64; an out-of-range index throws at eval.
final class GatherKernel: Kernel {
  private let op: String
  private let params: RuntimeTensor
  private let indices: RuntimeTensor
  private let output: RuntimeTensor
  /// Axis and batch dimensions of GATHER; nil for GATHER_ND.
  private let axes: (axis: Int, batchDims: Int)?
  private let elementSize: Int
  private var plan: Plan?

  /// The gather planned by the last `prepare`.
  private enum Plan {
    case axis(GatherPlan)
    case tuples(GatherNDPlan)
  }

  init(node: Node) throws {
    op = node.opName
    let operands = try MovableOperands(node, inputs: 2, op: op)
    (params, output, elementSize) = (operands.input, operands.output, operands.elementSize)
    indices = try node.input(1)
    guard [.int16, .int32, .int64].contains(indices.type) else {
      throw KernelError.unsupported("\(op): indices of type \(indices.type.name)")
    }
    if case .gatherOptions(let options) = node.options {
      axes = (Int(options.axis), Int(options.batchDims))
    } else if op == "GATHER" {
      throw KernelError.invalid("GATHER: missing options")
    } else {
      axes = nil
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    if let axes {
      let plan = try GatherPlan(
        paramsShape: params.shape, indicesShape: indices.shape, axis: axes.axis, batchDims: axes.batchDims)
      output.shape = plan.outputShape
      self.plan = .axis(plan)
    } else {
      let plan = try GatherNDPlan(paramsShape: params.shape, indicesShape: indices.shape)
      output.shape = plan.outputShape
      self.plan = .tuples(plan)
    }
  }

  func eval(_ context: EvalContext) throws {
    guard let plan else { throw KernelError.invalid("\(op): eval before prepare") }
    switch indices.type {
    case .int16: try run(plan, Int16.self)
    case .int32: try run(plan, Int32.self)
    default: try run(plan, Int64.self)
    }
  }

  /// Runs `plan` with the index data read as `Index`.
  private func run<Index: FixedWidthInteger & SignedInteger>(_ plan: Plan, _ type: Index.Type) throws {
    let (source, destination) = try evalPointers(params, output, op: op)
    guard let data = indices.data else { throw KernelError.invalid("\(op): indices have no memory") }
    let typed = UnsafePointer(data.assumingMemoryBound(to: Index.self))
    switch plan {
    case .axis(let plan): try plan.run(params: source, indices: typed, output: destination, elementSize: elementSize)
    case .tuples(let plan): try plan.run(params: source, indices: typed, output: destination, elementSize: elementSize)
    }
  }
}
