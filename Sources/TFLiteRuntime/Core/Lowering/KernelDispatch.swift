// The one place that turns an operator into a kernel. `KernelDispatch.factory(for:)` switches on
// the typed operator; an operator with several kernels (float, integer, hybrid) picks one from
// the representation of its operands (`OperandArithmetic`), as TFLite Micro's `Eval` switches on
// the input type. The chosen kernel then checks the rest of the node and explains what it refuses.
// Generic kernel classes are built through factories generic over their innermost type (see
// "Generic kernels"), which keeps the Swift runtime's conformance scans out of model loading.

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

  /// Builds `type` for every node (a kernel class that is not generic; see "Generic kernels" below
  /// for the others).
  private static func kernel<K: Kernel>(_ type: K.Type) -> KernelFactory { { try K(node: $0) } }

  /// The integer kernel for quantized operands, else the general one.
  private static func byArithmetic(quantized: @escaping KernelFactory, plain: @escaping KernelFactory) -> KernelFactory {
    { node in
      switch OperandArithmetic(activation: node.optionalInput(0), output: node.outputs.first) {
      case .quantized: try quantized(node)
      case .hybrid, .plain: try plain(node)
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

  // MARK: Generic kernels
  //
  // A generic kernel class such as `UnaryKernel<FloatFunctionDefinition<Logistic>>`, written out
  // in a concrete type, is instantiated by the Swift runtime from its mangled name the first time
  // it is built, and every generic requirement on the way (`FloatFunctionDefinition<Logistic>:
  // UnaryKernelDefinition`, `Logistic: FloatFunctionKind`) is then looked up by a scan of every
  // protocol conformance record in the process: about 250 k instructions each, paid while the
  // first model that uses the kernel loads. The factories below are generic over the innermost
  // type only and are never specialized, so the compiler builds the kernel type from its
  // metadata accessors with the conformances it already knows, and nothing is looked up. Only the
  // kernel's construction runs unspecialized; `prepare` and `eval` are reached through the
  // `Kernel` witness table as before.

  /// `UnaryKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func unary<D: UnaryKernelDefinition>(_: D.Type) -> KernelFactory { { try UnaryKernel<D>(node: $0) } }
  /// `BinaryKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func binary<D: BinaryKernelDefinition>(_: D.Type) -> KernelFactory {
    { try BinaryKernel<D>(node: $0) }
  }
  /// `IntegerUnaryKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerUnary<D: IntegerUnaryDefinition>(_: D.Type) -> KernelFactory {
    { try IntegerUnaryKernel<D>(node: $0) }
  }
  /// `IntegerBinaryKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerBinary<D: IntegerBinaryDefinition>(_: D.Type) -> KernelFactory {
    { try IntegerBinaryKernel<D>(node: $0) }
  }
  /// `LastAxisKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func lastAxis<D: LastAxisKernelDefinition>(_: D.Type) -> KernelFactory {
    { try LastAxisKernel<D>(node: $0) }
  }
  /// `ReductionKernel<Definition>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func reduction<D: ReductionDefinition>(_: D.Type) -> KernelFactory {
    { try ReductionKernel<D>(node: $0) }
  }
  /// `IntegerReductionKernel<Operator>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerReduction<O: IntegerReductionOperator>(_: O.Type) -> KernelFactory {
    { try IntegerReductionKernel<O>(node: $0) }
  }
  /// `SelectKernel<Variant>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func select<V: SelectVariant>(_: V.Type) -> KernelFactory { { try SelectKernel<V>(node: $0) } }
  /// `ArgumentExtremumKernel<Variant>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func argumentExtremum<V: ArgumentExtremumVariant>(_: V.Type) -> KernelFactory {
    { try ArgumentExtremumKernel<V>(node: $0) }
  }
  /// `UnsortedSegmentKernel<Reduction>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func unsortedSegment<R: SegmentReduction>(_: R.Type) -> KernelFactory {
    { try UnsortedSegmentKernel<R>(node: $0) }
  }

  /// `UnaryKernel<FloatFunctionDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func floatFunction<K: FloatFunctionKind>(_: K.Type) -> KernelFactory {
    unary(FloatFunctionDefinition<K>.self)
  }
  /// `UnaryKernel<ArithmeticUnaryDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func arithmeticUnary<K: ArithmeticUnaryKind>(_: K.Type) -> KernelFactory {
    unary(ArithmeticUnaryDefinition<K>.self)
  }
  /// `UnaryKernel<ClampDefinition<Bounds>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func clamp<B: ClampBounds>(_: B.Type) -> KernelFactory { unary(ClampDefinition<B>.self) }
  /// `BinaryKernel<ArithmeticDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func arithmetic<K: ArithmeticKind>(_: K.Type) -> KernelFactory { binary(ArithmeticDefinition<K>.self) }
  /// `BinaryKernel<ComparisonDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func comparison<K: ComparisonKind>(_: K.Type) -> KernelFactory { binary(ComparisonDefinition<K>.self) }
  /// `BinaryKernel<BitwiseDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func bitwise<K: BitwiseKind>(_: K.Type) -> KernelFactory { binary(BitwiseDefinition<K>.self) }
  /// `BinaryKernel<LogicalDefinition<Operation>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func logical<O: LogicalOperation>(_: O.Type) -> KernelFactory { binary(LogicalDefinition<O>.self) }
  /// `IntegerUnaryKernel<IntegerReluDefinition<Bounds>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerRelu<B: ReluBounds>(_: B.Type) -> KernelFactory {
    integerUnary(IntegerReluDefinition<B>.self)
  }
  /// `IntegerUnaryKernel<IntegerSigmoidDefinition<Curve>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerSigmoid<C: SigmoidCurve>(_: C.Type) -> KernelFactory {
    integerUnary(IntegerSigmoidDefinition<C>.self)
  }
  /// `IntegerUnaryKernel<IntegerTabulatedUnaryDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerTabulated<K: TabulatedUnaryKind>(_: K.Type) -> KernelFactory {
    integerUnary(IntegerTabulatedUnaryDefinition<K>.self)
  }
  /// `IntegerBinaryKernel<IntegerAddSubtractDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerAddSubtract<K: AddSubtractKind>(_: K.Type) -> KernelFactory {
    integerBinary(IntegerAddSubtractDefinition<K>.self)
  }
  /// `IntegerBinaryKernel<IntegerComparisonDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerComparison<K: QuantizedComparisonKind>(_: K.Type) -> KernelFactory {
    integerBinary(IntegerComparisonDefinition<K>.self)
  }
  /// `IntegerBinaryKernel<IntegerExtremumDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func integerExtremum<K: QuantizedExtremumKind>(_: K.Type) -> KernelFactory {
    integerBinary(IntegerExtremumDefinition<K>.self)
  }
  /// `ReductionKernel<ArithmeticReductionDefinition<Kind>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func arithmeticReduction<K: ArithmeticReductionKind>(_: K.Type) -> KernelFactory {
    reduction(ArithmeticReductionDefinition<K>.self)
  }
  /// `ReductionKernel<BooleanReductionDefinition<Operation>>`.
  @_semantics("optimize.sil.specialize.generic.never")
  private static func booleanReduction<O: BooleanReduction>(_: O.Type) -> KernelFactory {
    reduction(BooleanReductionDefinition<O>.self)
  }

  /// The kernel factory of builtin `code`.
  private static func builtinFactory(_ code: BuiltinOperator) -> KernelFactory? {
    switch code {
    case .abs:
      byArithmetic(
        quantized: integerUnary(IntegerAbsoluteValueDefinition.self),
        plain: arithmeticUnary(AbsoluteValue.self))
    case .add:
      byArithmetic(quantized: integerAddSubtract(QuantizedAddition.self), plain: arithmetic(Addition.self))
    case .addN: kernel(AddManyKernel.self)
    case .argMax: argumentExtremum(ArgumentMaximum.self)
    case .argMin: argumentExtremum(ArgumentMinimum.self)
    case .assignVariable: kernel(AssignVariableKernel.self)
    case .atan2: binary(ArcTangentDefinition.self)
    case .averagePool2d: byArithmetic(
      quantized: kernel(IntegerAveragePool2DKernel.self),
      plain: kernel(AveragePool2DKernel.self))
    case .batchMatmul:
      weighted(
        quantized: IntegerBatchMatMulKernel.self,
        hybrid: HybridBatchMatMulKernel.self,
        float: BatchMatMulKernel.self)
    case .batchToSpaceNd: kernel(BlockBatchKernel.self)
    case .bidirectionalSequenceLstm: kernel(BidirectionalSequenceLSTMKernel.self)
    case .bidirectionalSequenceRnn: kernel(BidirectionalSequenceRNNKernel.self)
    case .bitcast: kernel(BitcastKernel.self)
    case .bitwiseXor: bitwise(ExclusiveOr.self)
    case .broadcastArgs: kernel(BroadcastArgsKernel.self)
    case .broadcastTo: kernel(ConstantViewKernel.self)
    case .bucketize: kernel(BucketizeKernel.self)
    case .callOnce: kernel(CallOnceKernel.self)
    case .cast: kernel(CastKernel.self)
    case .ceil: floatFunction(Ceiling.self)
    case .complexAbs: kernel(ComplexPartKernel.self)
    case .concatenation: concatenation
    case .conv2d:
      weighted(quantized: IntegerConv2DKernel.self, hybrid: HybridConv2DKernel.self, float: Conv2DKernel.self)
    case .conv3d: kernel(Conv3DKernel.self)
    case .conv3dTranspose: kernel(Conv3DTransposeKernel.self)
    case .cos: floatFunction(Cosine.self)
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
      byArithmetic(quantized: integerBinary(IntegerDivideDefinition.self), plain: arithmetic(Division.self))
    case .dynamicUpdateSlice: kernel(DynamicUpdateSliceKernel.self)
    case .elu:
      byArithmetic(
        quantized: integerUnary(IntegerExponentialLinearUnitDefinition.self),
        plain: floatFunction(ExponentialLinearUnit.self))
    case .embeddingLookup: kernel(EmbeddingLookupKernel.self)
    case .embeddingLookupSparse: kernel(EmbeddingLookupSparseKernel.self)
    case .equal:
      byArithmetic(quantized: integerComparison(QuantizedEqual.self), plain: comparison(EqualComparison.self))
    case .exp:
      byArithmetic(quantized: integerTabulated(QuantizedExponential.self), plain: floatFunction(Exponential.self))
    case .expandDims: kernel(ExpandDimsKernel.self)
    case .fakeQuant: kernel(FakeQuantKernel.self)
    case .fill: kernel(FillKernel.self)
    case .floor: floatFunction(Floor.self)
    case .floorDiv: arithmetic(FloorDivision.self)
    case .floorMod: arithmetic(FloorModulo.self)
    case .fullyConnected:
      weighted(
        quantized: IntegerFullyConnectedKernel.self,
        hybrid: HybridFullyConnectedKernel.self,
        float: FullyConnectedKernel.self)
    case .gather: kernel(GatherKernel.self)
    case .gatherNd: kernel(GatherKernel.self)
    case .gelu:
      byArithmetic(quantized: integerUnary(IntegerGeluDefinition.self), plain: unary(GeluDefinition.self))
    case .greater:
      byArithmetic(quantized: integerComparison(QuantizedGreater.self), plain: comparison(GreaterComparison.self))
    case .greaterEqual:
      byArithmetic(
        quantized: integerComparison(QuantizedGreaterEqual.self),
        plain: comparison(GreaterEqualComparison.self))
    case .hardSwish:
      byArithmetic(quantized: integerUnary(IntegerHardSwishDefinition.self), plain: floatFunction(HardSwish.self))
    case .`if`: kernel(IfKernel.self)
    case .imag: kernel(ComplexPartKernel.self)
    case .l2Normalization:
      byArithmetic(
        quantized: kernel(IntegerL2NormalizationKernel.self),
        plain: lastAxis(L2NormalizationDefinition.self))
    case .l2Pool2d: kernel(L2Pool2DKernel.self)
    case .leakyRelu:
      byArithmetic(quantized: integerUnary(IntegerLeakyReluDefinition.self), plain: unary(LeakyReluDefinition.self))
    case .less:
      byArithmetic(quantized: integerComparison(QuantizedLess.self), plain: comparison(LessComparison.self))
    case .lessEqual:
      byArithmetic(quantized: integerComparison(QuantizedLessEqual.self), plain: comparison(LessEqualComparison.self))
    case .localResponseNormalization: lastAxis(LocalResponseNormalizationDefinition.self)
    case .log:
      byArithmetic(quantized: integerTabulated(QuantizedLogarithm.self), plain: floatFunction(NaturalLogarithm.self))
    case .logicalAnd: logical(LogicalAndOperation.self)
    case .logicalNot: unary(LogicalNotDefinition.self)
    case .logicalOr: logical(LogicalOrOperation.self)
    case .logistic:
      byArithmetic(quantized: integerSigmoid(QuantizedLogistic.self), plain: kernel(LogisticKernel.self))
    case .logSoftmax:
      byArithmetic(quantized: kernel(IntegerLogSoftmaxKernel.self), plain: lastAxis(LogSoftmaxDefinition.self))
    case .lstm: kernel(LSTMKernel.self)
    case .matrixDiag: kernel(MatrixDiagKernel.self)
    case .matrixSetDiag: kernel(MatrixSetDiagKernel.self)
    case .maximum:
      byArithmetic(quantized: integerExtremum(QuantizedMaximum.self), plain: arithmetic(Maximum.self))
    case .maxPool2d: byArithmetic(quantized: kernel(IntegerMaxPool2DKernel.self), plain: kernel(MaxPool2DKernel.self))
    case .mean:
      byArithmetic(quantized: integerReduction(QuantizedMean.self), plain: reduction(MeanDefinition.self))
    case .minimum:
      byArithmetic(quantized: integerExtremum(QuantizedMinimum.self), plain: arithmetic(Minimum.self))
    case .mirrorPad: kernel(MirrorPadKernel.self)
    case .mul:
      byArithmetic(quantized: integerBinary(IntegerMultiplyDefinition.self), plain: arithmetic(Multiplication.self))
    case .neg: arithmeticUnary(Negation.self)
    case .nonMaxSuppressionV4: kernel(NonMaxSuppressionKernel.self)
    case .nonMaxSuppressionV5: kernel(NonMaxSuppressionKernel.self)
    case .notEqual:
      byArithmetic(quantized: integerComparison(QuantizedNotEqual.self), plain: comparison(NotEqualComparison.self))
    case .oneHot: kernel(OneHotKernel.self)
    case .pack: kernel(PackKernel.self)
    case .pad: kernel(PadKernel.self)
    case .padv2: kernel(PadKernel.self)
    case .pow: arithmetic(Power.self)
    case .prelu:
      byArithmetic(quantized: integerBinary(IntegerPreluDefinition.self), plain: kernel(PreluKernel.self))
    case .quantize: kernel(QuantizeKernel.self)
    case .range: kernel(RangeKernel.self)
    case .rank: kernel(RankKernel.self)
    case .readVariable: kernel(ReadVariableKernel.self)
    case .real: kernel(ComplexPartKernel.self)
    case .reduceAll: booleanReduction(AllReduction.self)
    case .reduceAny: booleanReduction(AnyReduction.self)
    case .reduceMax:
      byArithmetic(
        quantized: integerReduction(QuantizedReduceMaximum.self),
        plain: arithmeticReduction(MaximumKind.self))
    case .reduceMin:
      byArithmetic(
        quantized: integerReduction(QuantizedReduceMinimum.self),
        plain: arithmeticReduction(MinimumKind.self))
    case .reduceProd:
      byArithmetic(
        quantized: integerReduction(QuantizedReduceProduct.self),
        plain: arithmeticReduction(ProductKind.self))
    case .relu:
      byArithmetic(quantized: integerRelu(QuantizedRelu.self), plain: clamp(Relu.self))
    case .relu6:
      byArithmetic(quantized: integerRelu(QuantizedRelu6.self), plain: clamp(Relu6.self))
    case .relu0To1:
      byArithmetic(quantized: integerRelu(QuantizedReluZeroToOne.self), plain: clamp(ReluZeroToOne.self))
    case .reluN1To1:
      byArithmetic(quantized: integerRelu(QuantizedReluMinusOneToOne.self), plain: clamp(ReluMinusOneToOne.self))
    case .reshape: kernel(ReshapeKernel.self)
    case .resizeBilinear: byArithmetic(
      quantized: kernel(IntegerResizeBilinearKernel.self),
      plain: kernel(ResizeKernel.self))
    case .resizeNearestNeighbor: kernel(ResizeKernel.self)
    case .reverseSequence: kernel(ReverseSequenceKernel.self)
    case .reverseV2: kernel(ReverseKernel.self)
    case .rfft2d: kernel(RealFourierTransform2DKernel.self)
    case .rightShift: bitwise(RightShift.self)
    case .rnn: kernel(RNNKernel.self)
    case .round: floatFunction(RoundHalfToEven.self)
    case .rsqrt:
      byArithmetic(
        quantized: integerUnary(IntegerReciprocalSquareRootDefinition.self),
        plain: floatFunction(ReciprocalSquareRoot.self))
    case .scatterNd: kernel(ScatterNDKernel.self)
    case .segmentSum: kernel(SegmentSumKernel.self)
    case .select: select(SelectVersion1.self)
    case .selectV2: select(SelectVersion2.self)
    case .shape: kernel(ShapeKernel.self)
    case .sign: arithmeticUnary(Sign.self)
    case .sin: floatFunction(Sine.self)
    case .slice: kernel(ConstantViewKernel.self)
    case .softmax: byArithmetic(quantized: kernel(IntegerSoftmaxKernel.self), plain: lastAxis(SoftmaxDefinition.self))
    case .spaceToBatchNd: kernel(BlockBatchKernel.self)
    case .spaceToDepth: kernel(BlockRearrangeKernel.self)
    case .sparseToDense: kernel(SparseToDenseKernel.self)
    case .split: kernel(SplitKernel.self)
    case .splitV: kernel(SplitVKernel.self)
    case .sqrt:
      byArithmetic(quantized: integerUnary(IntegerSquareRootDefinition.self), plain: floatFunction(SquareRoot.self))
    case .square: floatFunction(Square.self)
    case .squaredDifference:
      byArithmetic(
        quantized: integerBinary(IntegerSquaredDifferenceDefinition.self),
        plain: arithmetic(SquaredDifference.self))
    case .squeeze: kernel(SqueezeKernel.self)
    case .stridedSlice: kernel(StridedSliceKernel.self)
    case .sub:
      byArithmetic(quantized: integerAddSubtract(QuantizedSubtraction.self), plain: arithmetic(Subtraction.self))
    case .sum:
      byArithmetic(quantized: integerReduction(QuantizedSum.self), plain: arithmeticReduction(SumKind.self))
    case .svdf: kernel(SVDFKernel.self)
    case .tanh:
      byArithmetic(quantized: integerSigmoid(QuantizedTanh.self), plain: floatFunction(HyperbolicTangent.self))
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
    case .unsortedSegmentMax: unsortedSegment(SegmentMaximumReduction.self)
    case .unsortedSegmentMin: unsortedSegment(SegmentMinimumReduction.self)
    case .unsortedSegmentProd: unsortedSegment(SegmentProductReduction.self)
    case .unsortedSegmentSum: unsortedSegment(SegmentSumReduction.self)
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
