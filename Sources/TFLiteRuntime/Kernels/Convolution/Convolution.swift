// CONV_2D on float32: an im2col view of the input multiplied by the packed filter in the GEMM
// (one GEMM per group), with the bias and fused activation applied as the products are written.
// A grouped convolution with one input channel per group runs on the depthwise kernel instead.
// The integer and hybrid kernels are in `Convolution+Integer.swift` and `Convolution+Hybrid.swift`;
// `KernelDispatch` picks among them from the operand types.

import TFLiteFormat
import TFLiteLinearAlgebra

/// The im2col view of a convolution input: row = output pixel, depth = (ky, kx, channel of the group).
/// Blocks are gathered into the worker's scratch; taps outside the input read as zero.
struct Im2colLeftOperand: GEMMLeftOperand {
  /// The NHWC input.
  let input: UnsafePointer<Float>
  /// The convolution.
  let shape: ConvolutionShape
  /// First input channel of the group.
  let channelOffset: Int

  var packsIntoScratch: Bool { true }

  func block(
    rowStart: Int, rowCount: Int, depthStart: Int, depthCount: Int, scratch: UnsafeMutablePointer<Float>
  ) -> (pointer: UnsafePointer<Float>, rowStride: Int) {
    let groupChannels = shape.groupInputChannels
    let filterWidth = shape.width.filterSize
    let outputWidth = shape.width.outputSize
    let outputHeight = shape.height.outputSize
    let rowStride = shape.width.inputSize * shape.inputChannels
    let firstTap = depthStart / groupChannels
    let firstChannel = depthStart % groupChannels
    let contiguousTaps = shape.width.dilation == 1 && groupChannels == shape.inputChannels
    // Wrapping index arithmetic: every offset stays inside the input tensor validated in `prepare`.
    // The output pixel's coordinates advance incrementally (no divisions per row).
    var x = rowStart % outputWidth
    var y = (rowStart / outputWidth) % outputHeight
    var image = input + ((rowStart / (outputWidth &* outputHeight)) &* shape.height.inputSize &* rowStride &+ channelOffset)
    let imageStride = shape.height.inputSize &* rowStride
    // With all channels and no horizontal dilation, the in-bounds taps of one filter row are one
    // contiguous run of the input: when the block holds the whole depth (the usual case: the depth
    // is split only beyond `GEMMPlan.maxDepthBlock`), each filter row is gathered with one copy,
    // padding taps on either side set to zero.
    let copiesWholeRows = contiguousTaps && depthStart == 0 && depthCount == shape.gemmDepth
    let filterRowLength = filterWidth &* groupChannels
    let filterRowStride = shape.height.dilation &* rowStride
    for r in 0..<rowCount {
      defer {
        x &+= 1
        if x == outputWidth {
          x = 0
          y &+= 1
          if y == outputHeight {
            y = 0
            image += imageStride
          }
        }
      }
      let originY = shape.height.inputOrigin(y)
      let originX = shape.width.inputOrigin(x)
      var destination = scratch + r &* depthCount
      if copiesWholeRows {
        let rows = shape.height.validTaps(y)
        let taps = shape.width.validTaps(x)
        let before = taps.first &* groupChannels
        let inside = (taps.end &- taps.first) &* groupChannels
        var source = image + ((originY &+ rows.first &* shape.height.dilation) &* rowStride &+ (originX &+ taps.first) &* groupChannels)
        for ky in 0..<shape.height.filterSize {
          if ky < rows.first || ky >= rows.end {
            zeroFloats(destination, count: filterRowLength)
          } else {
            zeroFloats(destination, count: before)
            copyFloats(from: source, to: destination + before, count: inside)
            zeroFloats(destination + (before &+ inside), count: filterRowLength &- before &- inside)
            source += filterRowStride
          }
          destination += filterRowLength
        }
        continue
      }
      var remaining = depthCount
      var ky = firstTap / filterWidth
      var kx = firstTap % filterWidth
      var channel = firstChannel
      while remaining > 0 {
        let inputY = originY &+ ky &* shape.height.dilation
        let inputX = originX &+ kx &* shape.width.dilation
        let rowInside = inputY >= 0 && inputY < shape.height.inputSize
        // Taps kx, kx+1, … of one filter row are contiguous in the input when they are adjacent
        // pixels with all channels: copy the whole in-bounds run at once.
        var taps = 1
        if contiguousTaps && rowInside && inputX >= 0 {
          taps = max(1, min(filterWidth &- kx, shape.width.inputSize &- inputX))
        }
        let count = min(taps &* groupChannels &- channel, remaining)
        if rowInside && inputX >= 0 && inputX < shape.width.inputSize {
          copyFloats(from: image + (inputY &* rowStride &+ inputX &* shape.inputChannels &+ channel), to: destination, count: count)
        } else {
          zeroFloats(destination, count: count)
        }
        destination += count
        remaining &-= count
        channel = 0
        kx &+= taps
        if kx == filterWidth {
          kx = 0
          ky &+= 1
        }
      }
    }
    return (UnsafePointer(scratch), depthCount)
  }
}

/// Copies `count` floats with explicit 8-lane moves: short runs (a few channels per tap) are the
/// norm in im2col, where a `memmove` call or an alias-checked loop costs more than the copy.
@inline(__always)
func copyFloats(from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
  var offset = 0
  while offset &+ 8 <= count {
    UnsafeMutableRawPointer(destination + offset).storeBytes(
      of: UnsafeRawPointer(source + offset).loadUnaligned(as: SIMD8<Float>.self), as: SIMD8<Float>.self)
    offset &+= 8
  }
  while offset < count {
    destination[offset] = source[offset]
    offset &+= 1
  }
}

/// Sets `count` floats to zero with 8-lane stores.
@inline(__always)
func zeroFloats(_ destination: UnsafeMutablePointer<Float>, count: Int) {
  var offset = 0
  while offset &+ 8 <= count {
    UnsafeMutableRawPointer(destination + offset).storeBytes(of: SIMD8<Float>(), as: SIMD8<Float>.self)
    offset &+= 8
  }
  while offset < count {
    destination[offset] = 0
    offset &+= 1
  }
}

/// CONV_2D in float32 as one GEMM per group over packed filters.
enum FloatConvolution {
  /// The GEMM plan shared by every group.
  static func plan(_ shape: ConvolutionShape, threadCount: Int) -> GEMMPlan {
    GEMMPlan(rows: shape.gemmRows, columns: shape.groupOutputChannels, depth: shape.gemmDepth, threadCount: threadCount)
  }

  /// Layout of one group's filter inside an OHWI filter: matrix `g` starts at `g * filterGroupStride`.
  static func filterLayout(_ shape: ConvolutionShape) -> MatrixLayout { .columnMajor(depth: shape.gemmDepth) }

  /// Elements of the OHWI filter per group.
  static func filterGroupStride(_ shape: ConvolutionShape) -> Int { shape.groupOutputChannels * shape.gemmDepth }

  /// Scratch bytes `run` needs.
  static func scratchBytes(_ shape: ConvolutionShape, threadCount: Int) -> Int {
    plan(shape, threadCount: threadCount).scratchBytes(leftOperandPacks: !shape.readsInputInPlace, threadCount: threadCount)
  }

  /// Computes the convolution.
  ///
  /// - Parameters:
  ///   - filter: the packed filter, group `g`'s matrix at `g * PanelPacking.packedCount(depth:columns:)`.
  ///   - bias: padded per group (`PanelPacking.padBias` with `groups`), or nil.
  ///   - negativeSlopes: a folded PRELU's α, padded per group as the bias, or nil.
  ///   - generatedKernels: the generated kernels to run, by default those this thread may use
  ///     (a caller that has read them passes them on: each read is a task-local look-up).
  static func run(
    _ shape: ConvolutionShape, plan: GEMMPlan, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
    bias: UnsafePointer<Float>?, activation: FloatClampRange, negativeSlopes: UnsafePointer<Float>? = nil,
    output: UnsafeMutablePointer<Float>, threadCount: Int, scratch: UnsafeMutableRawPointer,
    generatedKernels: GeneratedFloatKernels? = GeneratedFloatKernels.current
  ) {
    let groupColumns = shape.groupOutputChannels
    let paddedBias = PanelPacking.paddedBiasCount(groups: 1, columns: groupColumns)
    let packedGroup = PanelPacking.packedCount(depth: shape.gemmDepth, columns: groupColumns)
    for group in 0..<shape.groups {
      let epilogue = FloatEpilogue(
        bias: bias.map { $0 + group * paddedBias }, activation: activation,
        negativeSlopes: negativeSlopes.map { $0 + group * paddedBias })
      let groupOutput = output + group * groupColumns
      let channelOffset = group * shape.groupInputChannels
      if shape.readsInputInPlace {
        FloatGEMM.multiply(
          plan: plan, lhs: RowMajorLeftOperand(base: input + channelOffset, rowStride: shape.inputChannels),
          rhs: filter + group * packedGroup, output: groupOutput, outputStride: shape.outputChannels, epilogue: epilogue,
          threadCount: threadCount, scratch: scratch, generatedKernels: generatedKernels)
      } else {
        FloatGEMM.multiply(
          plan: plan, lhs: Im2colLeftOperand(input: input, shape: shape, channelOffset: channelOffset),
          rhs: filter + group * packedGroup, output: groupOutput, outputStride: shape.outputChannels, epilogue: epilogue,
          threadCount: threadCount, scratch: scratch, generatedKernels: generatedKernels)
      }
    }
  }
}

/// CONV_2D (float32): inputs `input [N,H,W,C]`, `filter [O,KH,KW,C/groups]`, optional `bias [O]`.
final class Conv2DKernel: Kernel {
  /// The depthwise route for one input channel per group, else the GEMM.
  var kernelDescription: String? {
    if let depthwise { return "depthwise route, \(KernelDescription.depthwiseLevel(channels: depthwise.outputChannels))" }
    if implicit != nil, let kernels = GeneratedFloatKernels.current { return "implicit GEMM, generated \(kernels.isa)" }
    return KernelDescription.floatGEMM
  }

  private let operands: WeightedOperands
  private var input: RuntimeTensor { operands.input }
  private var filter: RuntimeTensor { operands.weights }
  private var bias: RuntimeTensor? { operands.bias }
  private var output: RuntimeTensor { operands.output }
  private let options: Conv2DOptions
  private let activation: FloatClampRange
  /// A folded PRELU's α (constant, one per output channel): after the activation, negative
  /// outputs are multiplied by it (see `OperatorFusion`); nil for a plain CONV_2D.
  private let negativeSlopes: RuntimeTensor?
  private var shape: ConvolutionShape?
  private var plan: GEMMPlan?
  // Written only by `prepare`, read by every `eval`: no run-time exclusivity check per read.
  @exclusivity(unchecked) private var weights = PackedWeights()
  @exclusivity(unchecked) private var paddedBias = PaddedBias()
  /// `negativeSlopes` padded to whole panels as the bias is.
  @exclusivity(unchecked) private var paddedNegativeSlopes = PaddedBias()
  private var gemmScratchOffset = 0
  /// The GEMM over the input in place, without im2col (`ImplicitConvolution`), where it applies;
  /// it runs when the generated float kernels do.
  private var implicit: ImplicitConvolution?
  private var implicitScratchOffset = 0
  /// Set when every group has one input channel (a depthwise convolution written as a grouped
  /// CONV_2D, as Keras converts `Conv2D(groups=channels)`): it then runs on the depthwise kernel
  /// rather than as one GEMM of a single column per group.
  private var depthwise: DepthwiseShape?
  /// A constant filter of the depthwise route in the depthwise layout (`[h, w, out]`).
  private var depthwiseFilter: CacheLineValues<Float>?
  /// Scratch for a non-constant filter of the depthwise route in that layout, and for the kernel.
  private var depthwiseFilterScratchOffset: Int?
  private var depthwiseScratchOffset = 0
  /// The generated kernels' calls of the depthwise route.
  private var depthwisePlan: FloatDepthwisePlan?

  convenience init(node: Node) throws { try self.init(node: node, negativeSlopes: nil) }

  /// The kernel of `node`, with `negativeSlopes` (a constant α per output channel of a PRELU
  /// folded into it) applied after its activation when given: the generated or Swift GEMM applies
  /// them as it stores; the depthwise route cannot, and refuses them in `prepare`.
  init(node: Node, negativeSlopes: RuntimeTensor?) throws {
    self.negativeSlopes = negativeSlopes
    operands = try WeightedOperands(node, op: "CONV_2D")
    options = try FloatOperands.options(of: node, op: "CONV_2D", defaults: Conv2DOptions()) {
      if case .conv2DOptions(let options) = $0 { options } else { nil }
    }
    activation = try FloatClampRange(options.fusedActivationFunction, op: "CONV_2D")
  }

  func prepare(_ context: inout PrepareContext) throws {
    let shape = try ConvolutionShape(conv2DInput: input, filter: filter, bias: bias, options: options, op: "CONV_2D")
    output.shape = shape.outputShape
    // Both routes copy a constant filter (GEMM panels or the depthwise order).
    context.releaseAfterCopying(filter)
    var scratch = ScratchLayout()
    if let negativeSlopes {
      guard negativeSlopes.isConstant, negativeSlopes.type == .float32,
        negativeSlopes.elementCount == shape.outputChannels, !(shape.groups > 1 && shape.groupInputChannels == 1)
      else { throw KernelError.invalid("CONV_2D cannot apply the folded PRELU's α \(negativeSlopes.shape)") }
    }
    if shape.groups > 1 && shape.groupInputChannels == 1 {
      implicit = nil
      prepareDepthwise(shape, scratch: &scratch)
      context.requestScratch(bytes: scratch.byteCount)
      return
    }
    depthwise = nil
    depthwiseFilter = nil
    depthwisePlan = nil
    let plan = FloatConvolution.plan(shape, threadCount: context.threadCount)
    try weights.prepare(
      filter, count: shape.groups, sourceStride: FloatConvolution.filterGroupStride(shape),
      layout: FloatConvolution.filterLayout(shape), depth: shape.gemmDepth, columns: shape.groupOutputChannels,
      scratch: &scratch)
    paddedBias.prepare(bias, groups: shape.groups, columns: shape.groupOutputChannels, scratch: &scratch)
    paddedNegativeSlopes.prepare(negativeSlopes, groups: shape.groups, columns: shape.groupOutputChannels, scratch: &scratch)
    gemmScratchOffset = scratch.reserve(bytes: FloatConvolution.scratchBytes(shape, threadCount: context.threadCount))
    implicit = shape.readsInputInPlace || !ImplicitConvolution.outrunsIm2col(shape) ? nil : ImplicitConvolution(shape)
    if let implicit {
      implicitScratchOffset = scratch.reserve(bytes: implicit.workerScratchBytes * max(1, context.threadCount))
    }
    // The generated kernels the route will run, mapped with the other nodes' at the end of allocateTensors().
    if let generated = GeneratedFloatKernels.current {
      let slopes = negativeSlopes != nil
      if let implicit {
        implicit.reserveKernels(on: generated, appliesNegativeSlopes: slopes)
      } else {
        generated.reserve(for: plan, appliesNegativeSlopes: slopes)
      }
    }
    context.requestScratch(bytes: scratch.byteCount)
    self.shape = shape
    self.plan = plan
  }

  func eval(_ context: EvalContext) throws {
    guard output.elementCount > 0 else { return }
    if let depthwise {
      try evalDepthwise(depthwise, context)
      return
    }
    guard let shape, let plan, let scratch = context.scratch else { throw KernelError.invalid("CONV_2D was not prepared") }
    // Read here, on the thread that runs the node: the switch is task-local.
    let generated = GeneratedFloatKernels.current
    let packedFilter = try weights.pointer(filter, scratch: scratch)
    let biasPointer = paddedBias.pointer(bias, scratch: scratch)
    let slopesPointer = paddedNegativeSlopes.pointer(negativeSlopes, scratch: scratch)
    if let implicit, let generated, implicit.canRun(on: generated, appliesNegativeSlopes: slopesPointer != nil) {
      implicit.run(
        kernels: generated, input: input.pointer(as: Float.self), filter: packedFilter, bias: biasPointer,
        activation: activation, negativeSlopes: slopesPointer, output: output.pointer(as: Float.self),
        threadCount: context.threadCount, scratch: scratch + implicitScratchOffset)
      return
    }
    FloatConvolution.run(
      shape, plan: plan, input: input.pointer(as: Float.self), filter: packedFilter, bias: biasPointer,
      activation: activation, negativeSlopes: slopesPointer, output: output.pointer(as: Float.self),
      threadCount: context.threadCount, scratch: scratch + gemmScratchOffset, generatedKernels: generated)
  }

  /// Plans the depthwise route: the filter `[out, h, w, 1]` reordered to `[h, w, out]` (now when
  /// it is constant, else into scratch at every eval) and the depthwise kernel's scratch.
  private func prepareDepthwise(_ shape: ConvolutionShape, scratch: inout ScratchLayout) {
    let depthwise = DepthwiseShape(
      batch: shape.batch, inputChannels: shape.inputChannels, multiplier: shape.groupOutputChannels,
      height: shape.height, width: shape.width)
    let count = shape.height.filterSize * shape.width.filterSize * shape.outputChannels
    if filter.isConstant, let data = filter.data {
      depthwiseFilter = CacheLineValues(count: count) { values in
        Self.reorderForDepthwise(UnsafePointer(data.assumingMemoryBound(to: Float.self)), shape, into: values)
      }
      depthwiseFilterScratchOffset = nil
    } else {
      depthwiseFilter = nil
      depthwiseFilterScratchOffset = scratch.reserve(floats: count)
    }
    depthwiseScratchOffset = scratch.reserve(bytes: FloatDepthwiseConvolution.scratchBytes(depthwise))
    self.shape = shape
    self.plan = nil
    self.depthwise = depthwise
    depthwisePlan = FloatDepthwisePlan(depthwise)
  }

  /// Runs the depthwise route. `context.scratch` is nil when it needs none (a constant filter and
  /// one output channel per group).
  private func evalDepthwise(_ depthwise: DepthwiseShape, _ context: EvalContext) throws {
    guard let shape else { throw KernelError.invalid("CONV_2D was not prepared") }
    if let offset = depthwiseFilterScratchOffset {
      guard let scratch = context.scratch else { throw KernelError.invalid("CONV_2D was not prepared") }
      let reordered = (scratch + offset).assumingMemoryBound(to: Float.self)
      Self.reorderForDepthwise(filter.pointer(as: Float.self), shape, into: reordered)
      runDepthwise(depthwise, filter: reordered, context)
    } else if let depthwiseFilter {
      runDepthwise(depthwise, filter: depthwiseFilter.base, context)
    }
  }

  /// The depthwise kernel over the reordered `filter`.
  private func runDepthwise(_ depthwise: DepthwiseShape, filter: UnsafePointer<Float>, _ context: EvalContext) {
    FloatDepthwiseConvolution.run(
      depthwise, input: input.pointer(as: Float.self), filter: filter,
      bias: bias.map { UnsafePointer($0.pointer(as: Float.self)) }, activation: activation,
      output: output.pointer(as: Float.self), threadCount: context.threadCount,
      scratch: context.scratch.map { $0 + depthwiseScratchOffset }, plan: depthwisePlan)
  }

  /// Copies a filter `[out, h, w, 1]` into the depthwise layout `[h, w, out]`.
  private static func reorderForDepthwise(
    _ filter: UnsafePointer<Float>, _ shape: ConvolutionShape, into destination: UnsafeMutablePointer<Float>
  ) {
    let taps = shape.height.filterSize * shape.width.filterSize
    let channels = shape.outputChannels
    for channel in 0..<channels {
      for tap in 0..<taps { destination[tap * channels + channel] = filter[channel * taps + tap] }
    }
  }
}

