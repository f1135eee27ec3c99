// Short byte runs without `memmove`/`memset` calls: im2col rows, depthwise window rows,
// concatenation blocks and padding are runs of a few to a few dozen bytes, where a library call
// or a byte loop costs more than the copy. Overlapping word and vector moves cover every length.

/// Copies `count` bytes, XOR-ing each with the matching byte of `flip` (all equal): one run of
/// ``copyRuns(_:bytes:from:stride:to:stride:flip:)``.
@inline(__always)
func copyBytes(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, count: Int, flip: UInt64) {
  copyRuns(1, bytes: count, from: source, stride: 0, to: destination, stride: 0, flip: flip)
}

/// Copies `runCount` runs of `count` bytes, run i from `source + i·sourceStride` to
/// `destination + i·destinationStride`, XOR-ing each byte with the matching byte of `flip` (all
/// equal): 16 bytes at a time, the last 16 overlapping the ones before; a run of 2 to 15 bytes as
/// two overlapping 8-, 4- or 2-byte words. Runs are short in im2col (a few
/// channels per tap, 9 bytes for three 3-channel taps, 72 for three 24-channel ones), where a
/// `memmove` call or a byte loop costs more than the copy; the length test and the flip vector are
/// made once for all runs. The overlap rewrites the same bytes (source and destination never alias).
@inline(__always)
func copyRuns(
  _ runCount: Int, bytes count: Int, from source: UnsafeRawPointer, stride sourceStride: Int,
  to destination: UnsafeMutableRawPointer, stride destinationStride: Int, flip: UInt64
) {
  /// Copies the `Word`s at the start and the end of every run (the same bytes twice where they
  /// overlap), flipped.
  @inline(__always)
  func copyEnds<Word: FixedWidthInteger>(_: Word.Type) {
    let flipWord = Word(truncatingIfNeeded: flip)
    let last = count &- MemoryLayout<Word>.size
    var from = source
    var to = destination
    for _ in 0..<runCount {
      to.storeBytes(of: from.loadUnaligned(as: Word.self) ^ flipWord, as: Word.self)
      to.storeBytes(
        of: from.loadUnaligned(fromByteOffset: last, as: Word.self) ^ flipWord, toByteOffset: last, as: Word.self)
      from += sourceStride
      to += destinationStride
    }
  }
  if count >= 16 {
    let flipVector = SIMD16<UInt8>(repeating: UInt8(truncatingIfNeeded: flip))
    var from = source
    var to = destination
    for _ in 0..<runCount {
      /// Copies the 16 bytes at `offset` of this run, flipped.
      @inline(__always)
      func copyVector(at offset: Int) {
        let bytes = from.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self) ^ flipVector
        to.storeBytes(of: bytes, toByteOffset: offset, as: SIMD16<UInt8>.self)
      }
      var offset = 0
      while offset &+ 16 < count {
        copyVector(at: offset)
        offset &+= 16
      }
      copyVector(at: count &- 16)
      from += sourceStride
      to += destinationStride
    }
  } else if count >= 8 {
    copyEnds(UInt64.self)
  } else if count >= 4 {
    copyEnds(UInt32.self)
  } else if count >= 2 {
    copyEnds(UInt16.self)
  } else if count == 1 {
    copyEnds(UInt8.self)
  }
}

/// Sets `count` bytes to the byte repeated in `value`: 8 bytes at a time, the last 8 overlapping
/// the ones before; 2 to 7 bytes as two overlapping 2- or 4-byte words. Short runs are common (a
/// few-channel im2col row's one byte of depth padding, an edge tap's 3 channels), and a byte loop
/// there compiles to a `memset` call per run (3 % of mobilenet_mini_int8's invoke).
@inline(__always)
func fillBytes(_ destination: UnsafeMutableRawPointer, count: Int, with value: UInt64) {
  /// Stores the `Word` of `value` at the run's start and end (the same bytes twice where they overlap).
  @inline(__always) func storeEnds<Word: FixedWidthInteger>(_: Word.Type) {
    let word = Word(truncatingIfNeeded: value)
    destination.storeBytes(of: word, as: Word.self)
    destination.storeBytes(of: word, toByteOffset: count &- MemoryLayout<Word>.size, as: Word.self)
  }
  guard count >= 8 else {
    if count >= 4 {
      storeEnds(UInt32.self)
    } else if count >= 2 {
      storeEnds(UInt16.self)
    } else if count == 1 {
      destination.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
    }
    return
  }
  var offset = 0
  while offset &+ 8 < count {
    destination.storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
    offset &+= 8
  }
  destination.storeBytes(of: value, toByteOffset: count &- 8, as: UInt64.self)
}

/// The longest run `copyRun` and `copyBlocks` copy inline; a longer one goes to `memmove`.
let shortRunBytes = 64

/// Copies `byteCount` bytes between buffers that do not overlap: a run of up to `shortRunBytes` inline
/// (`copyBytes`' overlapping words and vectors), a longer one by `memmove`. Concatenation, split
/// and nearest-neighbour resize copy one run per channel block, often 3–48 bytes, where a
/// `memmove` call costs more than the copy.
@inline(__always)
func copyRun(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, byteCount: Int) {
  if byteCount <= shortRunBytes {
    copyBytes(from: source, to: destination, count: byteCount, flip: 0)
  } else {
    destination.copyMemory(from: source, byteCount: byteCount)
  }
}
