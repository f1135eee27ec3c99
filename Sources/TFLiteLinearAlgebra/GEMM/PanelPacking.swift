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
@usableFromInline package final class PackedMatrices<Element: AdditiveArithmetic> {
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
  @inlinable package init(_ source: UnsafePointer<Element>, sourceStride: Int, count: Int, layout: MatrixLayout, depth: Int, columns: Int) {
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
