// EXIF orientation (TIFF tag 0x0112 in IFD0 of an APP1 "Exif" segment) and applying it.
//
// The tag says how the stored pixels must be transformed for display; applying it gives the
// pixels Pillow's `ImageOps.exif_transpose` gives: 2 mirror left–right, 3 rotate 180°, 4 mirror
// top–bottom, 5 transpose (mirror across the main diagonal), 6 rotate 90° clockwise, 7
// transverse (mirror across the other diagonal), 8 rotate 90° counter-clockwise. 5–8 swap width
// and height. An unreadable EXIF block or a value outside 1...8 counts as 1 (as stored).

/// The orientation value (1...8) in the TIFF structure `tiff`, or 1 when there is none.
func exifOrientation(tiff: UnsafeBufferPointer<UInt8>) -> Int {
  guard tiff.count >= 8 else { return 1 }
  let littleEndian: Bool
  switch (tiff[0], tiff[1]) {
  case (0x49, 0x49): littleEndian = true
  case (0x4D, 0x4D): littleEndian = false
  default: return 1
  }
  func read16(_ offset: Int) -> Int? {
    guard offset >= 0, offset + 2 <= tiff.count else { return nil }
    let (first, second) = (Int(tiff[offset]), Int(tiff[offset + 1]))
    return littleEndian ? first | second << 8 : first << 8 | second
  }
  func read32(_ offset: Int) -> Int? {
    guard let low = read16(littleEndian ? offset : offset + 2), let high = read16(littleEndian ? offset + 2 : offset)
    else { return nil }
    return high << 16 | low
  }
  guard read16(2) == 42, let directory = read32(4), let entryCount = read16(directory) else { return 1 }
  for entry in 0..<entryCount {
    let entryOffset = directory + 2 + entry * 12
    guard let tag = read16(entryOffset), let type = read16(entryOffset + 2) else { return 1 }
    guard tag == 0x0112 else { continue }
    let value: Int?
    switch type {
    case 3: value = read16(entryOffset + 8)  // SHORT
    case 4: value = read32(entryOffset + 8)  // LONG
    default: value = nil
    }
    guard let value, (1...8).contains(value) else { return 1 }
    return value
  }
  return 1
}

extension Image {
  /// The image as it is displayed when its EXIF orientation is `orientation` (1...8).
  func applyingEXIFOrientation(_ orientation: Int) -> Image {
    guard (2...8).contains(orientation) else { return self }
    let swapsAxes = orientation >= 5
    let outputWidth = swapsAxes ? height : width
    let outputHeight = swapsAxes ? width : height
    let sourceWidth = width
    let sourceHeight = height
    let channels = channels
    // The source pixel shown at output (x, y): start and steps in source coordinates.
    let (mirrorX, mirrorY): (Bool, Bool)
    switch orientation {
    case 2: (mirrorX, mirrorY) = (true, false)
    case 3: (mirrorX, mirrorY) = (true, true)
    case 4: (mirrorX, mirrorY) = (false, true)
    case 5: (mirrorX, mirrorY) = (false, false)
    case 6: (mirrorX, mirrorY) = (false, true)
    case 7: (mirrorX, mirrorY) = (true, true)
    default: (mirrorX, mirrorY) = (true, false)
    }
    let transformed = pixels.withUnsafeBufferPointer { source in
      [UInt8](unsafeUninitializedCapacity: pixels.count) { output, initialized in
        // Tile by tile, so that a rotation's column walk through the source stays in cache.
        let tile = 64
        for tileY in stride(from: 0, to: outputHeight, by: tile) {
          for tileX in stride(from: 0, to: outputWidth, by: tile) {
            for y in tileY..<min(tileY + tile, outputHeight) {
              for x in tileX..<min(tileX + tile, outputWidth) {
                // For swapped axes the output column walks source rows and the output row source columns.
                var sourceX = swapsAxes ? y : x
                var sourceY = swapsAxes ? x : y
                if mirrorX { sourceX = sourceWidth - 1 - sourceX }
                if mirrorY { sourceY = sourceHeight - 1 - sourceY }
                let from = (sourceY * sourceWidth + sourceX) * channels
                let to = (y * outputWidth + x) * channels
                for channel in 0..<channels { output[to + channel] = source[from + channel] }
              }
            }
          }
        }
        initialized = pixels.count
      }
    }
    // The dimensions are those of `self`, possibly swapped, so the initializer cannot fail.
    return (try? Image(width: outputWidth, height: outputHeight, channels: channels, pixels: transformed)) ?? self
  }
}
