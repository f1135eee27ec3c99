extension OperatorCode {
  /// The operator this code names, whichever of the two fields holds it.
  ///
  /// Files written before the operator list outgrew a byte only set `deprecated_builtin_code`;
  /// newer converters set both (the old one capped at `PLACEHOLDER_FOR_GREATER_OP_CODES`, 127),
  /// and files from other writers may set only `builtin_code`. As in TFLite, the larger of the two wins.
  public var resolvedBuiltinCode: BuiltinOperator {
    BuiltinOperator(rawValue: max(builtinCode.rawValue, Int32(deprecatedBuiltinCode)))
  }
}
