// Splitting elementwise work across the threads of an evaluation.
//
// Semantics: `forEachChunk` covers `0..<count` with consecutive ranges, one call each; with one
// thread, or too little work, one range inline. Otherwise the ranges are as equal as possible and
// their number is a multiple of the thread count (about four per thread), so that threads of equal
// speed finish together instead of one running a last chunk alone. `ChunkSplit` is that cut, for
// kernels that visit the same chunks more than once or need them to start at multiples of a block.

import TFLiteLinearAlgebra

extension EvalContext {
  /// Calls `body` with consecutive ranges that together cover `0..<count`: one range on one
  /// thread, or about four per thread (a multiple of the thread count) when every range still
  /// holds at least `minimumChunk` elements (smaller pieces cost more in dispatch than they gain).
  func forEachChunk(of count: Int, minimumChunk: Int, _ body: (Range<Int>) -> Void) {
    let chunks = ChunkSplit(count: count, minimumChunk: minimumChunk, threadCount: threadCount)
    guard chunks.count > 1 else {
      body(0..<count)
      return
    }
    parallelFor(chunks.count) { chunk in body(chunks.range(chunk)) }
  }
}

/// `0..<count` cut into `count` consecutive chunks for `threadCount` threads: one chunk on one
/// thread; else about four per thread, a multiple of the thread count, each at least
/// `minimumChunk` elements. Chunks start at multiples of `alignment` and hold whole units of it,
/// as evenly as possible, except the last, which also takes the `count % alignment` left over.
struct ChunkSplit {
  /// Number of chunks (at least 1).
  let count: Int
  /// Elements split.
  let elements: Int
  /// Every chunk but the last holds a multiple of this many elements.
  let alignment: Int

  /// The cut of `count` elements (see the type).
  init(count elements: Int, alignment: Int = 1, minimumChunk: Int, threadCount: Int) {
    self.elements = elements
    self.alignment = max(alignment, 1)
    let units = elements / self.alignment
    count = max(1, ParallelWork.balancedItemCount(
      wanted: Self.mostChunks(threadCount: threadCount), affordable: min(units, elements / max(minimumChunk, 1)), threadCount: threadCount))
  }

  /// The most chunks any cut for `threadCount` threads makes (room for per-chunk results).
  static func mostChunks(threadCount: Int) -> Int { threadCount > 1 ? threadCount &* 4 : 1 }

  /// The elements of chunk `chunk`.
  func range(_ chunk: Int) -> Range<Int> {
    let units = elements / alignment
    let start = chunk &* units / count &* alignment
    return start..<(chunk &+ 1 == count ? elements : (chunk &+ 1) &* units / count &* alignment)
  }
}

/// Elements per parallel piece for operations costing about a nanosecond per element.
let cheapElementwiseChunk = 16_384
/// Elements per parallel piece for quantized ADD and SUB, which rescale both inputs and the output
/// of every element (an int8 ADD of 14×14×112 took 16 µs on one thread, about 0.7 ns per element).
/// Not for MUL: its 14×14×480 squeeze-excite products ran slower on two threads in 8 chunks than
/// in 4 (0.018 → 0.024 ms).
let quantizedAddSubtractChunk = 4_096
/// Elements per parallel piece for transcendental operations.
let costlyElementwiseChunk = 2_048
