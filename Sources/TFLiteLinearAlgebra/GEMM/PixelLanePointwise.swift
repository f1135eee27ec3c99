/// An int8 1×1 stride-1 convolution into 1–4 output channels from a few input channels (a
/// segmentation or score head), read in place on a pixel-lane kernel (PixelLaneKernelGenerator.swift):
/// whole blocks of 16 pixels straight from the input into the output, a last partial block
/// through a 16-pixel copy on the stack. The sums and their requantization are those of the GEMM
/// route (`IntegerGEMM`) bit for bit: the input in unsigned form, its offset in the bias.
package final class PixelLanePointwise {
  /// Output channels.
  package let outputs: Int
  /// Input channels (a multiple of 4).
  package let depth: Int
  /// The requantization's steps.
  let form: RequantizationForm
  /// The kernels (of the AVX512-VNNI dot-product level).
  let kernels: PixelLaneKernels
  /// `PixelLaneKernelGenerator.weightVectors`, 64-byte aligned.
  private let weights: UnsafeMutableRawPointer
  /// `PixelLaneKernelGenerator.indices`, 64-byte aligned.
  private let indices: UnsafeMutableRawPointer
  /// One `RequantizationTable` record per output vector of a channel period.
  private let table: UnsafeMutableRawPointer
  /// The epilogue's `RequantizationLanes`, owned by the caller's `IntegerChannelConstants`.
  private let lanes: UnsafeRawPointer

  /// The convolution of `outputs` channels from `depth` with int8 weights `weights` (`outputs`
  /// rows of `depth`), on the kernels of `dotProducts`, its kernel reserved (mapped with the
  /// other nodes' at the end of `allocateTensors()`); channel c's sum starts from
  /// `epilogue.bias[c]` and is rescaled by `multipliers[c]` with `rounding`, then offset and
  /// clamped as `epilogue` says (whose constants must outlive this). nil where the level has no
  /// such kernels or the shape none (`PixelLaneKernelGenerator.supports`).
  package init?(
    dotProducts: GeneratedDotProductKernels, outputs: Int, depth: Int, weights: UnsafePointer<Int8>,
    epilogue: IntegerEpilogue, multipliers: [QuantizedMultiplier], rounding: RoundingPolicy
  ) {
    guard let kernels = dotProducts.pixelLanes, PixelLaneKernelGenerator.supports(outputs: outputs, depth: depth) else {
      return nil
    }
    self.outputs = outputs
    self.depth = depth
    self.kernels = kernels
    form = epilogue.form(storing: Int8.self)
    lanes = epilogue.lanes
    /// A 64-byte aligned copy of `values`.
    func aligned<Value>(_ values: [Value]) -> UnsafeMutableRawPointer {
      let bytes = values.count * MemoryLayout<Value>.stride
      let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
      values.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes) }
      return copy
    }
    self.weights = aligned(
      PixelLaneKernelGenerator.weightVectors(outputs: outputs, depth: depth) { weights[$0 * depth + $1] })
    indices = aligned(PixelLaneKernelGenerator.indices(outputs: outputs, depth: depth))
    let records = PixelLaneKernelGenerator.period(outputs: outputs)
    table = UnsafeMutableRawPointer.allocate(byteCount: records * RequantizationTable.blockBytes, alignment: 64)
    table.initializeMemory(as: UInt8.self, repeating: 0, count: records * RequantizationTable.blockBytes)
    for record in 0..<records {
      for lane in 0..<16 {
        let channel = PixelLaneKernelGenerator.channel(outputs: outputs, record: record, lane: lane)
        RequantizationTable.write(
          lane: lane, of: table + record * RequantizationTable.blockBytes, bias: epilogue.bias[channel],
          multiplier: multipliers[channel], rounding: rounding)
      }
    }
    kernels.reserve(outputs: outputs, depth: depth, form: form)
  }

  deinit {
    weights.deallocate()
    indices.deallocate()
    table.deallocate()
  }

  /// Whether the kernel runs (its executable memory is mapped; false where the OS refused it, and
  /// the convolution takes its GEMM).
  package var isRunnable: Bool { kernels.entry(outputs: outputs, depth: depth, form: form) != nil }

  /// Computes the `outputs` channels of `pixels` pixels of `depth` int8 bytes at `input` into
  /// `output`; false (nothing written) when the OS refused the kernel's executable memory.
  package func run(input: UnsafePointer<Int8>, output: UnsafeMutablePointer<Int8>, pixels: Int) -> Bool {
    guard let entry = kernels.entry(outputs: outputs, depth: depth, form: form) else { return false }
    let blockPixels = PixelLaneKernelGenerator.blockPixels
    let blocks = pixels / blockPixels
    var arguments = PixelLaneKernelArguments(
      input: input, blocks: blocks, output: output, weights: weights, indices: indices, table: table, lanes: lanes)
    callKernel(at: entry, &arguments)
    let rest = pixels - blocks * blockPixels
    guard rest > 0 else { return true }
    let inputBytes = blockPixels * depth
    withUnsafeTemporaryAllocation(byteCount: inputBytes + blockPixels * outputs, alignment: 64) { buffer in
      let block = buffer.baseAddress!
      block.initializeMemory(as: UInt8.self, repeating: 0, count: inputBytes)
      block.copyMemory(from: input + blocks * inputBytes, byteCount: rest * depth)
      arguments.input = UnsafeRawPointer(block)
      arguments.blocks = 1
      arguments.output = block + inputBytes
      callKernel(at: entry, &arguments)
      UnsafeMutableRawPointer(output + blocks * blockPixels * outputs).copyMemory(
        from: block + inputBytes, byteCount: rest * outputs)
    }
    return true
  }
}
