/// Values a kernel keeps from prepare to eval (reordered or packed weights), starting on a 64-byte
/// cache line. Generated kernels read such weights as whole 64-byte vectors at offsets that are
/// multiples of 64 from the start; a Swift array or a `malloc` block starts only 16-byte aligned,
/// so, depending on where the heap happened to place it, three starts in four made every such
/// load straddle two cache lines (a 7×7×1152 5×5 depthwise node ran 72 or 95 µs in two builds of
/// the same code).
final class CacheLineValues<Element> {
  /// The first value.
  let base: UnsafeMutablePointer<Element>
  /// The number of values.
  let count: Int

  /// `count` values, each set by `initialize` (called with the uninitialized memory).
  init(count: Int, initialize: (UnsafeMutablePointer<Element>) -> Void) {
    self.count = count
    base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * MemoryLayout<Element>.stride, alignment: 64)
      .bindMemory(to: Element.self, capacity: max(count, 1))
    initialize(base)
  }

  /// A copy of `values`.
  convenience init(copying values: [Element]) {
    self.init(count: values.count) { base in
      values.withUnsafeBufferPointer { source in
        if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
      }
    }
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }
}
