import TFLiteFormat

/// Pairs `.npy` files given on the command line with a graph's inputs or outputs.
///
/// Each value is `FILE.npy` (taken in order: the first unnamed file goes to the first endpoint
/// without a named file, and so on) or `NAME=FILE.npy` (the endpoint called NAME).
struct FileAssignment {
  /// The file for each endpoint, by position; nil where none was given.
  var files: [String?]

  /// Assigns `values` to `endpoints`; `role` ("input", "expected output") names them in errors.
  init(_ values: [String], to endpoints: [GraphEndpoint], role: String) throws {
    var files = [String?](repeating: nil, count: endpoints.count)
    var unnamed: [String] = []
    for value in values {
      if let equals = value.firstIndex(of: "="),
        let position = endpoints.firstIndex(where: { $0.name == value[..<equals] })
      {
        guard files[position] == nil else {
          throw CommandFailure("\(role) '\(endpoints[position].name)' is given more than once")
        }
        files[position] = String(value[value.index(after: equals)...])
      } else {
        unnamed.append(value)
      }
    }
    let open = files.indices.filter { files[$0] == nil }
    guard unnamed.count <= open.count else {
      let names = endpoints.map { "'\($0.name)'" }.joined(separator: ", ")
      throw CommandFailure(
        "\(values.count) files given for \(endpoints.count) \(role)\(endpoints.count == 1 ? "" : "s") (\(names))")
    }
    for (position, file) in zip(open, unnamed) { files[position] = file }
    self.files = files
  }
}

/// The arrays to feed `model`: from the `--input` files, and seeded random values for inputs
/// without one.
func inputArrays(for model: LoadedModel, inputValues: [String], seed: UInt64) throws -> [HostArray] {
  let assignment = try FileAssignment(inputValues, to: model.inputs, role: "input")
  var generator = SeededGenerator(seed: seed)
  return try zip(model.inputs, assignment.files).map { endpoint, file in
    if let file { return try HostArray(numPyFile: file) }
    return try HostArray.random(for: endpoint.tensor, generator: &generator)
  }
}
