// TILE and BROADCAST_TO: repetition as zero-stride dimensions of a StridedLayout.

/// The view and output shape of TILE: each axis `i` repeated `multiples[i]` times.
/// The view has two dimensions per input axis: the repetition (stride 0) and the axis itself.
func tileLayout(inputShape: [Int], multiples: [Int]) throws -> (layout: StridedLayout, outputShape: [Int]) {
  guard multiples.count == inputShape.count else {
    throw KernelError.invalid("TILE: \(multiples.count) multiples for an input of rank \(inputShape.count)")
  }
  guard multiples.allSatisfy({ $0 >= 0 }) else { throw KernelError.invalid("TILE: multiples must be non-negative, got \(multiples)") }
  var outputShape: [Int] = []
  for axis in inputShape.indices {
    let (extent, overflow) = inputShape[axis].multipliedReportingOverflow(by: multiples[axis])
    guard !overflow else { throw KernelError.invalid("TILE: \(inputShape) × \(multiples) overflows") }
    outputShape.append(extent)
  }
  _ = try checkedElementCount(outputShape, op: "TILE")
  let inputStrides = denseStrides(inputShape)
  var layout = StridedLayout(extents: [], strides: [], offset: 0)
  for axis in inputShape.indices {
    layout.extents += [multiples[axis], inputShape[axis]]
    layout.strides += [0, inputStrides[axis]]
  }
  return (layout, outputShape)
}

/// The view of BROADCAST_TO (and of any broadcast operand): input axes aligned to the right
/// of `outputShape`, size-1 axes repeated with stride 0.
func broadcastLayout(inputShape: [Int], outputShape: [Int], op: String) throws -> StridedLayout {
  guard inputShape.count <= outputShape.count else {
    throw KernelError.invalid("\(op): \(inputShape) has more axes than \(outputShape)")
  }
  _ = try checkedElementCount(outputShape, op: op)
  let leading = outputShape.count - inputShape.count
  let inputStrides = denseStrides(inputShape)
  var strides = [Int](repeating: 0, count: outputShape.count)
  for axis in inputShape.indices {
    let target = outputShape[leading + axis]
    if inputShape[axis] == target {
      strides[leading + axis] = target == 1 ? 0 : inputStrides[axis]
    } else if inputShape[axis] != 1 {
      throw KernelError.invalid("\(op): \(inputShape) does not broadcast to \(outputShape)")
    }
  }
  return StridedLayout(extents: outputShape, strides: strides, offset: 0)
}

// MARK: - Kernels
