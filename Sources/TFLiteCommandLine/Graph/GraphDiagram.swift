// The picture `tflite graph` draws of one subgraph, before it is written as SVG, DOT or HTML.
//
// Boxes: one per operator (title `#index OP`, its options that differ from the schema default plus
// padding and activation, its constant and variable inputs folded in as lines, the subgraphs a
// control-flow operator calls), one per graph input and one per graph output. Edges: one per
// tensor from the box that produces it to each box that reads it, labelled with type and shape.
//
// Layout (layered, top to bottom): a box's layer is one more than the deepest layer of the boxes
// it reads from (inputs are layer 0, outputs one below the deepest operator; an operator reading
// no other box, such as DEQUANTIZE of a constant, sits just above its first reader); within a layer
// boxes are ordered by the mean position of their predecessors (two sweeps of the barycentre
// heuristic) to reduce crossings, then placed left to right and each layer is centred.
// All text here is the model's own and is escaped only by the writers.
import TFLiteFormat
import TFLiteRuntime

/// One subgraph laid out as boxes and edges.
struct GraphDiagram {
  /// What a box stands for.
  enum BoxKind: Equatable {
    /// Operator `index` of the subgraph.
    case op(Int)
    /// Graph input tensor.
    case input(tensor: Int)
    /// Graph output tensor.
    case output(tensor: Int)
  }

  /// A box and where it is drawn.
  struct Box {
    /// What it stands for.
    var kind: BoxKind
    /// The first line, in bold.
    var title: String
    /// Further lines.
    var lines: [String]
    /// Subgraphs a control-flow operator calls, with the role (`then`, `body`, …).
    var calls: [(role: String, subgraph: Int)] = []
    /// Layer (row), from 0 at the top.
    var layer = 0
    /// Left edge, top edge, width and height, in pixels.
    var x = 0.0, y = 0.0, width = 0.0, height = 0.0
    /// A fill colour from an overlay, and the overlay's line of text.
    var overlay: (color: String, text: String)?

    /// A stable DOM id: `op-3`, `input-0`, `output-12`.
    var elementID: String {
      switch kind {
      case .op(let index): "op-\(index)"
      case .input(let tensor): "input-\(tensor)"
      case .output(let tensor): "output-\(tensor)"
      }
    }
  }

  /// A tensor flowing from one box to another.
  struct Edge {
    /// Index of the producing box in ``boxes``.
    var from: Int
    /// Index of the consuming box.
    var to: Int
    /// The tensor index.
    var tensor: Int
    /// `FLOAT32 [1, 8, 8, 16]`.
    var label: String
    /// `T#12 name`.
    var tensorName: String
  }

  /// The subgraph's index.
  var subgraphIndex: Int
  /// Its name in the model (may be empty).
  var subgraphName: String
  /// Boxes in drawing order (inputs, operators in model order, outputs).
  var boxes: [Box]
  /// Edges.
  var edges: [Edge]
  /// Width and height of the whole drawing, in pixels.
  var width = 0.0, height = 0.0

  /// Approximate width of one character of the 12 px monospace font used for box text.
  static let characterWidth = 7.3
  /// Height of one line of box text.
  static let lineHeight = 15.0
  /// Longest line shown; longer model text is cut with `…` (the full text is in the tooltip).
  static let maximumLineLength = 56

  /// Builds and lays out subgraph `subgraphIndex` of `file`.
  init(file: TFLiteModel, subgraphIndex: Int) throws {
    let model = file.model
    guard model.subgraphs.indices.contains(subgraphIndex) else {
      throw CommandFailure("the model has \(model.subgraphs.count) subgraphs, there is no subgraph \(subgraphIndex)")
    }
    let subgraph = model.subgraphs[subgraphIndex]
    self.subgraphIndex = subgraphIndex
    subgraphName = subgraph.name ?? ""
    let tensors = subgraph.tensors
    func describe(_ index: Int) -> String {
      let tensor = tensors[index]
      return "\(tensor.type.name) \(formatShape(tensor.shape.map(Int.init)))"
    }
    var boxes: [Box] = []
    var producer: [Int: Int] = [:]  // tensor → box
    for tensor in subgraph.inputs.map(Int.init) where tensors.indices.contains(tensor) {
      producer[tensor] = boxes.count
      boxes.append(Box(kind: .input(tensor: tensor), title: "input T#\(tensor)", lines: [Self.clipped(tensors[tensor].name ?? ""), describe(tensor)]))
    }
    var edges: [Edge] = []
    for (index, op) in subgraph.operators.enumerated() {
      let code = model.operatorCodes.indices.contains(Int(op.opcodeIndex)) ? model.operatorCodes[Int(op.opcodeIndex)] : nil
      let name = code.map { $0.resolvedBuiltinCode == .custom ? ($0.customCode ?? "CUSTOM") : $0.resolvedBuiltinCode.name } ?? "?"
      let fields = op.builtinOptions2 != .none ? op.builtinOptions2.fields : op.builtinOptions.fields
      var lines = Self.wrapped(
        fields.filter { !$0.isDefault || ["padding", "fused_activation_function"].contains($0.name) }
          .filter { !$0.name.hasSuffix("subgraph_index") }
          .map { "\($0.name)=\($0.value.displayText)" })
      let boxIndex = boxes.count
      for (position, tensor) in op.inputs.map(Int.init).enumerated() where tensors.indices.contains(tensor) {
        if let source = producer[tensor] {
          edges.append(Edge(from: source, to: boxIndex, tensor: tensor, label: describe(tensor), tensorName: "T#\(tensor) \(tensors[tensor].name ?? "")"))
        } else {
          let kind = file.tensorData(tensors[tensor]).isEmpty ? (tensors[tensor].isVariable ? "variable" : "unset") : "const"
          lines.append(Self.clipped("in\(position): \(describe(tensor)) \(kind)"))
        }
      }
      let calls = Self.calledSubgraphs(op.builtinOptions).filter { model.subgraphs.indices.contains($0.subgraph) }
      for call in calls {
        let calledName = model.subgraphs[call.subgraph].name ?? ""
        lines.append(Self.clipped("\(call.role) → subgraph \(call.subgraph)\(calledName.isEmpty ? "" : " \(calledName)")"))
      }
      boxes.append(Box(kind: .op(index), title: Self.clipped("#\(index) \(name)"), lines: lines, calls: calls))
      for tensor in op.outputs.map(Int.init) where tensors.indices.contains(tensor) { producer[tensor] = boxIndex }
    }
    for tensor in subgraph.outputs.map(Int.init) where tensors.indices.contains(tensor) {
      let boxIndex = boxes.count
      boxes.append(Box(kind: .output(tensor: tensor), title: "output T#\(tensor)", lines: [Self.clipped(tensors[tensor].name ?? ""), describe(tensor)]))
      if let source = producer[tensor] {
        edges.append(Edge(from: source, to: boxIndex, tensor: tensor, label: describe(tensor), tensorName: "T#\(tensor) \(tensors[tensor].name ?? "")"))
      }
    }
    self.boxes = boxes
    self.edges = edges
    layOut()
  }

  /// The subgraphs a control-flow operator calls, with their roles.
  static func calledSubgraphs(_ options: BuiltinOptions) -> [(role: String, subgraph: Int)] {
    switch options {
    case .ifOptions(let branches): [("then", Int(branches.thenSubgraphIndex)), ("else", Int(branches.elseSubgraphIndex))]
    case .whileOptions(let loop): [("cond", Int(loop.condSubgraphIndex)), ("body", Int(loop.bodySubgraphIndex))]
    case .callOnceOptions(let call): [("init", Int(call.initSubgraphIndex))]
    default: []
    }
  }

  /// `text` cut to ``maximumLineLength`` characters.
  static func clipped(_ text: String) -> String {
    text.count <= maximumLineLength ? text : String(text.prefix(maximumLineLength - 1)) + "…"
  }

  /// `parts` joined with `, ` into lines of at most ``maximumLineLength`` characters.
  static func wrapped(_ parts: [String]) -> [String] {
    var lines: [String] = []
    for part in parts.map(clipped) {
      if let last = lines.last, last.count + 2 + part.count <= maximumLineLength {
        lines[lines.count - 1] = last + ", " + part
      } else {
        lines.append(part)
      }
    }
    return lines
  }

  /// Assigns layers, orders each layer and places the boxes.
  private mutating func layOut() {
    var predecessors = [[Int]](repeating: [], count: boxes.count)
    for edge in edges { predecessors[edge.to].append(edge.from) }
    // Boxes are in model order and an operator reads only earlier producers, so one pass suffices.
    for index in boxes.indices {
      boxes[index].layer = (predecessors[index].filter { $0 < index }.map { boxes[$0].layer }.max() ?? -1) + 1
    }
    // An operator that reads no other box (DEQUANTIZE of a constant) sits right above its first reader.
    var successors = [[Int]](repeating: [], count: boxes.count)
    for edge in edges { successors[edge.from].append(edge.to) }
    for index in boxes.indices.reversed() where predecessors[index].isEmpty {
      guard case .op = boxes[index].kind, let firstReader = successors[index].map({ boxes[$0].layer }).min() else { continue }
      boxes[index].layer = max(firstReader - 1, 0)
    }
    let deepestOperator = boxes.filter { if case .op = $0.kind { true } else { false } }.map(\.layer).max() ?? 0
    for index in boxes.indices {
      if case .output = boxes[index].kind { boxes[index].layer = max(boxes[index].layer, deepestOperator + 1) }
      if case .input = boxes[index].kind { boxes[index].layer = 0 }
    }
    let layerCount = (boxes.map(\.layer).max() ?? 0) + 1
    var layers = [[Int]](repeating: [], count: layerCount)
    for index in boxes.indices { layers[boxes[index].layer].append(index) }
    var order = [Double](repeating: 0, count: boxes.count)
    func number(_ layer: [Int]) { for (position, box) in layer.enumerated() { order[box] = Double(position) } }
    layers.forEach(number)
    for _ in 0..<2 {
      for layer in 1..<max(layerCount, 1) {
        let barycentre = { (box: Int) -> Double in
          let sources = predecessors[box]
          return sources.isEmpty ? order[box] : sources.map { order[$0] }.reduce(0, +) / Double(sources.count)
        }
        layers[layer].sort { (barycentre($0), $0) < (barycentre($1), $1) }
        number(layers[layer])
      }
    }
    for index in boxes.indices {
      let longest = ([boxes[index].title] + boxes[index].lines).map(\.count).max() ?? 0
      boxes[index].width = max(Double(longest) * Self.characterWidth + 20, 90)
      let overlayLines = boxes[index].overlay == nil ? 0 : 1
      boxes[index].height = Double(1 + boxes[index].lines.count + overlayLines) * Self.lineHeight + 12
    }
    let horizontalGap = 28.0, verticalGap = 56.0, margin = 20.0
    let layerWidths = layers.map { layer in layer.map { boxes[$0].width }.reduce(0, +) + Double(max(layer.count - 1, 0)) * horizontalGap }
    width = (layerWidths.max() ?? 0) + 2 * margin
    var top = margin
    for (layer, members) in layers.enumerated() {
      var left = (width - layerWidths[layer]) / 2
      let rowHeight = members.map { boxes[$0].height }.max() ?? 0
      for box in members {
        boxes[box].x = left
        boxes[box].y = top
        left += boxes[box].width + horizontalGap
      }
      top += rowHeight + verticalGap
    }
    height = top - verticalGap + margin
  }

  /// Colours and annotates operator boxes from `overlay` (values for this subgraph), and lays out
  /// again for the extra line.
  mutating func apply(_ overlay: GraphOverlay) {
    for index in boxes.indices {
      guard case .op(let op) = boxes[index].kind, let mark = overlay.marks[NodeKey(subgraph: subgraphIndex, node: op)] else { continue }
      boxes[index].overlay = (mark.color, mark.text)
    }
    layOut()
  }
}
