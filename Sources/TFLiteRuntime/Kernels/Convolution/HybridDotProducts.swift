// The integer product of the hybrid CONV_2D and FULLY_CONNECTED kernels as an 8-bit GEMM, the way
// LiteRT's optimized hybrid kernels run it (quantized input times int8 weights into int32, then
// scaled in float): the weights are packed once into `QuadPanelMatrices` (four depths per 32-bit
// lane, the layout `vpdpbusd` reads) and `DotProductSums` computes 16-column tiles of sums, with
// the generated VNNI kernels where the CPU has them and Swift code elsewhere.
//
// The quantized input is stored unsigned (q + 128), as `vpdpbusd` multiplies unsigned by signed
// bytes. A tile's sum is then Σ (q + 128) · w, and the sum LiteRT computes, Σ (q − z) · w for
// input zero point z, is that minus (z + 128) · Σ w (the weight row's sum), all wrapping in Int32:
// equal to the bit whatever the order of the additions.
//
// Depths are padded to a multiple of four with zero weights, so a left-hand row may be read up
// to three bytes past its end (the values there meet zero weights); `HybridInputScratch` leaves
// that room after the quantized input.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The constant weights of a hybrid CONV_2D or FULLY_CONNECTED, packed for `DotProductSums`: one
/// `depth × groupChannels` matrix per group (column n of group g is output channel
/// `g · groupChannels + n`), with the sum and the scale of every output channel.
final class HybridPackedWeights {
  /// The packed matrices, one per group.
  let panels: QuadPanelMatrices
  /// Output channels of one group.
  let groupChannels: Int
  /// The depth of the products (unpadded).
  let depth: Int
  /// The sum of each output channel's weights (then 16 zeros).
  let channelSums: UnsafeMutablePointer<Int32>
  /// The scale of every output channel (the per-tensor scale repeated; then 16 zeros).
  let channelScales: UnsafeMutablePointer<Float>
  /// True when the channels do not all share one scale.
  let hasDistinctScales: Bool
  /// The tensor memory and layout the weights were read from.
  private let source: (data: UnsafeMutableRawPointer?, layout: HybridWeightLayout, groups: Int)

  /// Steps of four depths of every product.
  var steps: Int { panels.paddedDepth / 4 }

  /// `existing` when it was read from the same memory of `tensor` in the same layout and groups,
  /// else the weights read anew.
  static func reusing(
    _ existing: HybridPackedWeights?, _ tensor: RuntimeTensor, op: String, layout: HybridWeightLayout, groups: Int,
    channelAxis: Int
  ) throws -> HybridPackedWeights {
    if let existing, tensor.isConstant, existing.source.data == tensor.data, existing.source.layout == layout,
      existing.source.groups == groups
    {
      return existing
    }
    return try HybridPackedWeights(tensor, op: op, layout: layout, groups: groups, channelAxis: channelAxis)
  }

  /// Reads and checks `tensor` as `HybridWeights` does (rows = output channels, columns = depth)
  /// and packs it. INT8 weights in the contiguous layout are packed straight from the tensor; others
  /// (packed INT4) go through a row-major int8 copy that is freed before this returns.
  init(_ tensor: RuntimeTensor, op: String, layout: HybridWeightLayout, groups: Int, channelAxis: Int) throws {
    let channels = layout.rows
    let depth = layout.columns
    let groupChannels = groups > 0 ? channels / groups : 0
    let (data, scales) = try HybridWeights.validated(tensor, op: op, channels: channels, channelAxis: channelAxis)
    let unpacked =
      tensor.type == .int8 && layout == .contiguous(rows: channels, columns: depth)
      ? nil : try HybridWeights(tensor, op: op, layout: layout, channels: channels, channelAxis: channelAxis)
    let values = unpacked.map { UnsafePointer($0.values) } ?? UnsafePointer(data.assumingMemoryBound(to: Int8.self))
    guard
      let panels = QuadPanelMatrices(
        values, sourceStride: groupChannels * depth, count: groups, layout: .columnMajor(depth: depth), depth: depth,
        columns: groupChannels)
    else {
      throw KernelError.invalid("\(op): weights \(QuantizationValidation.describe(tensor)) do not fit in 8 bits")
    }
    self.panels = panels
    self.groupChannels = groupChannels
    self.depth = depth
    // A whole panel's worth of zeros past the last channel, so that tiles load full vectors.
    channelSums = .allocate(capacity: channels + GEMMTile.columns)
    channelSums.initialize(repeating: 0, count: channels + GEMMTile.columns)
    channelSums.update(from: panels.columnSums, count: groups * groupChannels)
    channelScales = .allocate(capacity: channels + GEMMTile.columns)
    channelScales.initialize(repeating: 0, count: channels + GEMMTile.columns)
    for channel in 0..<channels { channelScales[channel] = scales.count == 1 ? scales[0] : scales[channel] }
    hasDistinctScales = scales.contains { $0 != scales[0] }
    source = (tensor.data, layout, groups)
  }

  deinit {
    channelSums.deallocate()
    channelScales.deallocate()
  }

  /// Computes the sums of `rowCount` left-hand rows (unsigned, `lda` bytes apart) with the columns
  /// `panels` (16 each) of group `group`'s matrix, up to `route.tilePanels` panels per call, and
  /// hands each 16-column tile to `body(firstColumn, columnCount, sums, sumsStride)`: `sums` holds
  /// `rowCount` rows of 16 Int32 values, `sumsStride` apart, of which the first `columnCount` are
  /// real columns (channel `group · groupChannels + firstColumn + j`). `tile` is room for
  /// `rowCount × 16 × route.tilePanels` sums (`tileElements`).
  @inline(__always)
  func forEachTile(
    route: DotProductSums, a: UnsafePointer<UInt8>, lda: Int, rowCount: Int, group: Int, panels panelRange: Range<Int>,
    tile: UnsafeMutablePointer<Int32>,
    _ body: (_ firstColumn: Int, _ columnCount: Int, _ sums: UnsafePointer<Int32>, _ sumsStride: Int) -> Void
  ) {
    let width = GEMMTile.columns
    let matrix = panels.matrix(group)
    let panelBytes = panels.paddedDepth &* width
    var panel = panelRange.lowerBound
    while panel < panelRange.upperBound {
      let count = min(route.tilePanels, panelRange.upperBound &- panel)
      route.sums(
        a: a, lda: lda, rowCount: rowCount, b: matrix + panel &* panelBytes, steps: steps, c: tile, ldc: count &* width,
        columns: count, panelBytes: panelBytes)
      for index in 0..<count {
        let firstColumn = (panel &+ index) &* width
        body(firstColumn, min(width, groupChannels &- firstColumn), UnsafePointer(tile + index &* width), count &* width)
      }
      panel &+= count
    }
  }

  /// Int32 elements of the sums tile `forEachTile` needs for `rows` rows on any route (the route
  /// is chosen again at every invoke).
  static func tileElements(rows: Int) -> Int { rows &* GEMMTile.columns &* DotProductSums.mostTilePanels }

  /// Panels of one group's matrix.
  var panelCount: Int { PanelPacking.panelCount(columns: groupChannels) }
}

extension DotProductSums {
  /// How the kernel's products run, for `tflite bench --verbose`.
  var hybridDescription: String { "int8 dot-product GEMM, \(generatedLevel ?? KernelDescription.swiftLevel)" }
}
