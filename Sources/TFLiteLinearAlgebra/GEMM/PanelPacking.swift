/// Tile sizes of the GEMM micro-kernel.
///
/// One call of the micro-kernel computes `rows × columns` outputs. The right-hand matrix is packed
/// into panels `columns` wide so the kernel reads one contiguous vector per depth step.
@usableFromInline package enum GEMMTile {
  /// Output rows per micro-kernel call (left-hand rows broadcast one at a time).
  @usableFromInline package static let rows = 8
  /// Output columns per micro-kernel call: one `SIMD16<Float>` (or, for int8, `SIMD16<Int32>`).
  @usableFromInline package static let columns = 16
}

/// Where element (depth `k`, column `n`) of a K×N right-hand matrix lives: `k * depthStride + n * columnStride`.
///
/// A row-major K×N matrix has `(columns, 1)`; a row-major N×K matrix (TFLite weights `[out, in]`,
/// a convolution filter `[out, h, w, in]`) has `(1, depth)`.
@usableFromInline package struct MatrixLayout {
  /// Distance between consecutive depth indices of one column.
  @usableFromInline package var depthStride: Int
  /// Distance between consecutive columns at one depth.
  @usableFromInline package var columnStride: Int

  /// A layout with the given strides.
  @inlinable package init(depthStride: Int, columnStride: Int) {
    self.depthStride = depthStride
    self.columnStride = columnStride
  }

  /// A row-major K×N matrix.
  @inlinable package static func depthMajor(columns: Int) -> MatrixLayout { MatrixLayout(depthStride: columns, columnStride: 1) }
  /// A row-major N×K matrix, i.e. each column's depth values are contiguous.
  @inlinable package static func columnMajor(depth: Int) -> MatrixLayout { MatrixLayout(depthStride: 1, columnStride: depth) }
}

/// Packs right-hand matrices into zero-padded, depth-major panels of `GEMMTile.columns` columns.
///
/// Panel `p` holds columns `p*16 ..< p*16+16`; within it, depth step `k` is the 16 contiguous values
/// of those columns at depth `k`. Columns past N are zero, so edge panels need no special case.
@usableFromInline package enum PanelPacking {
  /// Number of panels for `columns` columns.
  @inlinable package static func panelCount(columns: Int) -> Int { (columns + GEMMTile.columns - 1) / GEMMTile.columns }

  /// Element count of the packed form of a `depth × columns` matrix.
  @inlinable package static func packedCount(depth: Int, columns: Int) -> Int { panelCount(columns: columns) * depth * GEMMTile.columns }

  /// Writes the packed form of `source` (read through `layout`) to `destination`,
  /// which must hold `packedCount(depth:columns:)` elements.
  @inlinable package static func pack<Element: AdditiveArithmetic>(
    _ source: UnsafePointer<Element>, layout: MatrixLayout, depth: Int, columns: Int,
    into destination: UnsafeMutablePointer<Element>
  ) {
    let width = GEMMTile.columns
    var out = destination
    for panel in 0..<panelCount(columns: columns) {
      let firstColumn = panel * width
      let validColumns = min(width, columns - firstColumn)
      let panelSource = source + firstColumn * layout.columnStride
      if layout.columnStride == 1 {
        for k in 0..<depth {
          let row = panelSource + k * layout.depthStride
          for j in 0..<validColumns { out[j] = row[j] }
          for j in validColumns..<width { out[j] = .zero }
          out += width
        }
      } else {
        // Column-contiguous source: walk each column's depth run, scattering into the panel.
        for j in 0..<validColumns {
          let column = panelSource + j * layout.columnStride
          for k in 0..<depth { out[k * width + j] = column[k * layout.depthStride] }
        }
        for k in 0..<depth {
          for j in validColumns..<width { out[k * width + j] = .zero }
        }
        out += depth * width
      }
    }
  }
}

/// One or more right-hand matrices of the same size, packed once (at prepare time) into 64-byte
/// aligned panels: a convolution's groups, a batch of BATCH_MATMUL right-hand sides.
///
/// The class itself puts no requirement on `Element` (only its initializer does): the Swift
/// runtime builds a generic class's metadata from its mangled name and checks each requirement of
/// the class by a scan of every protocol conformance record of the process, once per process
/// (≈ 270 k instructions each, paid by the first model that loads).
@usableFromInline package final class PackedMatrices<Element> {
  /// K of each product.
  @usableFromInline package let depth: Int
  /// N of each product (before padding to whole panels).
  @usableFromInline package let columns: Int
  /// Number of matrices.
  @usableFromInline package let count: Int
  /// Elements between the starts of consecutive packed matrices.
  @usableFromInline package let matrixStride: Int
  /// The panels of all matrices.
  @usableFromInline package let storage: UnsafeMutablePointer<Element>

  /// Packs `count` matrices; matrix `i` starts at `source + i * sourceStride` and is read through `layout`.
  @inlinable package init(
    _ source: UnsafePointer<Element>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int
  ) where Element: AdditiveArithmetic {
    self.depth = depth
    self.columns = columns
    self.count = count
    matrixStride = PanelPacking.packedCount(depth: depth, columns: columns)
    let total = max(1, matrixStride * count)
    storage = UnsafeMutableRawPointer.allocate(byteCount: total * MemoryLayout<Element>.stride, alignment: 64)
      .bindMemory(to: Element.self, capacity: total)
    for i in 0..<count {
      PanelPacking.pack(
        source + i * sourceStride, layout: layout, depth: depth, columns: columns, into: storage + i * matrixStride)
    }
  }

  /// The packed panels of matrix `index`.
  @inlinable package func matrix(_ index: Int) -> UnsafePointer<Element> { UnsafePointer(storage + index * matrixStride) }

  deinit { storage.deallocate() }
}

extension PanelPacking {
  /// Element count of `groups` bias vectors of `columns` values, each padded to whole panels.
  @inlinable package static func paddedBiasCount(groups: Int, columns: Int) -> Int { groups * packedCount(depth: 1, columns: columns) }

  /// Copies `groups` consecutive bias vectors of `columns` values into `destination`, each padded
  /// with zeros to whole panels (`paddedBiasCount` elements), so tiles load full vectors.
  @inlinable package static func padBias(_ source: UnsafePointer<Float>, groups: Int, columns: Int, into destination: UnsafeMutablePointer<Float>) {
    let padded = packedCount(depth: 1, columns: columns)
    for group in 0..<groups {
      let out = destination + group * padded
      out.update(from: source + group * columns, count: columns)
      (out + columns).update(repeating: 0, count: padded - columns)
    }
  }

  /// `padBias` into a new array (at prepare time, for constant biases).
  @inlinable package static func paddedBias(_ source: UnsafePointer<Float>, groups: Int, columns: Int) -> [Float] {
    [Float](unsafeUninitializedCapacity: paddedBiasCount(groups: groups, columns: columns)) { buffer, count in
      if let base = buffer.baseAddress { padBias(source, groups: groups, columns: columns, into: base) }
      count = buffer.count
    }
  }
}

/// Integer right-hand matrices (a convolution's groups) packed once into panels of 16 columns
/// whose 32-bit lanes each hold `interleave` consecutive depths of one column, with the sum of
/// every column. Two 16-bit weights per lane (`PairedPanelMatrices`) feed the Swift integer
/// kernel's `pmaddwd`; four signed bytes per lane (`QuadPanelMatrices`) feed `vpdpbusd`. Column `n`
/// sits in panel `n / 16`, lane `n % 16`; depth `k` in step `k / interleave`, element
/// `k % interleave` of the lane. The depth is padded with zero weights to a multiple of the
/// interleave, so whatever A holds there adds nothing.
///
/// As for `PackedMatrices`, only the members that need them state the requirements on `Element`,
/// so that the class's metadata is made without conformance scans.
@usableFromInline package final class InterleavedPanelMatrices<Element> {
  /// K of each product rounded up to a multiple of `interleave`: the depth of the GEMM plan.
  @usableFromInline package let paddedDepth: Int
  /// N of each product.
  @usableFromInline package let columns: Int
  /// Σ_k B[k, n] of every column, matrix after matrix (wrapping).
  @usableFromInline package let columnSums: [Int32]
  /// Elements between the starts of consecutive packed matrices.
  @usableFromInline internal let matrixStride: Int
  /// The panels of all matrices.
  @usableFromInline internal let storage: UnsafeMutablePointer<Element>

  /// Depth steps per 32-bit lane: 2 for Int16, 4 for Int8.
  @inlinable package static var interleave: Int { MemoryLayout<Int32>.size / MemoryLayout<Element>.size }

  /// `depth` rounded up to a multiple of `interleave`.
  @inlinable package static func paddedDepth(_ depth: Int) -> Int { (depth + interleave - 1) / interleave * interleave }

  /// Packs `count` matrices of `depth × columns` values; element (k, n) of matrix `i` is
  /// `source[i * sourceStride + k * layout.depthStride + n * layout.columnStride]`, of any integer
  /// type (int8 weights are packed straight from their tensor, without a widened copy). Nil when a
  /// value does not fit an `Element` (uint8 weights minus their zero point need 16 bits; int8 ones fit 8).
  @inlinable package init?<Source: FixedWidthInteger>(
    _ source: UnsafePointer<Source>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int
  ) where Element: FixedWidthInteger & SignedInteger {
    precondition(count >= 0 && depth >= 0 && columns >= 0, "negative matrix extent")
    let width = GEMMTile.columns
    let paddedDepth = Self.paddedDepth(depth)
    let matrixStride = PanelPacking.packedCount(depth: paddedDepth, columns: columns)
    let total = max(1, matrixStride * count)
    let storage = UnsafeMutableRawPointer.allocate(byteCount: total * MemoryLayout<Element>.stride, alignment: 64)
      .bindMemory(to: Element.self, capacity: total)
    storage.initialize(repeating: 0, count: total)
    var sums = [Int32](repeating: 0, count: count * columns)
    let fits = sums.withUnsafeMutableBufferPointer { sumBuffer in
      for matrix in 0..<count {
        for panelStart in stride(from: 0, to: columns, by: width) {
          guard
            Self.packPanel(
              source + matrix * sourceStride + panelStart * layout.columnStride, layout: layout, depth: depth,
              columns: min(width, columns - panelStart), into: storage + matrix * matrixStride + panelStart * paddedDepth,
              sums: sumBuffer.baseAddress.unsafelyUnwrapped + matrix * columns + panelStart)
          else { return false }
        }
      }
      return true
    }
    guard fits else {
      storage.deallocate()
      return nil
    }
    self.paddedDepth = paddedDepth
    self.columns = columns
    self.matrixStride = matrixStride
    self.storage = storage
    columnSums = sums
  }

  /// Packs the first `columns` (at most 16) columns of one panel step by step, so that each step's
  /// `interleave × 16` elements are written in order (column by column, the lanes of the step were
  /// written 64 bytes apart), adding each column's values to `sums`; false when a value does not
  /// fit an `Element`. `source` is the panel's element (0, 0).
  @inlinable static func packPanel<Source: FixedWidthInteger>(
    _ source: UnsafePointer<Source>, layout: MatrixLayout, depth: Int, columns: Int,
    into panel: UnsafeMutablePointer<Element>, sums: UnsafeMutablePointer<Int32>
  ) -> Bool where Element: FixedWidthInteger & SignedInteger {
    let interleave = Self.interleave
    var step = panel
    var k = 0
    while k < depth {
      let stepDepth = min(interleave, depth - k)
      for lane in 0..<columns {
        let values = source + lane * layout.columnStride + k * layout.depthStride
        var sum: Int32 = 0
        for element in 0..<stepDepth {
          guard let value = Element(exactly: values[element * layout.depthStride]) else { return false }
          step[lane * interleave + element] = value
          sum &+= Int32(value)
        }
        sums[lane] &+= sum
      }
      step += interleave * GEMMTile.columns
      k += interleave
    }
    return true
  }

  /// The packed panels of matrix `index`.
  @inlinable package func matrix(_ index: Int) -> UnsafePointer<Element> { UnsafePointer(storage + index * matrixStride) }

  deinit { storage.deallocate() }
}

/// Weights packed for the Swift integer kernel: two 16-bit depths per 32-bit lane.
package typealias PairedPanelMatrices = InterleavedPanelMatrices<Int16>

/// Weights packed for the generated `vpdpbusd` kernels: four signed-byte depths per 32-bit lane.
package typealias QuadPanelMatrices = InterleavedPanelMatrices<Int8>
