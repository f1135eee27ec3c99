// RESHAPE, SQUEEZE and EXPAND_DIMS: the bytes stay as they are, only the shape changes.

/// RESHAPE's output shape: `requested` with at most one −1 inferred from the input's element count.
/// Zero-sized dimensions are allowed (a −1 next to a 0 becomes 0 when the input is empty).
func reshapedShape(inputShape: [Int], requested: [Int]) throws -> [Int] {
  let inputCount = try checkedElementCount(inputShape, op: "RESHAPE")
  let nonZeroInputCount = try checkedElementCount(inputShape.filter { $0 != 0 }, op: "RESHAPE")
  var shape = requested
  var inferredAxis: Int?
  for (axis, dimension) in requested.enumerated() where dimension < 0 {
    guard dimension == -1, inferredAxis == nil else {
      throw KernelError.invalid("RESHAPE: \(requested) may hold a single -1 and no other negative value")
    }
    inferredAxis = axis
  }
  let known = requested.filter { $0 >= 0 }
  let knownCount = try checkedElementCount(known, op: "RESHAPE")
  if let inferredAxis {
    // An empty input makes the free dimension 0 unless another dimension already is;
    // otherwise it is what the non-zero dimensions leave over.
    let nonZeroKnownCount = try checkedElementCount(known.filter { $0 != 0 }, op: "RESHAPE")
    shape[inferredAxis] = inputCount == 0 && knownCount != 0 ? 0 : nonZeroInputCount / nonZeroKnownCount
  }
  guard try checkedElementCount(shape, op: "RESHAPE") == inputCount else {
    throw KernelError.invalid("RESHAPE: \(inputShape) has \(inputCount) elements, \(requested) does not")
  }
  return shape
}

/// SQUEEZE's output shape: the listed axes (negative allowed; all size-1 axes when empty) removed.
func squeezedShape(inputShape: [Int], axes: [Int]) throws -> [Int] {
  let rank = inputShape.count
  var removed = [Bool](repeating: false, count: rank)
  if axes.isEmpty {
    for axis in 0..<rank where inputShape[axis] == 1 { removed[axis] = true }
  } else {
    for requested in axes {
      let axis = try normalizedAxis(requested, rank: rank, op: "SQUEEZE")
      guard inputShape[axis] == 1 else {
        throw KernelError.invalid("SQUEEZE: axis \(requested) of \(inputShape) has size \(inputShape[axis]), not 1")
      }
      removed[axis] = true
    }
  }
  return inputShape.indices.filter { !removed[$0] }.map { inputShape[$0] }
}

/// EXPAND_DIMS's output shape: a size-1 axis inserted at `axis` (in `[-rank-1, rank]`).
func expandedShape(inputShape: [Int], axis requested: Int) throws -> [Int] {
  let axis = try normalizedAxis(requested, rank: inputShape.count + 1, op: "EXPAND_DIMS")
  var shape = inputShape
  shape.insert(1, at: axis)
  return shape
}
