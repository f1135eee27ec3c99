/// The elements of a FlexBuffers vector, typed vector, fixed-length typed vector or map (its
/// values), as a random-access collection of references.
///
/// Like `Array`, the collection subscript traps on an index outside `0..<count`; use
/// `element(at:)` when the index comes from untrusted data.
public struct FlexBufferVector: RandomAccessCollection, @unchecked Sendable {
  // @unchecked: it only reads bytes that never change while `owner` (or the caller) keeps them alive.

  /// Where the type of each element comes from.
  enum ElementTypes {
    /// One packed type byte per element follows the elements (untyped vectors and maps).
    case perElement
    /// Every element has this type (typed and fixed-length vectors).
    case uniform(FlexBufferType)
  }

  let buffer: UnsafeRawBufferPointer
  let owner: AnyObject?
  /// Where the first element starts.
  let start: Int
  /// The number of elements.
  public let count: Int
  /// The byte width of every element slot.
  let width: Int
  let elementTypes: ElementTypes

  /// Creates a view; the verifier has checked that every element lies inside `buffer`.
  init(buffer: UnsafeRawBufferPointer, owner: AnyObject?, start: Int, count: Int, width: Int, elementTypes: ElementTypes) {
    self.buffer = buffer
    self.owner = owner
    self.start = start
    self.count = count
    self.width = width
    self.elementTypes = elementTypes
  }

  /// Always 0.
  public var startIndex: Int { 0 }

  /// The number of elements.
  public var endIndex: Int { count }

  /// Element `position`, which must be in `0..<count`.
  public subscript(position: Int) -> FlexBufferReference {
    precondition(position >= 0 && position < count, "FlexBufferVector index \(position) out of range 0..<\(count)")
    let slot = start + position * width
    switch elementTypes {
    case .perElement:
      return FlexBufferReference(
        buffer: buffer, owner: owner, slot: slot, slotWidth: width, packedType: buffer[start + count * width + position])
    case .uniform(let type):
      return FlexBufferReference(buffer: buffer, owner: owner, slot: slot, slotWidth: width, targetWidth: 1, type: type)
    }
  }

  /// Element `index`, or nil when the index is out of range.
  public func element(at index: Int) -> FlexBufferReference? {
    indices.contains(index) ? self[index] : nil
  }
}
