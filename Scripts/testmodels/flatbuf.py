"""Reads the facts the manifest records straight from a .tflite flatbuffer.

The manifest describes what is in the file (not what an interpreter made of it), so the
operator list, tensor table and builtin options come from the schema's object API.
"""

import re

import numpy as np
from ai_edge_litert import schema_py_generated as schema


def _enum_names(enum_class):
  return {value: name for name, value in vars(enum_class).items() if not name.startswith("_")}


BUILTIN_OPERATOR_NAMES = _enum_names(schema.BuiltinOperator)
TENSOR_TYPE_NAMES = _enum_names(schema.TensorType)
BUILTIN_OPTIONS_NAMES = _enum_names(schema.BuiltinOptions)
BUILTIN_OPTIONS2_NAMES = _enum_names(schema.BuiltinOptions2)


def _snake_case(camel):
  return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def _plain(value):
  """Turns object-API values into JSON-friendly Python values."""
  if isinstance(value, np.ndarray):
    return [_plain(v) for v in value.tolist()]
  if isinstance(value, (list, tuple)):
    return [_plain(v) for v in value]
  if isinstance(value, (np.integer,)):
    return int(value)
  if isinstance(value, (np.floating,)):
    return float(value)
  if isinstance(value, bytes):
    return value.decode("utf-8", "replace")
  if hasattr(value, "__dict__"):
    return {_snake_case(k): _plain(v) for k, v in vars(value).items()}
  return value


def operator_name(code):
  """The BuiltinOperator name of an OperatorCodeT, or the custom code for custom ops."""
  # Files from before the 127-op limit only set the deprecated byte; newer ones set both
  # (the byte holding PLACEHOLDER_FOR_GREATER_OP_CODES), so the larger value is the real code.
  builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
  name = BUILTIN_OPERATOR_NAMES[builtin]
  if name == "CUSTOM":
    return code.customCode.decode() if isinstance(code.customCode, bytes) else code.customCode
  return name


def quantization_dict(quantization):
  """`{"scale", "zero_point", "quantized_dimension"}` or None when the tensor has no scales."""
  if quantization is None or quantization.scale is None or len(quantization.scale) == 0:
    return None
  return {
      "scale": [float(s) for s in np.asarray(quantization.scale, dtype=np.float32)],
      "zero_point": [int(z) for z in quantization.zeroPoint],
      "quantized_dimension": int(quantization.quantizedDimension),
  }


class ModelFacts:
  """Operators, tensors and options of subgraph 0 of a flatbuffer model."""

  def __init__(self, model_bytes):
    self.model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
    self.subgraph = self.model.subgraphs[0]

  def operators(self, subgraph_index=0):
    """One entry per operator in execution order: op name, version, inputs, outputs, options."""
    result = []
    for op in self.model.subgraphs[subgraph_index].operators or []:
      code = self.model.operatorCodes[op.opcodeIndex]
      entry = {"op": operator_name(code), "version": int(code.version)}
      entry["inputs"] = _plain(op.inputs) if op.inputs is not None else []
      entry["outputs"] = _plain(op.outputs) if op.outputs is not None else []
      if op.builtinOptionsType:
        entry["options_type"] = BUILTIN_OPTIONS_NAMES[op.builtinOptionsType]
        entry["options"] = _plain(op.builtinOptions) if op.builtinOptions is not None else {}
      if op.builtinOptions2Type:
        entry["options_type"] = BUILTIN_OPTIONS2_NAMES[op.builtinOptions2Type]
        entry["options"] = _plain(op.builtinOptions2) if op.builtinOptions2 is not None else {}
      result.append(entry)
    return result

  def tensors(self):
    """The tensor table of subgraph 0."""
    result = []
    for index, tensor in enumerate(self.subgraph.tensors):
      shape = _plain(tensor.shape) if tensor.shape is not None else []
      entry = {
          "index": index,
          "name": _plain(tensor.name) or "",
          "type": TENSOR_TYPE_NAMES[tensor.type],
          "shape": shape,
          "shape_signature": _plain(tensor.shapeSignature) if tensor.shapeSignature is not None else shape,
          "quantization": quantization_dict(tensor.quantization),
          "constant": self._has_data(tensor.buffer),
          "sparse": tensor.sparsity is not None,
      }
      if tensor.isVariable:
        entry["variable"] = True
      result.append(entry)
    return result

  def _has_data(self, buffer_index):
    buffer = self.model.buffers[buffer_index]
    return bool((buffer.data is not None and len(buffer.data) > 0) or buffer.size > 0)

  def subgraph_count(self):
    return len(self.model.subgraphs)

  def subgraph_name(self, index):
    return _plain(self.model.subgraphs[index].name) or ""

  def signatures(self):
    """[{"key", "subgraph_index", "inputs": {name: tensor}, "outputs": {name: tensor}}] from the SignatureDefs."""
    result = []
    for signature in self.model.signatureDefs or []:
      result.append({
          "key": _plain(signature.signatureKey),
          "subgraph_index": int(signature.subgraphIndex),
          "inputs": {_plain(t.name): int(t.tensorIndex) for t in signature.inputs or []},
          "outputs": {_plain(t.name): int(t.tensorIndex) for t in signature.outputs or []},
      })
    return result

  def input_indices(self):
    return _plain(self.subgraph.inputs)

  def output_indices(self):
    return _plain(self.subgraph.outputs)
