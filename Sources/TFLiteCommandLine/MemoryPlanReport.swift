import TFLiteRuntime

/// The text of `tflite inspect --plan`: a subgraph's arena size and where each block of activation
/// memory lives, with its lifetime in node indices, then the tensors written in place over another's block.
///
/// Allocates the executor's tensors first when they are not allocated.
public func renderMemoryPlan(of executor: SubgraphExecutor) throws -> String {
  if !executor.isAllocated { try executor.allocateTensors() }
  let plan = executor.memoryPlan
  let nodeCount = executor.operatorNames.count
  var text = "memory plan of subgraph \(executor.subgraphIndex): arena \(plan.arenaByteCount) bytes"
  text += " (lower bound \(plan.peakLiveByteCount) bytes, \(plan.placements.count) blocks)\n"
  let rows = plan.placements.sorted { ($0.offset, $0.request.firstUse) < ($1.offset, $1.request.firstUse) }.map {
    placement -> [String] in
    let request = placement.request
    let what: String
    switch request.owner {
    case .tensor(let index):
      let tensor = executor.tensors[index]
      what = "T\(index) \(tensor.name) \(tensor.typeAndShape)"
    case .scratch(let node):
      what = "scratch of node \(node) (\(executor.operatorNames[node]))"
    }
    let first = request.firstUse < 0 ? "input" : "\(request.firstUse)"
    let last = request.lastUse >= nodeCount ? "output" : "\(request.lastUse)"
    return ["\(placement.offset)", "\(placement.offset + request.byteCount)", "\(request.byteCount)", "\(first)...\(last)", what]
  }
  let header = ["offset", "end", "bytes", "live", "holds"]
  let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
  for row in [header] + rows {
    let padded = row.enumerated().map { column, cell in
      column == row.count - 1 ? cell : String(repeating: " ", count: widths[column] - cell.count) + cell
    }
    text += "  " + padded.joined(separator: "  ") + "\n"
  }
  for (output, root) in executor.inPlaceOutputs.sorted(by: { $0.key < $1.key }) {
    text += "  T\(output) \(executor.tensors[output].name) is written in place over the block of T\(root)\n"
  }
  return text
}
