// Splitting elementwise work across the threads of an evaluation.

extension EvalContext {
  /// Calls `body` with consecutive ranges that together cover `0..<count`: one range on one
  /// thread, or about four per thread when every range still holds at least `minimumChunk`
  /// elements (smaller pieces cost more in dispatch than they gain).
  func forEachChunk(of count: Int, minimumChunk: Int, _ body: (Range<Int>) -> Void) {
    let chunks = min(threadCount &* 4, count / max(minimumChunk, 1))
    guard threadCount > 1, chunks > 1 else {
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
