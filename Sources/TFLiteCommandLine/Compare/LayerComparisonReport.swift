// How `tflite compare --reference` prints a `LayerComparison`: a table per subgraph in execution
// order, or the stable JSON documented in README ("Per-layer comparison with LiteRT"). JSON keys
// are never renamed or removed; new keys may be added. `operators` is subgraph 0; the other
// subgraphs are under `subgraphs`.

import Foundation

extension OperatorComparison {
  /// The operator's entry in the JSON report.
  var json: JSONValue {
    .object([
      ("operator_index", .int(operatorIndex)), ("op", .string(op)),
      ("inputs_not_from_reference", .ints(inputsNotFromReference)), ("runs", .int(runs)),
      ("outputs", .array(outputs.map(\.json))),
    ])
  }

  /// `3 ADD` for subgraph 0, `3 ADD of subgraph 2 'while_body'` for the others.
  func label(subgraphName: String) -> String {
    subgraph == 0 ? "\(operatorIndex) \(op)" : "\(operatorIndex) \(op) of subgraph \(subgraph)\(subgraphName.isEmpty ? "" : " '\(subgraphName)'")"
  }
}

extension LayerComparison {
  /// The JSON document: `first_divergent`, `operators` (subgraph 0) with their `outputs`,
  /// `subgraphs` (the others) and the settings.
  func json(model: String, dump: ReferenceDump, tolerance: LayerTolerance) -> JSONValue {
    let first: JSONValue =
      firstDivergent.map { divergent in
        .object([
          ("operator_index", .int(divergent.operatorIndex)), ("op", .string(divergent.op)),
          ("output_tensor", .int(divergent.outputs.first(where: { $0.isWithinTolerance == false })?.tensorIndex ?? -1)),
          ("subgraph", .int(divergent.subgraph)),
        ])
      } ?? .null
    return .object([
      ("model", .string(model)),
      ("reference", .string(dump.directory)),
      ("reference_producer", .string(dump.producer)),
      ("mode", .string(isolated ? "isolated" : "chained")),
      ("tolerance", .object([
        ("atol", .number(tolerance.float.absolute)), ("rtol", .number(tolerance.float.relative)),
        ("integer_steps", .int(tolerance.integerSteps)),
      ])),
      ("within_tolerance", .bool(firstDivergent == nil)),
      ("first_divergent", first),
      ("operators", .array(operators.map(\.json))),
      ("subgraphs", .array(subgraphs.map { subgraph in
        .object([
          ("index", .int(subgraph.index)), ("name", .string(subgraph.name)), ("compared_run", .string("last")),
          ("operators", .array(subgraph.operators.map(\.json))),
        ])
      })),
    ])
  }

  /// The tables (subgraph 0, then every other subgraph that ran), followed by the verdict.
  func table(dump: ReferenceDump, tolerance: LayerTolerance) -> String {
    var text = "reference: \(dump.directory) (\(dump.producer))\n"
    text += isolated
      ? "mode: isolated (each operator runs on the reference's values of its inputs)\n"
      : "mode: chained (each operator runs on this runtime's own earlier outputs)\n"
    text += "tolerance: integer tensors \(tolerance.integerSteps == 0 ? "exact" : "within \(tolerance.integerSteps) steps"), float tensors |Δ| <= \(formatNumber(tolerance.float.absolute)) + \(formatNumber(tolerance.float.relative))·|reference|\n\n"
    text += Self.table(of: operators)
    for subgraph in subgraphs where !subgraph.operators.isEmpty {
      let maximumRuns = subgraph.operators.map(\.runs).max() ?? 0
      text += "\nsubgraph \(subgraph.index)\(subgraph.name.isEmpty ? "" : " '\(subgraph.name)'") (called by control flow;"
        + " ran up to \(maximumRuns) time\(maximumRuns == 1 ? "" : "s"); each operator's last run compared)\n"
      text += Self.table(of: subgraph.operators)
    }
    let everyOperator = allOperators
    let compared = everyOperator.flatMap(\.outputs).filter { $0.isWithinTolerance != nil }.count
    let skipped = everyOperator.flatMap(\.outputs).count - compared
    let nestedCount = everyOperator.count - operators.count
    text += "\n\(operators.count) operators\(nestedCount > 0 ? " and \(nestedCount) in called subgraphs" : ""), \(compared) output tensors compared\(skipped > 0 ? ", \(skipped) not compared" : "")\n"
    guard let divergent = firstDivergent else {
      return text + "all compared tensors within tolerance\n"
    }
    let failing = everyOperator.filter(\.diverges)
    text += "MISMATCH: \(failing.count) operator\(failing.count == 1 ? "" : "s") beyond tolerance\n"
    if let output = divergent.outputs.first(where: { $0.isWithinTolerance == false }) {
      let name = subgraphs.first { $0.index == divergent.subgraph }?.name ?? ""
      text += "first divergent operator: \(divergent.label(subgraphName: name)), output tensor \(output.tensorIndex) '\(output.name)': \(output.mismatchSummary)\n"
    }
    return text
  }

  /// One table, one line per output tensor.
  private static func table(of operators: [OperatorComparison]) -> String {
    let header = ["#", "op", "output", "max|Δ|", "mean|Δ|", "steps", "rel err", "cosine", "SNR dB", ""]
    var rows: [[String]] = []
    for comparison in operators {
      for (position, output) in comparison.outputs.enumerated() {
        let operatorColumns = position == 0 ? ["\(comparison.operatorIndex)", comparison.op] : ["", ""]
        rows.append(operatorColumns + ["t\(output.tensorIndex) \(output.typeAndShape)"] + output.tableColumns)
      }
    }
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    let lines = ([header] + rows).map { row in
      zip(row, widths).enumerated().map { column, cell in
        let padding = String(repeating: " ", count: cell.1 - cell.0.count)
        return column < 3 || column == header.count - 1 ? cell.0 + padding : padding + cell.0
      }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
    return lines.joined(separator: "\n") + "\n"
  }
}

extension TensorComparison {
  /// The output's entry in the JSON report.
  var json: JSONValue {
    var members: [(String, JSONValue)] = [("tensor", .int(tensorIndex)), ("name", .string(name))]
    switch outcome {
    case .compared(let errors):
      members += [
        ("status", .string("compared")),
        ("element_count", .int(errors.elementCount)),
        ("mismatch_count", .int(errors.mismatchCount)),
        ("max_abs_error", .number(errors.maxAbsoluteError)),
        ("mean_abs_error", .number(errors.meanAbsoluteError)),
        ("max_error_steps", errors.maxErrorSteps.map { .int($0) } ?? .null),
        ("relative_error", .number(errors.relativeError)),
        ("cosine", .number(errors.cosine)),
        ("snr_db", .number(errors.signalToNoiseDecibels)),
      ]
    case .shapeDiffers(let ours, let reference):
      members += [("status", .string("shape_differs")), ("shape", .ints(ours)), ("reference_shape", .ints(reference))]
    case .skipped(.absentInReference(let reason)):
      members += [("status", .string("absent_in_reference")), ("reason", .string(reason))]
    case .skipped(.notComputed(let reason)):
      members += [("status", .string("not_computed")), ("reason", .string(reason))]
    }
    members.append(("within_tolerance", isWithinTolerance.map { .bool($0) } ?? .null))
    return .object(members)
  }

  /// The measure columns of the table (and the verdict column).
  var tableColumns: [String] {
    switch outcome {
    case .compared(let errors):
      return [
        formatNumber(errors.maxAbsoluteError), formatNumber(errors.meanAbsoluteError),
        errors.maxErrorSteps.map(String.init) ?? "-", formatNumber(errors.relativeError),
        String(format: "%.6f", errors.cosine), formatNumber(errors.signalToNoiseDecibels),
        errors.mismatchCount == 0 ? "ok" : "MISMATCH",
      ]
    case .shapeDiffers(_, let reference):
      return ["-", "-", "-", "-", "-", "-", "MISMATCH shape \(formatShape(reference)) in reference"]
    case .skipped(.absentInReference):
      return ["-", "-", "-", "-", "-", "-", "not in reference"]
    case .skipped(.notComputed(let reason)):
      return ["-", "-", "-", "-", "-", "-", "not computed: \(reason)"]
    }
  }

  /// `57 of 2048 values beyond tolerance (first at flat index 3), max 2 steps`.
  var mismatchSummary: String {
    switch outcome {
    case .compared(let errors):
      let steps = errors.maxErrorSteps.map { ", max \($0) steps" } ?? ""
      return "\(errors.mismatchCount) of \(errors.elementCount) values beyond tolerance (first at flat index \(errors.firstMismatch ?? 0)), max |Δ| \(formatNumber(errors.maxAbsoluteError))\(steps)"
    case .shapeDiffers(let ours, let reference):
      return "shape \(formatShape(ours)) here, \(formatShape(reference)) in the reference"
    case .skipped:
      return "not compared"
    }
  }
}

extension LayerComparison {
  /// Model Explorer node data (`--node-data`): for each compared operator of every subgraph (graph
  /// id `graphIDs[subgraph]`), the largest fraction of an output's values beyond tolerance (0
  /// within tolerance, 1 for an output whose shape differs), green at 0, amber up to 1 %, red above.
  func nodeData(graphIDs: [String]) -> ModelExplorerNodeData {
    let graphs = [(0, operators)] + subgraphs.filter { !$0.operators.isEmpty }.map { ($0.index, $0.operators) }
    return ModelExplorerNodeData(
      name: "fraction of values beyond tolerance (tflite compare)",
      graphs: graphs.map { index, operators in (graphIDs[index], operators.compactMap(Self.mismatchFraction)) },
      coloring: .thresholds([(0, "#2e7d32"), (0.01, "#f9a825"), (1, "#c62828")]))
  }

  /// An operator's node id and the largest fraction of an output's values beyond tolerance; nil
  /// when no output was compared.
  private static func mismatchFraction(of comparison: OperatorComparison) -> (nodeID: String, value: Double)? {
    let fractions = comparison.outputs.compactMap { output -> Double? in
      switch output.outcome {
      case .compared(let errors): errors.elementCount == 0 ? 0 : Double(errors.mismatchCount) / Double(errors.elementCount)
      case .shapeDiffers: 1
      case .skipped: nil
      }
    }
    return fractions.max().map { ("\(comparison.operatorIndex)", $0) }
  }
}
