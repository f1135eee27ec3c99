"""Edits of converted models for operator settings today's converter never emits.

Old converters (TOCO, TF 1.x) wrote operators and options that the current MLIR converter
folds away or decomposes: L2_POOL_2D, SOFTMAX with beta != 1, SQUEEZE with static shapes...
Real files still contain them, so some cases convert a neighbouring model and rewrite one
operator with the schema's object API. The reference interpreter then computes the outputs of
the edited file like for any other model.
"""

import flatbuffers
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
