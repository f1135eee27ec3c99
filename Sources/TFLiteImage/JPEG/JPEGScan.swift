// Decoding one scan (SOS header + entropy-coded data) of a JPEG frame.
//
// Sequential frames: every block is complete after its scan, so it is dequantized and
// inverse-transformed straight into the writer's sample rows; when the scan holds every component,
// the output rows are written after each row of MCUs (see `JPEGPixelWriter`). Progressive frames (T.81 G.1.2): DC
// first/refinement scans and AC first/refinement scans (spectral selection Ss...Se, successive
// approximation Ah/Al, end-of-band runs) update the stored coefficients; the inverse DCT runs
// after the last scan. A progressive scan must refine exactly the bits earlier scans left
// (Ah equal to the previous Al of every coefficient it covers, and AC only after DC); otherwise
// it is refused, where libjpeg would only warn.
//
// Blocks are visited in MCU order: a scan of one component covers its blocks that hold samples
// one by one; a scan of several covers whole MCUs of h×v blocks per component. After every
// `restartInterval` MCUs the data must hold the next RSTn marker; predictions and end-of-band
// runs restart there.

/// A parsed SOS header.
private struct JPEGScanHeader {
  /// Frame indices of the scan's components, in scan order.
  var componentIndices: [Int] = []
  /// DC and AC table numbers per scan component.
  var tableNumbers: [(dc: Int, ac: Int)] = []
  /// Spectral selection start and end (zig-zag positions).
  var spectralStart = 0
  var spectralEnd = 63
  /// Successive approximation: bit position of the previous scan (0: first) and of this one.
  var approximationHigh = 0
  var approximationLow = 0
}

extension JPEGDecoding {
  /// Decodes the scan whose header is `header` and whose data starts at `dataStart`; returns the
  /// position after its data (at the next marker, or before garbage that precedes it).
  func decodeScan(header: UnsafeBufferPointer<UInt8>, headerOffset: Int, dataStart: Int) throws(ImageError) -> Int {
    guard let frame else { throw malformed("scan before the frame header", at: headerOffset) }
    let scan = try parseScanHeader(header, frame: frame, offset: headerOffset)
    for index in scan.componentIndices { componentScanned[index] = true }
    var reader = JPEGBitReader(bytes: bytes, position: dataStart)
    if frame.isProgressive {
      try checkProgression(scan, frame: frame, offset: headerOffset)
      try decodeProgressiveScan(scan, frame: frame, reader: &reader)
    } else {
      try decodeSequentialScan(scan, frame: frame, reader: &reader)
    }
    return reader.position
  }

  private func parseScanHeader(_ header: UnsafeBufferPointer<UInt8>, frame: JPEGFrame, offset: Int) throws(ImageError)
    -> JPEGScanHeader
  {
    guard header.count >= 1 else { throw malformed("empty scan header", at: offset) }
    let count = Int(header[0])
    guard (1...4).contains(count), header.count == 4 + 2 * count else {
      throw malformed("scan header of \(header.count) bytes for \(count) components", at: offset)
    }
    var scan = JPEGScanHeader()
    for entry in 0..<count {
      let identifier = header[1 + 2 * entry]
      guard let index = frame.components.firstIndex(where: { $0.identifier == identifier }) else {
        throw malformed("scan names component \(identifier), which the frame does not have", at: offset)
      }
      guard !scan.componentIndices.contains(index) else {
        throw malformed("scan names component \(identifier) twice", at: offset)
      }
      scan.componentIndices.append(index)
      let tables = Int(header[2 + 2 * entry])
      scan.tableNumbers.append((dc: tables >> 4, ac: tables & 15))
    }
    scan.spectralStart = Int(header[1 + 2 * count])
    scan.spectralEnd = Int(header[2 + 2 * count])
    scan.approximationHigh = Int(header[3 + 2 * count] >> 4)
    scan.approximationLow = Int(header[3 + 2 * count] & 15)
    if count > 1 {
      let blocksPerMCU = scan.componentIndices.reduce(0) {
        $0 + frame.components[$1].horizontalFactor * frame.components[$1].verticalFactor
      }
      guard blocksPerMCU <= 10 else { throw malformed("\(blocksPerMCU) blocks per MCU (at most 10)", at: offset) }
    }
    if !frame.isProgressive {
      guard scan.spectralStart == 0, scan.spectralEnd == 63, scan.approximationHigh == 0, scan.approximationLow == 0
      else {
        throw malformed("sequential scan with spectral selection or successive approximation", at: offset)
      }
    }
    for (position, index) in scan.componentIndices.enumerated() {
      let tables = scan.tableNumbers[position]
      let component = frame.components[index]
      let needsDC = !frame.isProgressive || (scan.spectralStart == 0 && scan.approximationHigh == 0)
      let needsAC = !frame.isProgressive || scan.spectralStart > 0
      if needsDC && (tables.dc > 3 || dcTables[tables.dc] == nil) {
        throw malformed("scan uses DC Huffman table \(tables.dc), which is not defined", at: offset)
      }
      if needsAC && (tables.ac > 3 || acTables[tables.ac] == nil) {
        throw malformed("scan uses AC Huffman table \(tables.ac), which is not defined", at: offset)
      }
      if !frame.isProgressive && quantizationTables[component.quantizationTable] == nil {
        throw malformed("quantization table \(component.quantizationTable) is not defined", at: offset)
      }
    }
    return scan
  }

  /// Refuses progressive scans that are out of order or malformed, and records the bits they decode.
  private func checkProgression(_ scan: JPEGScanHeader, frame: JPEGFrame, offset: Int) throws(ImageError) {
    let start = scan.spectralStart
    let end = scan.spectralEnd
    guard start <= end, end <= 63 else { throw malformed("spectral selection \(start)...\(end)", at: offset) }
    guard (start == 0) == (end == 0) else {
      throw malformed("progressive scan mixes DC and AC coefficients (\(start)...\(end))", at: offset)
    }
    guard start == 0 || scan.componentIndices.count == 1 else {
      throw malformed("progressive AC scan with \(scan.componentIndices.count) components", at: offset)
    }
    guard scan.approximationLow <= 13, scan.approximationHigh <= 13,
      scan.approximationHigh == 0 || scan.approximationLow == scan.approximationHigh - 1
    else {
      throw malformed("successive approximation bits \(scan.approximationHigh)/\(scan.approximationLow)", at: offset)
    }
    for index in scan.componentIndices {
      let identifier = frame.components[index].identifier
      if start > 0 && decodedBits[index][0] < 0 {
        throw malformed("progressive scans out of order: AC of component \(identifier) before its DC", at: offset)
      }
      for coefficient in start...end {
        let previous = Int(decodedBits[index][coefficient])
        let inOrder = previous < 0 ? scan.approximationHigh == 0 : previous > 0 && scan.approximationHigh == previous
        guard inOrder else {
          throw malformed(
            "progressive scans out of order: coefficient \(coefficient) of component \(identifier) refined from bit "
              + "\(scan.approximationHigh) but " + (previous < 0 ? "not decoded yet" : "decoded down to bit \(previous)"),
            at: offset)
        }
        decodedBits[index][coefficient] = Int8(scan.approximationLow)
      }
    }
  }

  /// Calls `body(scanComponent, blockColumn, blockRow, &reader)` for every block of the scan in
  /// MCU order, and reads the restart markers between intervals, calling `restart` after each;
  /// calls `rowFinished(row)` after each row of MCUs (of blocks, for a one-component scan).
  @inline(__always)
  private func forEachBlock(
    _ scan: JPEGScanHeader, frame: JPEGFrame, reader: inout JPEGBitReader, restart: () -> Void,
    rowFinished: (Int) -> Void = { _ in },
    _ body: (Int, Int, Int, inout JPEGBitReader) throws(ImageError) -> Void
  ) throws(ImageError) {
    let single = scan.componentIndices.count == 1
    let first = frame.components[scan.componentIndices[0]]
    let columns = single ? first.blocksPerRow : frame.mcusPerRow
    let rows = single ? first.blockRows : frame.mcuRows
    var untilRestart = restartInterval
    var nextRestart = 0
    for mcuRow in 0..<rows {
      for mcuColumn in 0..<columns {
        if restartInterval > 0 && untilRestart == 0 {
          try readRestartMarker(expected: nextRestart, reader: &reader)
          nextRestart = (nextRestart + 1) & 7
          untilRestart = restartInterval
          restart()
        }
        if single {
          try body(0, mcuColumn, mcuRow, &reader)
        } else {
          for (position, index) in scan.componentIndices.enumerated() {
            let component = frame.components[index]
            for row in 0..<component.verticalFactor {
              for column in 0..<component.horizontalFactor {
                try body(
                  position, mcuColumn * component.horizontalFactor + column, mcuRow * component.verticalFactor + row,
                  &reader)
              }
            }
          }
        }
        untilRestart -= 1
      }
      rowFinished(mcuRow)
    }
  }

  /// Expects RST`expected` at the reader's position (after any padding bits).
  private func readRestartMarker(expected: Int, reader: inout JPEGBitReader) throws(ImageError) {
    reader.discardBufferedBits()
    let (marker, offset) = try nextMarker(from: reader.position, skippingGarbage: true)
    guard marker == 0xD0 + UInt8(expected) else {
      throw malformed("expected restart marker RST\(expected), found marker 0x\(String(marker, radix: 16))", at: offset)
    }
    reader.position = offset + 2
  }

  private func decodeSequentialScan(_ scan: JPEGScanHeader, frame: JPEGFrame, reader: inout JPEGBitReader)
    throws(ImageError)
  {
    let dc = scan.tableNumbers.map { dcTables[$0.dc]! }
    let ac = scan.tableNumbers.map { acTables[$0.ac]! }
    let components = scan.componentIndices.map { frame.components[$0] }
    let streaming = scan.componentIndices.count == frame.components.count
    let writer: JPEGPixelWriter
    if let existing = self.writer {
      writer = existing
    } else {
      writer = try makeWriter(frame: frame, streaming: streaming)
    }
    let streamsRows = streaming && writer.isStreaming
    if streamsRows { writer.restart() }
    let sampleRows = scan.componentIndices.map { writer.samples[$0] }
    let quantization = components.map { quantizationTables[$0.quantizationTable]! }
    let predictions = UnsafeMutablePointer<Int32>.allocate(capacity: components.count)
    predictions.initialize(repeating: 0, count: components.count)
    defer { predictions.deallocate() }
    let block = UnsafeMutablePointer<Int16>.allocate(capacity: 64)
    defer { block.deallocate() }
    let tables = UnsafeMutablePointer<Int32>.allocate(capacity: 64 * components.count)
    defer { tables.deallocate() }
    for (position, table) in quantization.enumerated() {
      for index in 0..<64 { tables[position * 64 + index] = table[index] }
    }
    let zigZag = UnsafeMutablePointer<Int>.allocate(capacity: 64)
    defer { zigZag.deallocate() }
    for index in 0..<64 { zigZag[index] = jpegZigZagToNatural[index] }
    try forEachBlock(
      scan, frame: frame, reader: &reader, restart: { predictions.update(repeating: 0, count: components.count) },
      rowFinished: { row in if streamsRows { writer.samplesDecoded(throughUnit: row) } }
    ) { (position, column, row, reader) throws(ImageError) in
      block.initialize(repeating: 0, count: 64)
      let size = try reader.decode(dc[position])
      predictions[position] &+= try reader.signedValue(size)
      block[0] = Int16(truncatingIfNeeded: predictions[position])
      let acTable = ac[position]
      var k = 1
      while k < 64 {
        let fast = try reader.fastCoefficient(acTable)
        if fast != 0 {
          k += Int((fast >> 8) & 15)
          guard k < 64 else { throw malformed("AC run past the end of a block", at: reader.position) }
          block[zigZag[k]] = Int16(truncatingIfNeeded: fast >> 16)
          k += 1
          continue
        }
        let symbol = try reader.decode(acTable)
        let run = symbol >> 4
        let magnitudeBits = symbol & 15
        if magnitudeBits == 0 {
          if run != 15 { break }
          k += 16
          continue
        }
        k += run
        guard k < 64 else { throw malformed("AC run past the end of a block", at: reader.position) }
        block[zigZag[k]] = Int16(truncatingIfNeeded: try reader.signedValue(magnitudeBits))
        k += 1
      }
      let rows = sampleRows[position]
      inverseDCT(
        coefficients: block, quantization: tables + position * 64, output: rows.row(row * 8) + column * 8,
        stride: rows.stride)
    }
    if streamsRows { writer.writeRemainingRows() }
  }

  private func decodeProgressiveScan(_ scan: JPEGScanHeader, frame: JPEGFrame, reader: inout JPEGBitReader)
    throws(ImageError)
  {
    let components = scan.componentIndices.map { frame.components[$0] }
    let storage = scan.componentIndices.map { coefficients[$0].baseAddress! }
    var predictions = [Int32](repeating: 0, count: components.count)
    var endOfBandRun = 0
    func restart() {
      for index in predictions.indices { predictions[index] = 0 }
      endOfBandRun = 0
    }
    let low = scan.approximationLow
    let start = scan.spectralStart
    let end = scan.spectralEnd
    @inline(__always) func blockAt(_ position: Int, _ column: Int, _ row: Int) -> UnsafeMutablePointer<Int16> {
      storage[position] + (row * components[position].paddedBlocksPerRow + column) * 64
    }
    if start == 0 {
      let dc = scan.approximationHigh == 0 ? scan.tableNumbers.map { dcTables[$0.dc]! } : []
      try forEachBlock(scan, frame: frame, reader: &reader, restart: restart) {
        (position, column, row, reader) throws(ImageError) in
        let block = blockAt(position, column, row)
        if scan.approximationHigh == 0 {
          let size = try reader.decode(dc[position])
          predictions[position] &+= try reader.signedValue(size)
          block[0] = Int16(truncatingIfNeeded: predictions[position] << Int32(low))
        } else if try reader.bit() {
          block[0] |= Int16(truncatingIfNeeded: 1 << low)
        }
      }
      return
    }
    let ac = acTables[scan.tableNumbers[0].ac]!
    if scan.approximationHigh == 0 {
      try forEachBlock(scan, frame: frame, reader: &reader, restart: restart) {
        (position, column, row, reader) throws(ImageError) in
        if endOfBandRun > 0 {
          endOfBandRun -= 1
          return
        }
        let block = blockAt(position, column, row)
        var k = start
        while k <= end {
          let symbol = try reader.decode(ac)
          let run = symbol >> 4
          let magnitudeBits = symbol & 15
          if magnitudeBits == 0 {
            if run < 15 {
              endOfBandRun = (1 << run) + (try reader.bits(run)) - 1
              break
            }
            k += 16
            continue
          }
          k += run
          guard k <= end else { throw malformed("AC run past the end of the band", at: reader.position) }
          block[jpegZigZagToNatural[k]] = Int16(truncatingIfNeeded: try reader.signedValue(magnitudeBits) << Int32(low))
          k += 1
        }
      }
      return
    }
    let positiveBit = Int16(truncatingIfNeeded: 1 << low)
    let negativeBit = Int16(truncatingIfNeeded: -1 << low)
    try forEachBlock(scan, frame: frame, reader: &reader, restart: restart) {
      (position, column, row, reader) throws(ImageError) in
      let block = blockAt(position, column, row)
      /// Adds the correction bit of an already nonzero coefficient.
      @inline(__always) func refine(_ natural: Int, _ reader: inout JPEGBitReader) throws(ImageError) {
        let value = block[natural]
        if try reader.bit(), value & positiveBit == 0 {
          block[natural] = value >= 0 ? value &+ positiveBit : value &+ negativeBit
        }
      }
      var k = start
      if endOfBandRun == 0 {
        while k <= end {
          let symbol = try reader.decode(ac)
          var run = symbol >> 4
          var newValue: Int16 = 0
          if symbol & 15 != 0 {
            newValue = try reader.bit() ? positiveBit : negativeBit
          } else if run != 15 {
            endOfBandRun = (1 << run) + (try reader.bits(run))
            break
          }
          // Skip `run` zero coefficients (refining the nonzero ones passed), stopping at the
          // zero coefficient that becomes `newValue`.
          while k <= end {
            let natural = jpegZigZagToNatural[k]
            if block[natural] != 0 {
              try refine(natural, &reader)
            } else {
              if run == 0 { break }
              run -= 1
            }
            k += 1
          }
          if newValue != 0 {
            guard k <= end else { throw malformed("AC run past the end of the band", at: reader.position) }
            block[jpegZigZagToNatural[k]] = newValue
          }
          k += 1
        }
      }
      if endOfBandRun > 0 {
        while k <= end {
          let natural = jpegZigZagToNatural[k]
          if block[natural] != 0 { try refine(natural, &reader) }
          k += 1
        }
        endOfBandRun -= 1
      }
    }
  }
}
