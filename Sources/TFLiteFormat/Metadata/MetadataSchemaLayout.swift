// The verifiable layout of the TFLite Support metadata schema (metadata_schema.fbs, file
// identifier "M001", schema 1.5.x): which field ids hold what, so the shared FlatBuffer verifier
// can check a `TFLITE_METADATA` buffer before ``ModelMetadata`` reads it. Written by hand from the
// schema; a union occupies two ids (its type code, then its table).

extension SchemaLayout {
  /// What the verifier checks in a metadata buffer; table indices are listed beside each table.
  static let tfliteMetadata: SchemaLayout = {
    let associatedFile = 3
    let processUnit = 10
    return SchemaLayout(
      tables: [
        // 0
        TableLayout(name: "ModelMetadata", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "description", id: 1, kind: .string),
          FieldLayout(name: "version", id: 2, kind: .string),
          FieldLayout(name: "subgraph_metadata", id: 3, kind: .tableVector(1)),
          FieldLayout(name: "author", id: 4, kind: .string),
          FieldLayout(name: "license", id: 5, kind: .string),
          FieldLayout(name: "associated_files", id: 6, kind: .tableVector(associatedFile)),
          FieldLayout(name: "min_parser_version", id: 7, kind: .string),
        ]),
        // 1
        TableLayout(name: "SubGraphMetadata", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "description", id: 1, kind: .string),
          FieldLayout(name: "input_tensor_metadata", id: 2, kind: .tableVector(2)),
          FieldLayout(name: "output_tensor_metadata", id: 3, kind: .tableVector(2)),
          FieldLayout(name: "associated_files", id: 4, kind: .tableVector(associatedFile)),
          FieldLayout(name: "input_process_units", id: 5, kind: .tableVector(processUnit)),
          FieldLayout(name: "output_process_units", id: 6, kind: .tableVector(processUnit)),
          FieldLayout(name: "input_tensor_groups", id: 7, kind: .tableVector(17)),
          FieldLayout(name: "output_tensor_groups", id: 8, kind: .tableVector(17)),
          FieldLayout(name: "custom_metadata", id: 9, kind: .tableVector(20)),
        ]),
        // 2
        TableLayout(name: "TensorMetadata", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "description", id: 1, kind: .string),
          FieldLayout(name: "dimension_names", id: 2, kind: .stringVector),
          FieldLayout(name: "content", id: 3, kind: .table(4)),
          FieldLayout(name: "process_units", id: 4, kind: .tableVector(processUnit)),
          FieldLayout(name: "stats", id: 5, kind: .table(16)),
          FieldLayout(name: "associated_files", id: 6, kind: .tableVector(associatedFile)),
        ]),
        // 3
        TableLayout(name: "AssociatedFile", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "description", id: 1, kind: .string),
          FieldLayout(name: "type", id: 2, kind: .scalar(size: 1)),
          FieldLayout(name: "locale", id: 3, kind: .string),
          FieldLayout(name: "version", id: 4, kind: .string),
        ]),
        // 4
        TableLayout(name: "Content", fields: [
          FieldLayout(name: "content_properties_type", id: 0, kind: .unionType(union: 0)),
          FieldLayout(name: "content_properties", id: 1, kind: .unionValue(union: 0, typeFieldID: 0)),
          FieldLayout(name: "range", id: 2, kind: .table(9)),
        ]),
        // 5
        TableLayout(name: "FeatureProperties", fields: []),
        // 6
        TableLayout(name: "ImageProperties", fields: [
          FieldLayout(name: "color_space", id: 0, kind: .scalar(size: 1)),
          FieldLayout(name: "default_size", id: 1, kind: .table(7)),
        ]),
        // 7
        TableLayout(name: "ImageSize", fields: [
          FieldLayout(name: "width", id: 0, kind: .scalar(size: 4)),
          FieldLayout(name: "height", id: 1, kind: .scalar(size: 4)),
        ]),
        // 8
        TableLayout(name: "BoundingBoxProperties", fields: [
          FieldLayout(name: "index", id: 0, kind: .scalarVector(elementSize: 4)),
          FieldLayout(name: "type", id: 1, kind: .scalar(size: 1)),
          FieldLayout(name: "coordinate_type", id: 2, kind: .scalar(size: 1)),
        ]),
        // 9
        TableLayout(name: "ValueRange", fields: [
          FieldLayout(name: "min", id: 0, kind: .scalar(size: 4)),
          FieldLayout(name: "max", id: 1, kind: .scalar(size: 4)),
        ]),
        // 10
        TableLayout(name: "ProcessUnit", fields: [
          FieldLayout(name: "options_type", id: 0, kind: .unionType(union: 1)),
          FieldLayout(name: "options", id: 1, kind: .unionValue(union: 1, typeFieldID: 0)),
        ]),
        // 11
        TableLayout(name: "NormalizationOptions", fields: [
          FieldLayout(name: "mean", id: 0, kind: .scalarVector(elementSize: 4)),
          FieldLayout(name: "std", id: 1, kind: .scalarVector(elementSize: 4)),
        ]),
        // 12
        TableLayout(name: "ScoreCalibrationOptions", fields: [
          FieldLayout(name: "score_transformation", id: 0, kind: .scalar(size: 1)),
          FieldLayout(name: "default_score", id: 1, kind: .scalar(size: 4)),
        ]),
        // 13
        TableLayout(name: "ScoreThresholdingOptions", fields: [
          FieldLayout(name: "global_score_threshold", id: 0, kind: .scalar(size: 4)),
        ]),
        // 14
        TableLayout(name: "BertTokenizerOptions", fields: [
          FieldLayout(name: "vocab_file", id: 0, kind: .tableVector(associatedFile)),
        ]),
        // 15
        TableLayout(name: "SentencePieceTokenizerOptions", fields: [
          FieldLayout(name: "sentencePiece_model", id: 0, kind: .tableVector(associatedFile)),
          FieldLayout(name: "vocab_file", id: 1, kind: .tableVector(associatedFile)),
        ]),
        // 16
        TableLayout(name: "Stats", fields: [
          FieldLayout(name: "max", id: 0, kind: .scalarVector(elementSize: 4)),
          FieldLayout(name: "min", id: 1, kind: .scalarVector(elementSize: 4)),
        ]),
        // 17
        TableLayout(name: "TensorGroup", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "tensor_names", id: 1, kind: .stringVector),
        ]),
        // 18
        TableLayout(name: "RegexTokenizerOptions", fields: [
          FieldLayout(name: "delim_regex_pattern", id: 0, kind: .string),
          FieldLayout(name: "vocab_file", id: 1, kind: .tableVector(associatedFile)),
        ]),
        // 19
        TableLayout(name: "AudioProperties", fields: [
          FieldLayout(name: "sample_rate", id: 0, kind: .scalar(size: 4)),
          FieldLayout(name: "channels", id: 1, kind: .scalar(size: 4)),
        ]),
        // 20
        TableLayout(name: "CustomMetadata", fields: [
          FieldLayout(name: "name", id: 0, kind: .string),
          FieldLayout(name: "data", id: 1, kind: .scalarVector(elementSize: 1)),
        ]),
      ],
      unions: [
        UnionLayout(name: "ContentProperties", memberTables: [5, 6, 8, 19]),
        UnionLayout(name: "ProcessUnitOptions", memberTables: [11, 12, 13, 14, 15, 18]),
      ],
      rootTable: 0,
      fileIdentifier: "M001")
  }()
}
