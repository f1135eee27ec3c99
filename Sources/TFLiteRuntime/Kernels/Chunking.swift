// Splitting elementwise work across the threads of an evaluation.
//
// Semantics: `forEachChunk` covers `0..<count` with consecutive ranges, one call each; with one
// thread, or too little work, one range inline. Otherwise the ranges are as equal as possible and
// their number is a multiple of the thread count (about four per thread), so that threads of equal
// speed finish together instead of one running a last chunk alone.

import TFLiteLinearAlgebra

extension EvalContext {
  /// Calls `body` with consecutive ranges that together cover `0..<count`: one range on one
  /// thread, or about four per thread (a multiple of the thread count) when every range still
  /// holds at least `minimumChunk` elements (smaller pieces cost more in dispatch than they gain).
  func forEachChunk(of count: Int, minimumChunk: Int, _ body: (Range<Int>) -> Void) {
    let chunks = ParallelWork.balancedItemCount(
      wanted: threadCount &* 4, affordable: count / max(minimumChunk, 1), threadCount: threadCount)
    guard chunks > 1 else {
      body(0..<count)
      return
    }
    parallelFor(chunks) { chunk in
      body((count / chunks * chunk + min(chunk, count % chunks))..<(count / chunks * (chunk + 1) + min(chunk + 1, count % chunks)))
    }
  }
}

/// Elements per parallel piece for operations costing about a nanosecond per element.
let cheapElementwiseChunk = 16_384
/// Elements per parallel piece for transcendental operations.
let costlyElementwiseChunk = 2_048
