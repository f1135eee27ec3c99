import XCTest

@testable import TFLiteRuntime

/// Wiring mistakes, recursion and value-dependent shapes in IF, WHILE, CALL_ONCE and variables,
/// on hand-built models whose subgraphs only pass tensors through (no arithmetic).
final class ControlFlowTests: XCTestCase {
  typealias Model = ControlFlowTestModel
  typealias Tensor = ControlFlowTestModel.Tensor

  /// Main: IF(condition, x) → y with the given branches; subgraph 1 passes a FLOAT32 [2] through.
  private func ifModel(
    condition: Tensor = .bool("condition"), then: Int32 = 1, else otherwise: Int32 = 1,
    extraGraphs: [Model.Graph] = []
  ) -> Model {
    Model(
      graphs: [
        Model.Graph(
          tensors: [condition, .float("x", [2]), .float("y", [2])], inputs: [0, 1], outputs: [2],
          operations: [.ifThenElse([0, 1], [2], then: then, else: otherwise)]),
        Model.passThrough([.float("a", [2])]),
      ] + extraGraphs)
  }

  /// Main: WHILE(flag) → result with the given subgraphs; subgraph 1 passes a BOOL scalar through.
  private func whileModel(condition: Int32 = 1, body: Int32 = 2, extraGraphs: [Model.Graph]) -> Model {
    Model(
      graphs: [
        Model.Graph(
          tensors: [.bool("flag"), .bool("result")], inputs: [0], outputs: [1],
          operations: [.whileLoop([0], [1], condition: condition, body: body)]),
        Model.passThrough([.bool("c")]),
      ] + extraGraphs)
  }

  /// Asserts that `body` throws an error whose description contains `fragment`.
  private func assertThrows(
    _ fragment: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
  ) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
      XCTAssertTrue("\(error)".contains(fragment), "\(error)", file: file, line: line)
    }
  }

  private func setBool(_ tensor: RuntimeTensor, _ value: Bool) throws {
    try XCTUnwrap(tensor.data).storeBytes(of: value ? 1 : 0, as: UInt8.self)
  }

  private func setFloats(_ tensor: RuntimeTensor, _ values: [Float]) throws {
    XCTAssertEqual(tensor.elementCount, values.count)
    let data = try XCTUnwrap(tensor.data).assumingMemoryBound(to: Float.self)
    for (index, value) in values.enumerated() { data[index] = value }
  }

  private func floats(_ tensor: RuntimeTensor) throws -> [Float] {
    Array(
      UnsafeBufferPointer(
        start: try XCTUnwrap(tensor.data).assumingMemoryBound(to: Float.self), count: tensor.elementCount))
  }

  // MARK: IF

  func testIfRunsTheBranchThroughTheStaticPath() throws {
    let runner = try ifModel().runner()
    let main = runner.primary
    try main.allocateTensors()
    XCTAssertFalse(main.preparesNodesWhileRunning)
    try setBool(main.inputs[0], true)
    try setFloats(main.inputs[1], [3, -4])
    try main.invoke()
    XCTAssertEqual(main.outputs[0].shape, [2])
    XCTAssertEqual(try floats(main.outputs[0]), [3, -4])
  }

  func testIfWithBranchesOfDifferentShapesTakesTheChosenBranchShape() throws {
    // IF(condition, x [2], z [3]): then gives its first input, else its second.
    let model = Model(graphs: [
      Model.Graph(
        tensors: [.bool("condition"), .float("x", [2]), .float("z", [3]), .float("y", [2])], inputs: [0, 1, 2],
        outputs: [3], operations: [.ifThenElse([0, 1, 2], [3], then: 1, else: 2)]),
      Model.Graph(tensors: [.float("a", [2]), .float("b", [3])], inputs: [0, 1], outputs: [0]),
      Model.Graph(tensors: [.float("a", [2]), .float("b", [3])], inputs: [0, 1], outputs: [1]),
    ])
    let runner = try model.runner()
    let main = runner.primary
    try main.allocateTensors()
    XCTAssertTrue(main.preparesNodesWhileRunning)
    try setFloats(main.inputs[1], [1, 2])
    try setFloats(main.inputs[2], [7, 8, 9])
    for (condition, shape, values) in [(true, [2], [Float(1), 2]), (false, [3], [7, 8, 9]), (true, [2], [1, 2])] {
      try setBool(main.inputs[0], condition)
      try main.invoke()
      XCTAssertEqual(main.outputs[0].shape, shape)
      XCTAssertEqual(try floats(main.outputs[0]), values)
    }
  }

  func testIfWithAMissingBranchSubgraphIsRefusedWhenLoaded() {
    assertThrows("else_subgraph_index is 9") { _ = try ifModel(else: 9).runner() }
    assertThrows("then_subgraph_index is -1") { _ = try ifModel(then: -1).runner() }
  }

  func testIfBranchWithTheWrongNumberOfInputsThrows() throws {
    let twoInputs = Model.Graph(tensors: [.float("a", [2]), .float("b", [2])], inputs: [0, 1], outputs: [0])
    let runner = try ifModel(else: 2, extraGraphs: [twoInputs]).runner()
    let main = runner.primary
    assertThrows("takes 2 inputs, the node passes 1") { try main.allocateTensors() }
  }

  func testIfBranchWithTheWrongNumberOfOutputsThrows() throws {
    let twoOutputs = Model.Graph(tensors: [.float("a", [2]), .float("b", [2])], inputs: [0], outputs: [0, 1])
    let runner = try ifModel(then: 2, extraGraphs: [twoOutputs]).runner()
    let main = runner.primary
    assertThrows("gives 2 outputs, the node has 1") { try main.allocateTensors() }
  }

  func testIfBranchWithAnotherInputTypeThrows() throws {
    let runner = try ifModel(then: 2, extraGraphs: [Model.passThrough([.int("a", [2])])]).runner()
    let main = runner.primary
    assertThrows("is INT32") { try main.allocateTensors() }
  }

  func testOperatorsWithoutKernelInCalledSubgraphsAreReportedWhenTheRunnerIsBuilt() throws {
    // Subgraph 2 runs LSH_PROJECTION (builtin 15), which the runtime has no kernel for.
    let unknown = Model.Graph(
      tensors: [.float("a", [2]), .float("b", [2])], inputs: [0], outputs: [1],
      operations: [Model.Operation(code: 15, inputs: [0], outputs: [1])])
    XCTAssertThrowsError(try ifModel(else: 2, extraGraphs: [unknown]).runner()) { error in
      guard case RuntimeError.unsupportedOperators(let list) = error else { return XCTFail("\(error)") }
      XCTAssertEqual(list.map(\.subgraph), [2])
      XCTAssertEqual(list.map(\.opName), ["LSH_PROJECTION"])
    }
  }

  func testIfWithANonBooleanConditionIsRefusedWhenTheRunnerIsBuilt() throws {
    assertThrows("BOOL condition") { _ = try ifModel(condition: .float("condition", [])).runner() }
  }

  func testIfWithAConditionOfSeveralElementsThrows() throws {
    let runner = try ifModel(condition: .bool("condition", [2])).runner()
    let main = runner.primary
    assertThrows("one element") { try main.allocateTensors() }
  }

  func testIfWhoseBranchIsItsOwnSubgraphThrows() throws {
    let model = Model(graphs: [
      Model.Graph(
        tensors: [.bool("condition"), .float("x", [2]), .float("y", [2])], inputs: [0, 1], outputs: [2],
        operations: [.ifThenElse([0, 0, 1], [2], then: 0, else: 0)])
    ])
    let runner = try model.runner()
    assertThrows("called from inside itself") { try runner.primary.allocateTensors() }
  }

  func testIfRecursionThroughAnotherSubgraphThrows() throws {
    // Subgraph 1 is an IF whose branches are subgraph 1 again.
    let recursive = Model.Graph(
      tensors: [.bool("c"), .float("a", [2]), .float("b", [2])], inputs: [0, 1], outputs: [2],
      operations: [.ifThenElse([0, 0, 1], [2], then: 1, else: 1)])
    let model = Model(graphs: [
      Model.Graph(
        tensors: [.bool("condition"), .float("x", [2]), .float("y", [2])], inputs: [0, 1], outputs: [2],
        operations: [.ifThenElse([0, 0, 1], [2], then: 1, else: 1)]),
      recursive,
    ])
    let runner = try model.runner()
    let main = runner.primary
    assertThrows("called from inside itself") { try main.allocateTensors() }
  }

  func testNestingDeeperThanTheLimitThrowsAndShallowNestingRuns() throws {
    /// Subgraph k (k < depth) is an IF whose branches are both subgraph k + 1; the last passes through.
    func chain(depth: Int) -> Model {
      let level = (0..<depth).map { index in
        Model.Graph(
          tensors: [.bool("c"), .float("x", [2]), .float("y", [2])], inputs: [0, 1], outputs: [2],
          operations: [.ifThenElse([0, 0, 1], [2], then: Int32(index + 1), else: Int32(index + 1))])
      }
      return Model(
        graphs: level + [Model.Graph(tensors: [.bool("c"), .float("x", [2])], inputs: [0, 1], outputs: [1])])
    }
    let shallowRunner = try chain(depth: 8).runner()
    let shallow = shallowRunner.primary
    try shallow.allocateTensors()
    try setBool(shallow.inputs[0], true)
    try setFloats(shallow.inputs[1], [5, 6])
    try shallow.invoke()
    XCTAssertEqual(try floats(shallow.outputs[0]), [5, 6])

    let deepRunner = try chain(depth: ModelResources.maximumCallDepth + 4).runner()
    let deep = deepRunner.primary
    assertThrows("levels deep") { try deep.allocateTensors() }
  }

  // MARK: WHILE

  func testWhileWhoseConditionIsFalseAtOnceGivesItsInputs() throws {
    let runner = try whileModel(extraGraphs: [Model.passThrough([.bool("b")])]).runner()
    let main = runner.primary
    try main.allocateTensors()
    try setBool(main.inputs[0], false)
    try main.invoke()
    XCTAssertEqual(try XCTUnwrap(main.outputs[0].data).load(as: UInt8.self), 0)
  }

  func testWhileWithTheSameConditionAndBodyIsRefusedWhenTheRunnerIsBuilt() throws {
    assertThrows("different condition and body") { _ = try whileModel(condition: 1, body: 1, extraGraphs: []).runner() }
  }

  func testWhileWithAMissingBodyIsRefusedWhenLoaded() {
    assertThrows("body_subgraph_index is 5") { _ = try whileModel(body: 5, extraGraphs: []).runner() }
  }

  func testWhileBodyWithTheWrongNumberOfOutputsThrows() throws {
    let body = Model.Graph(tensors: [.bool("b"), .bool("d")], inputs: [0], outputs: [0, 1])
    let runner = try whileModel(extraGraphs: [body]).runner()
    let main = runner.primary
    assertThrows("gives 2 outputs, the node has 1") { try main.allocateTensors() }
  }

  func testWhileConditionWithANonBooleanOutputThrows() throws {
    let condition = Model.Graph(tensors: [.bool("b"), .int("i")], inputs: [0], outputs: [1])
    let runner = try whileModel(condition: 2, body: 1, extraGraphs: [condition]).runner()
    let main = runner.primary
    assertThrows("one BOOL output") { try main.allocateTensors() }
  }

  func testWhileConditionWithSeveralElementsThrowsWhenRunning() throws {
    let model = Model(graphs: [
      Model.Graph(
        tensors: [.bool("flags", [2]), .bool("result", [2])], inputs: [0], outputs: [1],
        operations: [.whileLoop([0], [1], condition: 1, body: 2)]),
      Model.passThrough([.bool("c", [2])]),
      Model.passThrough([.bool("b", [2])]),
    ])
    let runner = try model.runner()
    let main = runner.primary
    try main.allocateTensors()
    assertThrows("BOOL scalar") { try main.invoke() }
  }

  func testWhileBodyContainingTheSameWhileThrows() throws {
    // The body (subgraph 2) runs a WHILE with the same condition and body.
    let body = Model.Graph(
      tensors: [.bool("b"), .bool("d")], inputs: [0], outputs: [1],
      operations: [.whileLoop([0], [1], condition: 1, body: 2)])
    let runner = try whileModel(extraGraphs: [body]).runner()
    let main = runner.primary
    assertThrows("called from inside itself") { try main.allocateTensors() }
  }

  // MARK: CALL_ONCE and variables

  /// Main: CALL_ONCE(initialization), VAR_HANDLE("v") → handle, READ_VARIABLE(handle) → y.
  private func variableModel(initialization: Int32, graphs: [Model.Graph]) -> Model {
    Model(
      graphs: [
        Model.Graph(
          tensors: [.handle("handle"), .float("y", [3])], inputs: [], outputs: [1],
          operations: [.callOnce(initialization), .variableHandle("v", 0), .readVariable(0, 1)])
      ] + graphs)
  }

  func testCallOnceInitializesAVariableThatTheMainSubgraphReads() throws {
    let initialization = Model.Graph(
      tensors: [.handle("handle"), .float("initial", [3], values: [0.5, -2, 8])], inputs: [], outputs: [],
      operations: [.variableHandle("v", 0), .assignVariable(0, 1)])
    let runner = try variableModel(initialization: 1, graphs: [initialization]).runner()
    let main = runner.primary
    try main.allocateTensors()
    XCTAssertTrue(main.preparesNodesWhileRunning, "the variable has no value before the first invoke")
    try main.invoke()
    XCTAssertEqual(main.outputs[0].shape, [3])
    XCTAssertEqual(try floats(main.outputs[0]), [0.5, -2, 8])
    XCTAssertTrue(runner.resources.hasInitialized(subgraph: 1))
    try main.allocateTensors()
    XCTAssertFalse(main.preparesNodesWhileRunning, "the variable has a value now")
    try main.invoke()
    XCTAssertEqual(try floats(main.outputs[0]), [0.5, -2, 8])
  }

  func testReadingAVariableNoAssignmentReachedThrows() throws {
    let runner = try variableModel(initialization: 1, graphs: [Model.Graph(tensors: [], inputs: [], outputs: [])])
      .runner()
    try runner.primary.allocateTensors()
    assertThrows("no ASSIGN_VARIABLE has given a value") { try runner.primary.invoke() }
  }

  func testCallOnceRecursionThrows() throws {
    let callingItself = Model.Graph(tensors: [], inputs: [], outputs: [], operations: [.callOnce(1)])
    let runner = try variableModel(initialization: 1, graphs: [callingItself]).runner()
    assertThrows("called from inside itself") { try runner.primary.allocateTensors() }
  }

  func testCallOnceOfASubgraphWithInputsThrows() throws {
    let runner = try variableModel(initialization: 1, graphs: [Model.passThrough([.float("a", [1])])]).runner()
    let main = runner.primary
    assertThrows("must have no inputs and outputs") { try main.allocateTensors() }
  }

  func testVariableIDsFollowTheNameAndAreSharedBySubgraphs() {
    let resources = ModelResources()
    let first = resources.variableID(container: "", sharedName: "v")
    let other = resources.variableID(container: "", sharedName: "w")
    let elsewhere = resources.variableID(container: "c", sharedName: "v")
    XCTAssertEqual(resources.variableID(container: "", sharedName: "v"), first)
    XCTAssertEqual(Set([first, other, elsewhere]).count, 3)
    XCTAssertNil(resources.variable(first))
  }
}
