// PNG encoding of an 8-bit ``Image``: colour type 0 (gray), 4 (gray + alpha), 2 (RGB) or 6 (RGBA)
// by its channel count, bit depth 8, no interlacing. Each row gets the filter (none, sub, up,
// average, Paeth) whose output has the smallest sum of absolute signed bytes, the usual heuristic;
// the zlib stream holds stored (uncompressed) DEFLATE blocks, so files are about the size of the
// pixels. The bytes are plain PNG that any decoder reads.

extension PNG {
  /// The PNG file of `image`.
  public static func encode(_ image: Image) -> [UInt8] {
    let colorType: UInt8 = [1: 0, 2: 4, 3: 2, 4: 6][image.channels]!
    var header: [UInt8] = []
    appendBigEndian32(UInt32(image.width), to: &header)
    appendBigEndian32(UInt32(image.height), to: &header)
    header += [8, colorType, 0, 0, 0]
    var file = signature
    appendChunk("IHDR", header, to: &file)
    appendChunk("IDAT", zlibStored(filteredRows(image)), to: &file)
    appendChunk("IEND", [], to: &file)
    return file
  }

  /// Every row prefixed with its filter byte and filtered with the filter that minimizes the sum of absolute values.
  private static func filteredRows(_ image: Image) -> [UInt8] {
    let stride = image.width * image.channels
    let pixelBytes = image.channels
    var output: [UInt8] = []
    output.reserveCapacity(image.height * (stride + 1))
    let zeros = [UInt8](repeating: 0, count: stride)
    var candidate = [UInt8](repeating: 0, count: stride)
    var best = [UInt8](repeating: 0, count: stride)
    for row in 0..<image.height {
      let line = Array(image.pixels[(row * stride)..<((row + 1) * stride)])
      let above = row == 0 ? zeros : Array(image.pixels[((row - 1) * stride)..<(row * stride)])
      var bestFilter: UInt8 = 0
      var bestCost = Int.max
      for filter: UInt8 in 0...4 {
        var cost = 0
        for index in 0..<stride {
          let left = index >= pixelBytes ? line[index - pixelBytes] : 0
          let upperLeft = index >= pixelBytes ? above[index - pixelBytes] : 0
          let prediction: UInt8
          switch filter {
          case 0: prediction = 0
          case 1: prediction = left
          case 2: prediction = above[index]
          case 3: prediction = UInt8((UInt16(left) + UInt16(above[index])) / 2)
          default: prediction = paethPredictor(left, above[index], upperLeft)
          }
          candidate[index] = line[index] &- prediction
          cost += abs(Int(Int8(bitPattern: candidate[index])))
        }
        if cost < bestCost {
          bestCost = cost
          bestFilter = filter
          swap(&best, &candidate)
        }
      }
      output.append(bestFilter)
      output += best
    }
    return output
  }

  /// A zlib stream of `data` in stored DEFLATE blocks of at most 65535 bytes.
  static func zlibStored(_ data: [UInt8]) -> [UInt8] {
    var output: [UInt8] = [0x78, 0x01]
    var start = 0
    repeat {
      let length = min(65535, data.count - start)
      let isFinal = start + length == data.count
      output += [isFinal ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
      output += data[start..<(start + length)]
      start += length
    } while start < data.count
    appendBigEndian32(Adler32.checksum(data), to: &output)
    return output
  }

  private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
    appendBigEndian32(UInt32(data.count), to: &file)
    let typeAndData = Array(type.utf8) + data
    file += typeAndData
    appendBigEndian32(CRC32.checksum(typeAndData), to: &file)
  }
}

/// Appends `value` as four big-endian bytes.
func appendBigEndian32(_ value: UInt32, to bytes: inout [UInt8]) {
  bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
}
