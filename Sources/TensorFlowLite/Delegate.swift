/// Stand-in for TensorFlow Lite's C delegate structure, so that ``Delegate/CDelegate`` is spelled
/// as in TensorFlowLiteSwift. This runtime has no C layer: the structure carries nothing.
public struct TfLiteDelegate {
  /// Creates an empty delegate structure.
  public init() {}
}

/// A hardware accelerator the interpreter may hand parts of the graph to.
///
/// This runtime runs every model on the CPU with its own kernels: delegates are accepted (and kept
/// in ``Interpreter/delegates``) but take no part in execution.
public protocol Delegate: AnyObject {
  /// The pointer type of the underlying delegate structure.
  typealias CDelegate = UnsafeMutablePointer<TfLiteDelegate>
  /// The underlying delegate structure.
  var cDelegate: CDelegate { get }
}

/// Owns the ``TfLiteDelegate`` structure a stand-in delegate points to.
final class DelegateStorage {
  /// The structure, allocated for the lifetime of the owning delegate.
  let pointer: Delegate.CDelegate

  /// Allocates an empty structure.
  init() {
    pointer = .allocate(capacity: 1)
    pointer.initialize(to: TfLiteDelegate())
  }

  deinit {
    pointer.deinitialize(count: 1)
    pointer.deallocate()
  }
}

/// How a GPU delegate's CPU thread waits for the GPU.
public enum ThreadWaitType: Equatable, Hashable {
  /// Do not wait.
  case none
  /// Wait without using the CPU.
  case passive
  /// Spin and yield.
  case active
  /// Spin.
  case aggressive
}

/// TensorFlowLiteSwift's Metal (GPU) delegate, kept so that code written for it compiles.
///
/// It does not use the GPU: an interpreter given this delegate runs the whole model on the CPU.
public final class MetalDelegate: Delegate {
  /// The options the delegate was created with.
  public let options: Options
  /// The (empty) delegate structure.
  public private(set) var cDelegate: CDelegate
  private let storage: DelegateStorage

  /// Creates the delegate with `options`.
  public init(options: Options = Options()) {
    self.options = options
    storage = DelegateStorage()
    cDelegate = storage.pointer
  }

  /// Options of the Metal delegate (recorded, not acted upon).
  public struct Options: Equatable, Hashable {
    /// Whether 16-bit floats may replace 32-bit ones.
    public var isPrecisionLossAllowed = false
    /// The old name of ``isPrecisionLossAllowed``.
    @available(*, deprecated, renamed: "isPrecisionLossAllowed")
    public var allowsPrecisionLoss: Bool {
      get { isPrecisionLossAllowed }
      set { isPrecisionLossAllowed = newValue }
    }
    /// How the CPU waits for the GPU.
    public var waitType: ThreadWaitType = .passive
    /// Whether quantized models may be delegated.
    public var isQuantizationEnabled = true
    /// Creates the default options.
    public init() {}
  }
}

/// TensorFlowLiteSwift's Core ML delegate, kept so that code written for it compiles.
///
/// It does not use Core ML or the Neural Engine: an interpreter given this delegate runs the whole
/// model on the CPU. Creation always succeeds.
public final class CoreMLDelegate: Delegate {
  /// The options the delegate was created with.
  public let options: Options
  /// The (empty) delegate structure.
  public private(set) var cDelegate: CDelegate
  private let storage: DelegateStorage

  /// Creates the delegate with `options`. Upstream returns nil when `.neuralEngine` is requested on
  /// a device without one; this stand-in never uses the Neural Engine and always succeeds.
  public init?(options: Options = Options()) {
    self.options = options
    storage = DelegateStorage()
    cDelegate = storage.pointer
  }

  /// Which devices the delegate may run on.
  public enum EnabledDevices: Equatable, Hashable {
    /// Only devices with a Neural Engine.
    case neuralEngine
    /// Every device.
    case all
  }

  /// Options of the Core ML delegate (recorded, not acted upon).
  public struct Options: Equatable, Hashable {
    /// Which devices the delegate may run on.
    public var enabledDevices: EnabledDevices = .neuralEngine
    /// The Core ML version to target (0 = the device's).
    public var coreMLVersion = 0
    /// The most graph partitions to delegate (0 = no limit).
    public var maxDelegatedPartitions = 0
    /// The fewest nodes a partition needs to be delegated.
    public var minNodesPerPartition = 2
    /// Creates the default options.
    public init() {}
  }
}

/// The version of this runtime.
public enum Runtime {
  /// The runtime's semantic version (`major.minor.patch`).
  public static var version: String { "0.1.0" }
}
