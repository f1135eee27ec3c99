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


def retarget(op_name, new_name, version=1, keep_options=True):
  """Turns every `op_name` operator into `new_name` (same tensors; same options unless
  `keep_options` is false)."""
  def change(model):
    new_index = _opcode_index(model, new_name, version)
    for op in list(_operators(model, op_name)):
      op.opcodeIndex = new_index
      if not keep_options:
        op.builtinOptionsType, op.builtinOptions = 0, None
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


TENSOR_TYPES = {
    "float32": schema.TensorType.FLOAT32, "float16": schema.TensorType.FLOAT16, "int32": schema.TensorType.INT32,
    "int64": schema.TensorType.INT64, "int16": schema.TensorType.INT16, "int8": schema.TensorType.INT8,
    "uint8": schema.TensorType.UINT8, "bool": schema.TensorType.BOOL,
}


def _tensor(name, shape, buffer, dtype, quantization=None):
  """A tensor; `quantization` is an optional per-tensor (scale, zero_point)."""
  tensor = schema.TensorT()
  tensor.name, tensor.shape, tensor.buffer = name, list(shape), buffer
  tensor.type = TENSOR_TYPES[np.dtype(dtype).name]
  if quantization is not None:
    tensor.quantization = schema.QuantizationParametersT()
    tensor.quantization.scale = [float(np.float32(quantization[0]))]
    tensor.quantization.zeroPoint = [int(quantization[1])]
  return tensor


def _buffer(data=None):
  buffer = schema.BufferT()
  buffer.data = None if data is None else np.frombuffer(data, dtype=np.uint8)
  return buffer


def direct_model(code, inputs, operands, outputs, options=None, custom_options=None, version=1):
  """A one-operator model written with the object API instead of the converter.

  code: a BuiltinOperator name, or the custom code of a custom op; inputs / outputs: lists of
  (name, shape, dtype) or (name, shape, dtype, (scale, zero_point)) for quantized tensors;
  operands: the operator's inputs in order, each an int (a model input), a numpy array (a
  constant) or (array, (scale, zero_point)) (a quantized constant); options: a builtin options
  object (e.g. StridedSliceOptionsT); custom_options: a dict written as a FlexBuffer map.
  """
  model = schema.ModelT()
  model.version = 3
  model.description = f"{code} test model"
  opcode = schema.OperatorCodeT()
  builtin = getattr(schema.BuiltinOperator, code, None)
  opcode.builtinCode = schema.BuiltinOperator.CUSTOM if builtin is None else builtin
  opcode.deprecatedBuiltinCode = min(opcode.builtinCode, 127)
  if builtin is None:
    opcode.customCode = code
  opcode.version = version
  model.operatorCodes = [opcode]
  model.buffers = [_buffer()]
  tensors = [_tensor(name, shape, 0, *rest) for name, shape, *rest in inputs]
  operator_inputs = []
  for operand in operands:
    if isinstance(operand, int):
      operator_inputs.append(operand)
      continue
    operand, quantization = operand if isinstance(operand, tuple) else (operand, None)
    constant = np.ascontiguousarray(operand)
    model.buffers.append(_buffer(constant.tobytes()))
    tensors.append(_tensor(f"constant_{len(tensors)}", constant.shape, len(model.buffers) - 1, constant.dtype,
                           quantization))
    operator_inputs.append(len(tensors) - 1)
  first_output = len(tensors)
  tensors += [_tensor(name, shape, 0, *rest) for name, shape, *rest in outputs]
  operator = schema.OperatorT()
  operator.opcodeIndex, operator.inputs = 0, operator_inputs
  operator.outputs = list(range(first_output, len(tensors)))
  if options is not None:
    operator.builtinOptionsType = getattr(schema.BuiltinOptions, type(options).__name__[:-1])
    operator.builtinOptions = options
  if custom_options is not None:
    operator.customOptions = np.frombuffer(bytes(flexbuffers.Dumps(custom_options)), dtype=np.uint8)
    operator.customOptionsFormat = schema.CustomOptionsFormat.FLEXBUFFERS
  subgraph = schema.SubGraphT()
  subgraph.name = "main"
  subgraph.tensors, subgraph.operators = tensors, [operator]
  subgraph.inputs, subgraph.outputs = list(range(len(inputs))), list(operator.outputs)
  model.subgraphs = [subgraph]
  builder = flatbuffers.Builder(1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  return bytes(builder.Output())


def direct_model_with_output_shapes(code, inputs, operands, outputs, **options):
  """`direct_model` whose output shapes are the ones LiteRT computes at allocation (the given
  output shapes are only a starting point)."""
  from ai_edge_litert import interpreter as litert
  interpreter = litert.Interpreter(model_content=direct_model(code, inputs, operands, outputs, **options))
  interpreter.allocate_tensors()
  shapes = [list(detail["shape"]) for detail in interpreter.get_output_details()]
  outputs = [(name, shape, *rest) for (name, _, *rest), shape in zip(outputs, shapes)]
  return direct_model(code, inputs, operands, outputs, **options)
