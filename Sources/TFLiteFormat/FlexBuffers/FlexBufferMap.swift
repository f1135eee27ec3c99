/// A verified FlexBuffers map: keys sorted by their bytes, with lookup by binary search, and
/// iteration as `(key, value)` pairs in key order.
///
/// Like `Array`, the positional subscript traps on an index outside `0..<count`.
public struct FlexBufferMap: RandomAccessCollection, @unchecked Sendable {
  // @unchecked: it only reads bytes that never change while their owner keeps them alive.

  /// The values, in key order.
  public let values: FlexBufferVector
  /// Where the keys vector's first offset starts.
  let keysStart: Int
  /// The byte width of the keys vector's offsets.
  let keysWidth: Int

  /// Creates a view; the verifier has checked the keys vector and that it has one key per value.
  init(values: FlexBufferVector, keysStart: Int, keysWidth: Int) {
    self.values = values
    self.keysStart = keysStart
    self.keysWidth = keysWidth
  }

  /// Always 0.
  public var startIndex: Int { 0 }

  /// The number of entries.
  public var endIndex: Int { values.count }

  /// Entry `position` (in key order), which must be in `0..<count`.
  public subscript(position: Int) -> (key: String, value: FlexBufferReference) {
    (key(at: position), values[position])
  }

  /// The keys, in their stored (sorted) order.
  public var keys: [String] { indices.map(key(at:)) }

  /// Key `index`, which must be in `0..<count`.
  public func key(at index: Int) -> String {
    precondition(indices.contains(index), "FlexBufferMap index \(index) out of range 0..<\(count)")
    return String(decoding: keyBytes(at: index), as: UTF8.self)
  }

  /// The value stored under `key`, or nil when there is none.
  public subscript(key: String) -> FlexBufferReference? {
    var query = key
    let index: Int? = query.withUTF8 { queryBytes in
      var low = 0
      var high = count
      while low < high {
        let middle = low + (high - low) / 2
        let order = FlexBufferKeys.compare(keyBytes(at: middle), UnsafeRawBufferPointer(queryBytes))
        if order == 0 { return middle }
        if order < 0 { low = middle + 1 } else { high = middle }
      }
      return nil
    }
    return index.map { values[$0] }
  }

  /// The bytes of key `index` without its NUL.
  private func keyBytes(at index: Int) -> UnsafeRawBufferPointer {
    let buffer = values.buffer
    return FlexBufferKeys.keyBytes(
      in: buffer, at: FlexBufferKeys.keyStart(in: buffer, vectorStart: keysStart, width: keysWidth, index: index))
  }
}
