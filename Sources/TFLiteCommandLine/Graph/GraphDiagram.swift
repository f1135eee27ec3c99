// The picture `tflite graph` draws of one subgraph, before it is written as SVG, DOT or HTML.
//
// Boxes: one per operator (title `#index OP`, its options that differ from the schema default plus
// padding and activation, its constant and variable inputs folded in as lines, the subgraphs a
// control-flow operator calls), one per graph input and one per graph output. Edges: one per
// tensor from the box that produces it to each box that reads it, labelled with type and shape.
//
// Layout (layered, top to bottom, after Sugiyama): a box's layer is one more than the deepest layer
// of the boxes it reads from (inputs are layer 0, outputs one below the deepest operator; an
// operator reading no other box, such as DEQUANTIZE of a constant, sits just above its first
// reader). An edge spanning several layers gets a thin placeholder in every layer it crosses, so it
// is routed between that layer's boxes instead of through them. Within a layer, boxes and
// placeholders are ordered by the mean position of their neighbours (barycentre sweeps, down and
// up) to reduce crossings, then placed left to right and each layer is centred. Edges leave and
// enter a box at distinct points along its bottom and top sides (ordered by where they go to or
// come from); each tensor's label is written once, just below the point where it leaves its
// producer, several labels of one box stacked one per line, and boxes are spaced so that a label
// does not reach its neighbour's.
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
    /// Where the edge runs: from its producer's bottom side down to the bottom of its row, then
    /// alternately across a gap between rows and straight down through a row it crosses, to its
    /// reader's top side (from ``layOut()``).
    var points: [(x: Double, y: Double)] = []
    /// Where its label starts (the left end of the text's baseline); nil on the other edges of a
    /// tensor read by several boxes, whose first edge carries the label.
    var labelPosition: (x: Double, y: Double)?
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
  /// Approximate width of one character of the 10 px monospace font of edge labels.
  static let labelCharacterWidth = 6.1
  /// Height of one line of edge labels.
  static let labelLineHeight = 12.0

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

  /// Assigns layers, orders each layer and places the boxes and the edges.
  private mutating func layOut() {
    assignLayers()
    for index in boxes.indices {
      let longest = ([boxes[index].title] + boxes[index].lines).map(\.count).max() ?? 0
      boxes[index].width = max(Double(longest) * Self.characterWidth + 20, 90)
      let overlayLines = boxes[index].overlay == nil ? 0 : 1
      boxes[index].height = Double(1 + boxes[index].lines.count + overlayLines) * Self.lineHeight + 12
    }
    var chains = LayeredChains(boxes: boxes, edges: edges)
    chains.order()
    place(chains)
  }

  /// Gives every box its layer.
  private mutating func assignLayers() {
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
  }

  /// Places the ordered layers of `chains` (boxes and placeholders) row by row, then routes every
  /// edge through its placeholders and places the labels.
  private mutating func place(_ chains: LayeredChains) {
    // Each box's labelled tensors, ordered by where their first reader sits.
    var labelledTensors = [[Int]](repeating: [], count: boxes.count)
    for (index, edge) in edges.enumerated() where !labelledTensors[edge.from].contains(where: { edges[$0].tensor == edge.tensor }) {
      labelledTensors[edge.from].append(index)
    }
    let boxWidths = boxes.map(\.width), labelLengths = edges.map(\.label.count)
    // Room a box needs from its left edge: its width, or more for labels reaching beyond it (they
    // start at its exit points).
    func footprint(_ box: Int) -> Double {
      let labels = labelledTensors[box]
      var reach = boxWidths[box]
      for (position, edge) in labels.enumerated() {
        let exit = boxWidths[box] * Double(position + 1) / Double(labels.count + 1)
        reach = max(reach, exit + 4 + Double(labelLengths[edge]) * Self.labelCharacterWidth)
      }
      return reach
    }
    let placeholderWidth = 10.0, boxGap = 28.0, placeholderGap = 12.0, margin = 20.0
    let boxCount = boxes.count
    func nodeWidth(_ node: Int) -> Double { node < boxCount ? footprint(node) : placeholderWidth }
    func gap(_ left: Int, _ right: Int) -> Double { left < boxCount && right < boxCount ? boxGap : placeholderGap }
    let layerWidths: [Double] = chains.layers.map { layer in
      var total = layer.last.map(nodeWidth) ?? 0
      for (left, right) in zip(layer, layer.dropFirst()) { total += nodeWidth(left) + gap(left, right) }
      return total
    }
    width = (layerWidths.max() ?? 0) + 2 * margin
    var centreX = [Double](repeating: 0, count: chains.layerOfNode.count)
    var rowTop = [Double](repeating: 0, count: chains.layers.count)
    var rowHeight = [Double](repeating: 0, count: chains.layers.count)
    var top = margin
    for (layer, members) in chains.layers.enumerated() {
      var left = (width - layerWidths[layer]) / 2
      for (position, node) in members.enumerated() {
        if node < boxes.count {
          boxes[node].x = left
          boxes[node].y = top
          centreX[node] = left + boxes[node].width / 2
        } else {
          centreX[node] = left + placeholderWidth / 2
        }
        if position + 1 < members.count { left += nodeWidth(node) + gap(node, members[position + 1]) }
      }
      rowTop[layer] = top
      rowHeight[layer] = members.filter { $0 < boxes.count }.map { boxes[$0].height }.max() ?? 0
      let labelLines = members.filter { $0 < boxes.count }.map { labelledTensors[$0].count }.max() ?? 0
      top += rowHeight[layer] + max(56, 28 + Double(labelLines) * Self.labelLineHeight)
    }
    height = (chains.layers.indices.last.map { rowTop[$0] + rowHeight[$0] } ?? 0) + margin
    // Exit points: one per tensor along the producer's bottom; entry points: one per edge along the reader's top.
    var exitX: [Int: Double] = [:]  // edge → x
    for (box, labels) in labelledTensors.enumerated() {
      for (position, edge) in labels.enumerated() {
        let x = boxes[box].x + boxes[box].width * Double(position + 1) / Double(labels.count + 1)
        for (other, candidate) in edges.enumerated() where candidate.from == box && candidate.tensor == edges[edge].tensor {
          exitX[other] = x
        }
        edges[edge].labelPosition = (x + 4, boxes[box].y + boxes[box].height + Self.labelLineHeight * Double(position + 1))
      }
    }
    var incoming = [[Int]](repeating: [], count: boxes.count)
    for (index, edge) in edges.enumerated() { incoming[edge.to].append(index) }
    // Where each edge comes from into its reader's layer: its producer or its last placeholder.
    let arrivingFromX = chains.path.map { centreX[$0[$0.count - 2]] }
    for (box, arriving) in incoming.enumerated() {
      let ordered = arriving.sorted { (arrivingFromX[$0], $0) < (arrivingFromX[$1], $1) }
      for (position, edge) in ordered.enumerated() {
        let source = boxes[edges[edge].from]
        let startX = exitX[edge] ?? source.x + source.width / 2
        var points = [(x: startX, y: source.y + source.height), (startX, rowTop[source.layer] + rowHeight[source.layer])]
        for placeholder in chains.path[edge].dropFirst().dropLast() {
          let layer = chains.layerOfNode[placeholder]
          points.append((centreX[placeholder], rowTop[layer]))
          points.append((centreX[placeholder], rowTop[layer] + rowHeight[layer]))
        }
        points.append((boxes[box].x + boxes[box].width * Double(position + 1) / Double(ordered.count + 1), boxes[box].y))
        edges[edge].points = points
      }
    }
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

/// The layers of a diagram with a placeholder node wherever an edge crosses a layer, and their
/// order within each layer. Nodes `0..<boxCount` are the boxes; the others are placeholders.
private struct LayeredChains {
  /// Node ids per layer, in drawing order (left to right).
  var layers: [[Int]]
  /// Each node's layer.
  var layerOfNode: [Int]
  /// Per edge, the nodes it runs through: its producer, the placeholders, its reader.
  var path: [[Int]]
  /// Each node's neighbours in the layer above and in the layer below.
  private var above: [[Int]], below: [[Int]]

  /// Chains of every edge of `boxes` and `edges` (layers assigned).
  init(boxes: [GraphDiagram.Box], edges: [GraphDiagram.Edge]) {
    layerOfNode = boxes.map(\.layer)
    path = []
    for edge in edges {
      var chain = [edge.from]
      let (fromLayer, toLayer) = (boxes[edge.from].layer, boxes[edge.to].layer)
      if toLayer - fromLayer > 1 {
        for layer in (fromLayer + 1)..<toLayer {
          chain.append(layerOfNode.count)
          layerOfNode.append(layer)
        }
      }
      path.append(chain + [edge.to])
    }
    above = Array(repeating: [], count: layerOfNode.count)
    below = Array(repeating: [], count: layerOfNode.count)
    for chain in path {
      for (upper, lower) in zip(chain, chain.dropFirst()) {
        below[upper].append(lower)
        above[lower].append(upper)
      }
    }
    layers = Array(repeating: [], count: (layerOfNode.max() ?? 0) + 1)
    for (node, layer) in layerOfNode.enumerated() { layers[layer].append(node) }
  }

  /// Orders every layer by the barycentre of each node's neighbours, sweeping down then up, twice.
  mutating func order() {
    var position = [Double](repeating: 0, count: layerOfNode.count)
    func number(_ layer: Int) { for (index, node) in layers[layer].enumerated() { position[node] = Double(index) } }
    for layer in layers.indices { number(layer) }
    func sort(_ layer: Int, by neighbours: [[Int]]) {
      let barycentre = { (node: Int) -> Double in
        let near = neighbours[node]
        return near.isEmpty ? position[node] : near.map { position[$0] }.reduce(0, +) / Double(near.count)
      }
      layers[layer].sort { (barycentre($0), $0) < (barycentre($1), $1) }
      number(layer)
    }
    for _ in 0..<2 {
      for layer in layers.indices.dropFirst() { sort(layer, by: above) }
      for layer in layers.indices.reversed().dropFirst() { sort(layer, by: below) }
    }
  }
}
