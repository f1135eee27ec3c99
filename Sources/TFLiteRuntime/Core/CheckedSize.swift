// The one checked product of sizes in the runtime: shapes and counts come from model files and
// callers, so their products are formed with overflow checks and an upper limit, never trapping.

/// The largest byte count the runtime will size a block of memory for (2^46), far beyond any
/// memory limit, so that sums of such sizes cannot overflow either.
let largestCountedByteCount = 1 << 46

/// The product of `factors` times `elementBytes` (at least 1), or nil when a factor is negative or
/// the product exceeds `limit`.
func checkedProduct(_ factors: [Int], elementBytes: Int = 1, limit: Int = largestCountedByteCount) -> Int? {
  var total = max(elementBytes, 1)
  for factor in factors {
    guard factor >= 0 else { return nil }
    let (next, overflow) = total.multipliedReportingOverflow(by: factor)
    guard !overflow, next <= limit else { return nil }
    total = next
  }
  return total
}
