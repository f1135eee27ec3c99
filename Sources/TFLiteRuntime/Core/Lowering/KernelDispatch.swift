// The one place that turns an operator into a kernel. `KernelDispatch.factory(for:)` switches on
// the typed operator; an operator with several kernels (float, integer, hybrid) picks one from
// the representation of its operands (`OperandArithmetic`), as TFLite Micro's `Eval` switches on
// the input type. The chosen kernel then checks the rest of the node and explains what it refuses.

import TFLiteFormat
import TFLiteLinearAlgebra

/// Builds a kernel for a node.
typealias KernelFactory = (Node) throws -> any Kernel

/// How a node's operands hold their numbers, which picks among an operator's kernels.
enum OperandArithmetic: Equatable {
  /// Quantized integers: INT8, UINT8 or INT16 activations with quantization parameters on the
  /// activation or the output. The integer kernels run these.
  case quantized
  /// Float activations with integer weights (dynamic-range quantization): the hybrid kernels.
  case hybrid
  /// Anything else (float, or integers without quantization): the general kernels.
  case plain

  /// Classifies the node's `activation` input (and its first output), with `weights` for the
  /// operators that have them.
  init(activation: RuntimeTensor?, output: RuntimeTensor?, weights: RuntimeTensor? = nil) {
    guard let activation else {
      self = .plain
      return
    }
    switch activation.type {
    case .int8, .uint8, .int16:
      self = activation.quantization != nil || output?.quantization != nil ? .quantized : .plain
    case .float32:
      let integerWeights: [ElementType] = [.int8, .int4, .uint8]
      self = weights.map { integerWeights.contains($0.type) } == true ? .hybrid : .plain
    default:
      self = .plain
    }
  }
}

/// Which kernels a runner builds (``RunnerOptions/kernels``).
public enum KernelSet: Sendable, Hashable {
  /// The optimized kernels (packed GEMM, SIMD, threads).
  case optimized
  /// The plain reference kernels where the runtime has one for the operator, else the optimized one.
  case reference
}

/// Chooses and builds the kernel of every node.
enum KernelDispatch {
  /// Builds the kernel of `set` for `node`; throws ``KernelError/unsupported(_:)`` when the runtime
  /// has no kernel for its operator, or the kernel's reason when it refuses the node.
  static func makeKernel(for node: Node, set: KernelSet = .optimized) throws -> any Kernel {
    if set == .reference, let reference = referenceFactory(for: node.op) { return try reference(node) }
    guard let factory = factory(for: node.op) else { throw KernelError.unsupported("no kernel for this operator") }
    return try factory(node)
  }

  /// True when the runtime has a kernel for `op`.
  static func hasKernel(for op: OperatorKind) -> Bool { factory(for: op) != nil }

  /// The reference kernel of `op`, where the runtime has one (`RunnerOptions(kernels: .reference)`):
  /// ``ReferenceAdapterKernel`` for the operands it covers, else the optimized kernel.
  private static func referenceFactory(for op: OperatorKind) -> KernelFactory? {
    guard case .builtin(let code) = op, ReferenceAdapterKernel.operators.contains(code), let optimized = factory(for: op)
    else { return nil }
    return { node in ReferenceAdapterKernel.covers(node) ? try ReferenceAdapterKernel(node: node) : try optimized(node) }
  }

  /// The optimized kernel factory of `op`, or nil when the runtime has none.
  static func factory(for op: OperatorKind) -> KernelFactory? {
    switch op {
    case .builtin(let code): builtinFactory(code)
    case .custom(let custom): customFactory(custom)
    case .unknownCustom: nil
    }
  }

  /// Builds `type` for every node.
  private static func kernel<K: Kernel>(_ type: K.Type) -> KernelFactory { { try K(node: $0) } }

  /// The integer kernel for quantized operands, else the general one.
  private static func byArithmetic<Quantized: Kernel, Plain: Kernel>(
    quantized: Quantized.Type, plain: Plain.Type
  ) -> KernelFactory {
    { node in
      switch OperandArithmetic(activation: node.optionalInput(0), output: node.outputs.first) {
      case .quantized: try Quantized(node: node)
      case .hybrid, .plain: try Plain(node: node)
      }
    }
  }

  /// The integer, hybrid or float kernel of an operator whose input 1 holds weights, from the
  /// types of the activation (input `activation`) and the weights.
  private static func weighted<Quantized: Kernel, Hybrid: Kernel, Float: Kernel>(
    activation: Int = 0, quantized: Quantized.Type, hybrid: Hybrid.Type, float: Float.Type
  ) -> KernelFactory {
    { node in
      let arithmetic = OperandArithmetic(
        activation: node.optionalInput(activation), output: node.outputs.first, weights: node.optionalInput(1))
      return switch arithmetic {
      case .quantized: try Quantized(node: node)
      case .hybrid: try Hybrid(node: node)
      case .plain: try Float(node: node)
      }
    }
  }

  /// CONCATENATION: quantized inputs whose parameters differ from the output's are requantized;
  /// every other concatenation only moves bytes.
  private static func concatenation(_ node: Node) throws -> any Kernel {
    let output = node.outputs.first
    let arithmetic = OperandArithmetic(activation: node.optionalInput(0), output: output)
    let requantizes = node.inputs.contains { $0?.quantization != output?.quantization }
    return arithmetic == .quantized && requantizes
      ? try RequantizingConcatenationKernel(node: node) : try ConcatenationKernel(node: node)
  }

  /// The kernel factory of builtin `code`.
  private static func builtinFactory(_ code: BuiltinOperator) -> KernelFactory? {
    switch code {
    case .abs:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerAbsoluteValueDefinition>.self,
        plain: UnaryKernel<ArithmeticUnaryDefinition<AbsoluteValue>>.self)
    case .add:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerAddSubtractDefinition<QuantizedAddition>>.self,
        plain: BinaryKernel<ArithmeticDefinition<Addition>>.self)
    case .addN: kernel(AddManyKernel.self)
    case .argMax: kernel(ArgumentExtremumKernel<ArgumentMaximum>.self)
    case .argMin: kernel(ArgumentExtremumKernel<ArgumentMinimum>.self)
    case .assignVariable: kernel(AssignVariableKernel.self)
    case .atan2: kernel(BinaryKernel<ArcTangentDefinition>.self)
    case .averagePool2d: byArithmetic(quantized: IntegerAveragePool2DKernel.self, plain: AveragePool2DKernel.self)
    case .batchMatmul:
      weighted(
        quantized: IntegerBatchMatMulKernel.self,
        hybrid: HybridBatchMatMulKernel.self,
        float: BatchMatMulKernel.self)
    case .batchToSpaceNd: kernel(BlockBatchKernel.self)
    case .bidirectionalSequenceLstm: kernel(BidirectionalSequenceLSTMKernel.self)
    case .bidirectionalSequenceRnn: kernel(BidirectionalSequenceRNNKernel.self)
    case .bitcast: kernel(BitcastKernel.self)
    case .bitwiseXor: kernel(BinaryKernel<BitwiseDefinition<ExclusiveOr>>.self)
    case .broadcastArgs: kernel(BroadcastArgsKernel.self)
    case .broadcastTo: kernel(ConstantViewKernel.self)
    case .bucketize: kernel(BucketizeKernel.self)
    case .callOnce: kernel(CallOnceKernel.self)
    case .cast: kernel(CastKernel.self)
    case .ceil: kernel(UnaryKernel<FloatFunctionDefinition<Ceiling>>.self)
    case .complexAbs: kernel(ComplexPartKernel.self)
    case .concatenation: concatenation
    case .conv2d:
      weighted(quantized: IntegerConv2DKernel.self, hybrid: HybridConv2DKernel.self, float: Conv2DKernel.self)
    case .conv3d: kernel(Conv3DKernel.self)
    case .conv3dTranspose: kernel(Conv3DTransposeKernel.self)
    case .cos: kernel(UnaryKernel<FloatFunctionDefinition<Cosine>>.self)
    case .cumsum: kernel(CumulativeSumKernel.self)
    case .densify: kernel(DensifyKernel.self)
    case .depthwiseConv2d:
      weighted(
        quantized: IntegerDepthwiseConv2DKernel.self,
        hybrid: HybridDepthwiseConv2DKernel.self,
        float: DepthwiseConv2DKernel.self)
    case .depthToSpace: kernel(BlockRearrangeKernel.self)
    case .dequantize: kernel(DequantizeKernel.self)
    case .dilate: kernel(DilateKernel.self)
    case .div:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerDivideDefinition>.self,
        plain: BinaryKernel<ArithmeticDefinition<Division>>.self)
    case .dynamicUpdateSlice: kernel(DynamicUpdateSliceKernel.self)
    case .elu:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerExponentialLinearUnitDefinition>.self,
        plain: UnaryKernel<FloatFunctionDefinition<ExponentialLinearUnit>>.self)
    case .embeddingLookup: kernel(EmbeddingLookupKernel.self)
    case .embeddingLookupSparse: kernel(EmbeddingLookupSparseKernel.self)
    case .equal:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedEqual>>.self,
        plain: BinaryKernel<ComparisonDefinition<EqualComparison>>.self)
    case .exp:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerTabulatedUnaryDefinition<QuantizedExponential>>.self,
        plain: UnaryKernel<FloatFunctionDefinition<Exponential>>.self)
    case .expandDims: kernel(ExpandDimsKernel.self)
    case .fakeQuant: kernel(FakeQuantKernel.self)
    case .fill: kernel(FillKernel.self)
    case .floor: kernel(UnaryKernel<FloatFunctionDefinition<Floor>>.self)
    case .floorDiv: kernel(BinaryKernel<ArithmeticDefinition<FloorDivision>>.self)
    case .floorMod: kernel(BinaryKernel<ArithmeticDefinition<FloorModulo>>.self)
    case .fullyConnected:
      weighted(
        quantized: IntegerFullyConnectedKernel.self,
        hybrid: HybridFullyConnectedKernel.self,
        float: FullyConnectedKernel.self)
    case .gather: kernel(GatherKernel.self)
    case .gatherNd: kernel(GatherKernel.self)
    case .gelu:
      byArithmetic(quantized: IntegerUnaryKernel<IntegerGeluDefinition>.self, plain: UnaryKernel<GeluDefinition>.self)
    case .greater:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedGreater>>.self,
        plain: BinaryKernel<ComparisonDefinition<GreaterComparison>>.self)
    case .greaterEqual:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedGreaterEqual>>.self,
        plain: BinaryKernel<ComparisonDefinition<GreaterEqualComparison>>.self)
    case .hardSwish:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerHardSwishDefinition>.self,
        plain: UnaryKernel<FloatFunctionDefinition<HardSwish>>.self)
    case .`if`: kernel(IfKernel.self)
    case .imag: kernel(ComplexPartKernel.self)
    case .l2Normalization:
      byArithmetic(quantized: IntegerL2NormalizationKernel.self, plain: LastAxisKernel<L2NormalizationDefinition>.self)
    case .l2Pool2d: kernel(L2Pool2DKernel.self)
    case .leakyRelu:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerLeakyReluDefinition>.self,
        plain: UnaryKernel<LeakyReluDefinition>.self)
    case .less:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedLess>>.self,
        plain: BinaryKernel<ComparisonDefinition<LessComparison>>.self)
    case .lessEqual:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedLessEqual>>.self,
        plain: BinaryKernel<ComparisonDefinition<LessEqualComparison>>.self)
    case .localResponseNormalization: kernel(LastAxisKernel<LocalResponseNormalizationDefinition>.self)
    case .log:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerTabulatedUnaryDefinition<QuantizedLogarithm>>.self,
        plain: UnaryKernel<FloatFunctionDefinition<NaturalLogarithm>>.self)
    case .logicalAnd: kernel(BinaryKernel<LogicalDefinition<LogicalAndOperation>>.self)
    case .logicalNot: kernel(UnaryKernel<LogicalNotDefinition>.self)
    case .logicalOr: kernel(BinaryKernel<LogicalDefinition<LogicalOrOperation>>.self)
    case .logistic:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerSigmoidDefinition<QuantizedLogistic>>.self, plain: LogisticKernel.self)
    case .logSoftmax:
      byArithmetic(quantized: IntegerLogSoftmaxKernel.self, plain: LastAxisKernel<LogSoftmaxDefinition>.self)
    case .lstm: kernel(LSTMKernel.self)
    case .matrixDiag: kernel(MatrixDiagKernel.self)
    case .matrixSetDiag: kernel(MatrixSetDiagKernel.self)
    case .maximum:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerExtremumDefinition<QuantizedMaximum>>.self,
        plain: BinaryKernel<ArithmeticDefinition<Maximum>>.self)
    case .maxPool2d: byArithmetic(quantized: IntegerMaxPool2DKernel.self, plain: MaxPool2DKernel.self)
    case .mean:
      byArithmetic(quantized: IntegerReductionKernel<QuantizedMean>.self, plain: ReductionKernel<MeanDefinition>.self)
    case .minimum:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerExtremumDefinition<QuantizedMinimum>>.self,
        plain: BinaryKernel<ArithmeticDefinition<Minimum>>.self)
    case .mirrorPad: kernel(MirrorPadKernel.self)
    case .mul:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerMultiplyDefinition>.self,
        plain: BinaryKernel<ArithmeticDefinition<Multiplication>>.self)
    case .neg: kernel(UnaryKernel<ArithmeticUnaryDefinition<Negation>>.self)
    case .nonMaxSuppressionV4: kernel(NonMaxSuppressionKernel.self)
    case .nonMaxSuppressionV5: kernel(NonMaxSuppressionKernel.self)
    case .notEqual:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerComparisonDefinition<QuantizedNotEqual>>.self,
        plain: BinaryKernel<ComparisonDefinition<NotEqualComparison>>.self)
    case .oneHot: kernel(OneHotKernel.self)
    case .pack: kernel(PackKernel.self)
    case .pad: kernel(PadKernel.self)
    case .padv2: kernel(PadKernel.self)
    case .pow: kernel(BinaryKernel<ArithmeticDefinition<Power>>.self)
    case .prelu:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerPreluDefinition>.self,
        plain: BinaryKernel<PreluDefinition>.self)
    case .quantize: kernel(QuantizeKernel.self)
    case .range: kernel(RangeKernel.self)
    case .rank: kernel(RankKernel.self)
    case .readVariable: kernel(ReadVariableKernel.self)
    case .real: kernel(ComplexPartKernel.self)
    case .reduceAll: kernel(ReductionKernel<BooleanReductionDefinition<AllReduction>>.self)
    case .reduceAny: kernel(ReductionKernel<BooleanReductionDefinition<AnyReduction>>.self)
    case .reduceMax:
      byArithmetic(
        quantized: IntegerReductionKernel<QuantizedReduceMaximum>.self,
        plain: ReductionKernel<ArithmeticReductionDefinition<MaximumKind>>.self)
    case .reduceMin:
      byArithmetic(
        quantized: IntegerReductionKernel<QuantizedReduceMinimum>.self,
        plain: ReductionKernel<ArithmeticReductionDefinition<MinimumKind>>.self)
    case .reduceProd:
      byArithmetic(
        quantized: IntegerReductionKernel<QuantizedReduceProduct>.self,
        plain: ReductionKernel<ArithmeticReductionDefinition<ProductKind>>.self)
    case .relu:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerReluDefinition<QuantizedRelu>>.self,
        plain: UnaryKernel<ClampDefinition<Relu>>.self)
    case .relu6:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerReluDefinition<QuantizedRelu6>>.self,
        plain: UnaryKernel<ClampDefinition<Relu6>>.self)
    case .relu0To1:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerReluDefinition<QuantizedReluZeroToOne>>.self,
        plain: UnaryKernel<ClampDefinition<ReluZeroToOne>>.self)
    case .reluN1To1:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerReluDefinition<QuantizedReluMinusOneToOne>>.self,
        plain: UnaryKernel<ClampDefinition<ReluMinusOneToOne>>.self)
    case .reshape: kernel(ReshapeKernel.self)
    case .resizeBilinear: byArithmetic(quantized: IntegerResizeBilinearKernel.self, plain: ResizeKernel.self)
    case .resizeNearestNeighbor: kernel(ResizeKernel.self)
    case .reverseSequence: kernel(ReverseSequenceKernel.self)
    case .reverseV2: kernel(ReverseKernel.self)
    case .rfft2d: kernel(RealFourierTransform2DKernel.self)
    case .rightShift: kernel(BinaryKernel<BitwiseDefinition<RightShift>>.self)
    case .rnn: kernel(RNNKernel.self)
    case .round: kernel(UnaryKernel<FloatFunctionDefinition<RoundHalfToEven>>.self)
    case .rsqrt:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerReciprocalSquareRootDefinition>.self,
        plain: UnaryKernel<FloatFunctionDefinition<ReciprocalSquareRoot>>.self)
    case .scatterNd: kernel(ScatterNDKernel.self)
    case .segmentSum: kernel(SegmentSumKernel.self)
    case .select: kernel(SelectKernel<SelectVersion1>.self)
    case .selectV2: kernel(SelectKernel<SelectVersion2>.self)
    case .shape: kernel(ShapeKernel.self)
    case .sign: kernel(UnaryKernel<ArithmeticUnaryDefinition<Sign>>.self)
    case .sin: kernel(UnaryKernel<FloatFunctionDefinition<Sine>>.self)
    case .slice: kernel(ConstantViewKernel.self)
    case .softmax: byArithmetic(quantized: IntegerSoftmaxKernel.self, plain: LastAxisKernel<SoftmaxDefinition>.self)
    case .spaceToBatchNd: kernel(BlockBatchKernel.self)
    case .spaceToDepth: kernel(BlockRearrangeKernel.self)
    case .sparseToDense: kernel(SparseToDenseKernel.self)
    case .split: kernel(SplitKernel.self)
    case .splitV: kernel(SplitVKernel.self)
    case .sqrt:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerSquareRootDefinition>.self,
        plain: UnaryKernel<FloatFunctionDefinition<SquareRoot>>.self)
    case .square: kernel(UnaryKernel<FloatFunctionDefinition<Square>>.self)
    case .squaredDifference:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerSquaredDifferenceDefinition>.self,
        plain: BinaryKernel<ArithmeticDefinition<SquaredDifference>>.self)
    case .squeeze: kernel(SqueezeKernel.self)
    case .stridedSlice: kernel(StridedSliceKernel.self)
    case .sub:
      byArithmetic(
        quantized: IntegerBinaryKernel<IntegerAddSubtractDefinition<QuantizedSubtraction>>.self,
        plain: BinaryKernel<ArithmeticDefinition<Subtraction>>.self)
    case .sum:
      byArithmetic(
        quantized: IntegerReductionKernel<QuantizedSum>.self,
        plain: ReductionKernel<ArithmeticReductionDefinition<SumKind>>.self)
    case .svdf: kernel(SVDFKernel.self)
    case .tanh:
      byArithmetic(
        quantized: IntegerUnaryKernel<IntegerSigmoidDefinition<QuantizedTanh>>.self,
        plain: UnaryKernel<FloatFunctionDefinition<HyperbolicTangent>>.self)
    case .tile: kernel(ConstantViewKernel.self)
    case .topkV2: kernel(TopKKernel.self)
    case .transpose: kernel(ConstantViewKernel.self)
    case .transposeConv:
      weighted(
        activation: 2,
        quantized: IntegerTransposeConvKernel.self,
        hybrid: HybridTransposeConvKernel.self,
        float: TransposeConvKernel.self)
    case .unidirectionalSequenceLstm: kernel(UnidirectionalSequenceLSTMKernel.self)
    case .unidirectionalSequenceRnn: kernel(UnidirectionalSequenceRNNKernel.self)
    case .unique: kernel(UniqueKernel.self)
    case .unpack: kernel(UnpackKernel.self)
    case .unsortedSegmentMax: kernel(UnsortedSegmentKernel<SegmentMaximumReduction>.self)
    case .unsortedSegmentMin: kernel(UnsortedSegmentKernel<SegmentMinimumReduction>.self)
    case .unsortedSegmentProd: kernel(UnsortedSegmentKernel<SegmentProductReduction>.self)
    case .unsortedSegmentSum: kernel(UnsortedSegmentKernel<SegmentSumReduction>.self)
    case .varHandle: kernel(VarHandleKernel.self)
    case .`where`: kernel(WhereKernel.self)
    case .`while`: kernel(WhileKernel.self)
    case .zerosLike: kernel(ZerosLikeKernel.self)
    default: nil
    }
  }

  /// The kernel factory of custom operator `custom`.
  private static func customFactory(_ custom: CustomOperator) -> KernelFactory {
    switch custom {
    case .transposeConvolutionBias: kernel(TransposeConvolutionBiasKernel.self)
    case .landmarksToTransformMatrix: kernel(LandmarksToTransformMatrixKernel.self)
    case .maxPoolingWithArgmax: kernel(MaxPoolingWithArgmaxKernel.self)
    case .maxUnpooling: kernel(MaxUnpoolingKernel.self)
    case .detectionPostProcess: kernel(DetectionPostProcessKernel.self)
    case .transformLandmarks: kernel(TransformLandmarksKernel.self)
    case .transformTensorBilinear: kernel(TransformTensorBilinearKernel.self)
    }
  }
}
