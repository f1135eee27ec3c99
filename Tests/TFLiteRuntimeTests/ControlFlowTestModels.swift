import TFLiteFormat
import TFLiteTestSupport

@testable import TFLiteRuntime

/// Builds small multi-subgraph models with builtin operators (IF, WHILE, CALL_ONCE, variables) by
/// hand, to test how the control-flow kernels handle wiring mistakes and recursion.
struct ControlFlowTestModel {
  /// Schema `TensorType` values.
  enum ElementCode: UInt8 {
    case float32 = 0
    case int32 = 2
    case bool = 6
    case resource = 13
  }

  /// A tensor; `constant` holds the bytes of a constant tensor.
  struct Tensor {
    var name: String
    var type: ElementCode
    var shape: [Int32]
    var constant: [UInt8]? = nil
  }

  /// The builtin options of an operation.
  enum Options {
    case none
    case branches(then: Int32, else: Int32)
    case loop(condition: Int32, body: Int32)
    case callOnce(Int32)
    case variable(container: String, sharedName: String)
  }

  /// An operation: schema `BuiltinOperator` code, operands and options.
  struct Operation {
    var code: Int32
    var inputs: [Int32]
    var outputs: [Int32]
    var options: Options = .none

    /// IF over `inputs` (condition first).
    static func ifThenElse(_ inputs: [Int32], _ outputs: [Int32], then: Int32, else: Int32) -> Operation {
      Operation(code: 118, inputs: inputs, outputs: outputs, options: .branches(then: then, else: `else`))
    }
    /// WHILE over the loop variables `inputs`.
    static func whileLoop(_ inputs: [Int32], _ outputs: [Int32], condition: Int32, body: Int32) -> Operation {
      Operation(code: 119, inputs: inputs, outputs: outputs, options: .loop(condition: condition, body: body))
    }
    /// CALL_ONCE of subgraph `index`.
    static func callOnce(_ index: Int32) -> Operation {
      Operation(code: 129, inputs: [], outputs: [], options: .callOnce(index))
    }
    /// VAR_HANDLE of variable `name` into tensor `output`.
    static func variableHandle(_ name: String, _ output: Int32) -> Operation {
      Operation(code: 142, inputs: [], outputs: [output], options: .variable(container: "", sharedName: name))
    }
    /// READ_VARIABLE of the handle in tensor `handle` into tensor `output`.
    static func readVariable(_ handle: Int32, _ output: Int32) -> Operation {
      Operation(code: 143, inputs: [handle], outputs: [output])
    }
    /// ASSIGN_VARIABLE of tensor `value` to the handle in tensor `handle`.
    static func assignVariable(_ handle: Int32, _ value: Int32) -> Operation {
      Operation(code: 144, inputs: [handle, value], outputs: [])
    }
  }

  /// A subgraph.
  struct Graph {
    var tensors: [Tensor]
    var inputs: [Int32]
    var outputs: [Int32]
    var operations: [Operation] = []
  }

  var graphs: [Graph]

  /// A graph whose outputs are its inputs (no operation).
  static func passThrough(_ tensors: [Tensor]) -> Graph {
    let indices = tensors.indices.map { Int32($0) }
    return Graph(tensors: tensors, inputs: indices, outputs: indices)
  }

  /// A runner for the model.
  func runner() throws -> ModelRunner {
    try ModelRunner(model: TFLiteModel(bytes: serialized()))
  }

  /// The `.tflite` bytes.
  func serialized() -> [UInt8] {
    var writer = FlatBufferWriter()
    let codes = Array(Set(graphs.flatMap { $0.operations.map(\.code) })).sorted()
    let codeTables = codes.map { code in
      writer.table { table in
        table.add(0, Int8(clamping: code))
        table.add(2, Int32(1))
        table.add(3, code)
      }
    }
    var bufferTables = [writer.table { _ in }]
    let graphTables = graphs.map { graph in
      let tensorTables = graph.tensors.map { tensor in
        var bufferIndex: UInt32 = 0
        if let constant = tensor.constant {
          let data = writer.vector(constant, elementAlignment: 16)
          bufferTables.append(writer.table { $0.add(0, offset: data) })
          bufferIndex = UInt32(bufferTables.count - 1)
        }
        let shape = writer.vector(tensor.shape)
        let name = writer.string(tensor.name)
        return writer.table { table in
          table.add(0, offset: shape)
          table.add(1, tensor.type.rawValue)
          table.add(2, bufferIndex)
          table.add(3, offset: name)
        }
      }
      let operationTables = graph.operations.map { operation in
        let options = write(operation.options, with: &writer)
        let inputs = writer.vector(operation.inputs)
        let outputs = writer.vector(operation.outputs)
        return writer.table { table in
          table.add(0, UInt32(codes.firstIndex(of: operation.code) ?? 0))
          table.add(1, offset: inputs)
          table.add(2, offset: outputs)
          if let options {
            table.add(3, options.type)
            table.add(4, offset: options.table)
          }
        }
      }
      let tensors = writer.vector(offsets: tensorTables)
      let inputs = writer.vector(graph.inputs)
      let outputs = writer.vector(graph.outputs)
      let operations = writer.vector(offsets: operationTables)
      return writer.table { table in
        table.add(0, offset: tensors)
        table.add(1, offset: inputs)
        table.add(2, offset: outputs)
        table.add(3, offset: operations)
      }
    }
    let codeVector = writer.vector(offsets: codeTables)
    let graphVector = writer.vector(offsets: graphTables)
    let bufferVector = writer.vector(offsets: bufferTables)
    let model = writer.table { table in
      table.add(0, UInt32(3))
      table.add(1, offset: codeVector)
      table.add(2, offset: graphVector)
      table.add(4, offset: bufferVector)
    }
    return writer.finish(root: model, fileIdentifier: "TFL3")
  }

  /// Writes the options table and returns it with its `BuiltinOptions` union type, nil for none.
  private func write(_ options: Options, with writer: inout FlatBufferWriter) -> (type: UInt8, table: Int)? {
    switch options {
    case .none:
      return nil
    case .branches(let then, let otherwise):
      return (
        92,
        writer.table { table in
          table.add(0, then)
          table.add(1, otherwise)
        }
      )
    case .loop(let condition, let body):
      return (
        93,
        writer.table { table in
          table.add(0, condition)
          table.add(1, body)
        }
      )
    case .callOnce(let index):
      return (103, writer.table { $0.add(0, index) })
    case .variable(let container, let sharedName):
      let containerString = writer.string(container)
      let nameString = writer.string(sharedName)
      return (
        111,
        writer.table { table in
          table.add(0, offset: containerString)
          table.add(1, offset: nameString)
        }
      )
    }
  }
}

extension ControlFlowTestModel.Tensor {
  /// A FLOAT32 tensor.
  static func float(_ name: String, _ shape: [Int32], values: [Float]? = nil) -> Self {
    Self(
      name: name, type: .float32, shape: shape,
      constant: values.map { floats in floats.flatMap { bytes(of: $0.bitPattern) } })
  }
  /// A BOOL tensor.
  static func bool(_ name: String, _ shape: [Int32] = []) -> Self { Self(name: name, type: .bool, shape: shape) }
  /// An INT32 tensor.
  static func int(_ name: String, _ shape: [Int32] = []) -> Self { Self(name: name, type: .int32, shape: shape) }
  /// A RESOURCE tensor (a variable handle).
  static func handle(_ name: String) -> Self { Self(name: name, type: .resource, shape: []) }

  /// The little-endian bytes of `value`.
  private static func bytes(of value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
}
