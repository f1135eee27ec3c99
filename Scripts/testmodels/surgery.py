"""Edits of converted models for operator settings today's converter never emits.

Old converters (TOCO, TF 1.x) wrote operators and options that the current MLIR converter
folds away or decomposes: L2_POOL_2D, SOFTMAX with beta != 1, SQUEEZE with static shapes...
Real files still contain them, so some cases convert a neighbouring model and rewrite one
operator with the schema's object API. The reference interpreter then computes the outputs of
the edited file like for any other model.
"""

import flatbuffers
import numpy as np
from flatbuffers import flexbuffers
from ai_edge_litert import schema_py_generated as schema

from . import flatbuf


def edit(model_bytes, change):
  """Unpacks the model, lets `change(model)` modify the object tree, and packs it again."""
  model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
  change(model)
  builder = flatbuffers.Builder(1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  return bytes(builder.Output())


def _operators(model, name):
  for op in model.subgraphs[0].operators:
    if flatbuf.operator_name(model.operatorCodes[op.opcodeIndex]) == name:
      yield op


def _opcode_index(model, name, version=1):
  code_value = getattr(schema.BuiltinOperator, name)
  for index, code in enumerate(model.operatorCodes):
    if flatbuf.operator_name(code) == name:
      return index
  code = schema.OperatorCodeT()
  code.builtinCode = code_value
  code.deprecatedBuiltinCode = min(code_value, 127)
  code.version = version
  model.operatorCodes.append(code)
  return len(model.operatorCodes) - 1


def set_options(op_name, **fields):
  """Sets builtin option fields (object-API camelCase names) on every `op_name` operator."""
  def change(model):
    for op in _operators(model, op_name):
      for field, value in fields.items():
        setattr(op.builtinOptions, field, value)
  return lambda model_bytes: edit(model_bytes, change)


def retarget(op_name, new_name, version=1, drop_inputs_after=None, options_type=None, options=None):
  """Turns every `op_name` operator into `new_name` (same tensors), optionally with new options."""
  def change(model):
    new_index = _opcode_index(model, new_name, version)
    for op in _operators(model, op_name):
      op.opcodeIndex = new_index
      if drop_inputs_after is not None:
        op.inputs = op.inputs[:drop_inputs_after]
      if options_type is not None:
        op.builtinOptionsType = getattr(schema.BuiltinOptions, options_type)
        op.builtinOptions = options
    used = {op.opcodeIndex for op in model.subgraphs[0].operators}
    if len(used) != len(model.operatorCodes):
      _drop_unused_opcodes(model, used)
  return lambda model_bytes: edit(model_bytes, change)


def _drop_unused_opcodes(model, used):
  keep = sorted(used)
  remap = {old: new for new, old in enumerate(keep)}
  model.operatorCodes = [model.operatorCodes[i] for i in keep]
  for subgraph in model.subgraphs:
    for op in subgraph.operators:
      op.opcodeIndex = remap[op.opcodeIndex]


def squeeze_options(dims):
  options = schema.SqueezeOptionsT()
  options.squeezeDims = list(dims)
  return options


def _tensor(name, shape, buffer, tensor_type=schema.TensorType.FLOAT32):
  tensor = schema.TensorT()
  tensor.name, tensor.shape, tensor.type, tensor.buffer = name, list(shape), tensor_type, buffer
  return tensor


def _buffer(data=None):
  buffer = schema.BufferT()
  buffer.data = None if data is None else np.frombuffer(data, dtype=np.uint8)
  return buffer


def detection_postprocess_model(anchor_centers_and_sizes, num_classes, options):
  """A one-operator model running the TFLite_Detection_PostProcess custom op (SSD heads).

  Inputs: box encodings [1, N, 4] and class scores [1, N, num_classes + 1] (background first);
  the anchors [N, 4] (y_center, x_center, h, w) are a constant. Outputs: boxes, classes,
  scores and the number of detections, as the op defines them.
  """
  anchors = np.ascontiguousarray(anchor_centers_and_sizes, dtype=np.float32)
  count, detections = anchors.shape[0], options["max_detections"] * options["max_classes_per_detection"]
  model = schema.ModelT()
  model.version = 3
  model.description = "TFLite_Detection_PostProcess test model"
  code = schema.OperatorCodeT()
  code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
  code.customCode = "TFLite_Detection_PostProcess"
  code.version = 1
  model.operatorCodes = [code]
  model.buffers = [_buffer(), _buffer(anchors.tobytes())]
  subgraph = schema.SubGraphT()
  subgraph.name = "main"
  subgraph.tensors = [
      _tensor("x", (1, count, 4), 0), _tensor("x1", (1, count, num_classes + 1), 0), _tensor("anchors", (count, 4), 1),
      _tensor("detection_boxes", (1, detections, 4), 0), _tensor("detection_classes", (1, detections), 0),
      _tensor("detection_scores", (1, detections), 0), _tensor("num_detections", (1,), 0),
  ]
  operator = schema.OperatorT()
  operator.opcodeIndex, operator.inputs, operator.outputs = 0, [0, 1, 2], [3, 4, 5, 6]
  operator.customOptions = np.frombuffer(bytes(flexbuffers.Dumps(options)), dtype=np.uint8)
  operator.customOptionsFormat = schema.CustomOptionsFormat.FLEXBUFFERS
  subgraph.operators = [operator]
  subgraph.inputs, subgraph.outputs = [0, 1], [3, 4, 5, 6]
  model.subgraphs = [subgraph]
  builder = flatbuffers.Builder(1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  return bytes(builder.Output())
