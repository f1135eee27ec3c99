// The operator of a node, resolved once from the model's operator code: a schema builtin, one of
// the custom operators this runtime implements, or a custom code it does not know. Kernels are
// chosen by switching on it (`KernelDispatch`); its name is only for messages.

import TFLiteFormat

/// The custom operators this runtime has kernels for, by their custom code.
enum CustomOperator: String, CaseIterable, Sendable {
  /// TFLite's SSD box decoding and non-max suppression.
  case detectionPostProcess = "TFLite_Detection_PostProcess"
  /// MediaPipe's TRANSPOSE_CONV with a bias.
  case transposeConvolutionBias = "Convolution2DTransposeBias"
  /// MediaPipe's landmark transformation.
  case transformLandmarks = "TransformLandmarks"
  /// MediaPipe's bilinear crop of a tensor by a matrix.
  case transformTensorBilinear = "TransformTensorBilinear"
  /// MediaPipe's matrix from two landmarks.
  case landmarksToTransformMatrix = "Landmarks2TransformMatrix"
  /// MediaPipe's MAX_POOL_2D that also returns the argmax.
  case maxPoolingWithArgmax = "MaxPoolingWithArgmax2D"
  /// MediaPipe's inverse of `maxPoolingWithArgmax`.
  case maxUnpooling = "MaxUnpooling2D"
}

/// The operator of one node.
enum OperatorKind: Hashable, Sendable, CustomStringConvertible {
  /// A builtin operator of the schema.
  case builtin(BuiltinOperator)
  /// A custom operator this runtime implements.
  case custom(CustomOperator)
  /// A custom operator this runtime does not know, by its custom code.
  case unknownCustom(String)

  /// Resolves an operator code of the model: the custom code for CUSTOM, else the builtin.
  init(builtinCode: BuiltinOperator, customCode: String?) {
    guard builtinCode == .custom else {
      self = .builtin(builtinCode)
      return
    }
    let code = customCode ?? ""
    self = CustomOperator(rawValue: code).map(Self.custom) ?? .unknownCustom(code)
  }

  /// The schema name of a builtin (`CONV_2D`) or the custom code, for messages.
  var description: String {
    switch self {
    case .builtin(let code): code.name
    case .custom(let custom): custom.rawValue
    case .unknownCustom(let code): code
    }
  }
}
