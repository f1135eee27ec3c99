"""Recurrent operators: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM, RNN,
UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN and SVDF, plus Keras recurrent layers.
Written to `sequence/`; every case name starts with `seq_` (regenerate with --only '^seq_').

Today's converter turns Keras recurrent layers into WHILE loops, so the fused operators are
written directly with the schema's object API: one operator, seeded weights as constants,
optional operands absent (-1) and the states as variable tensors (zero at allocation, as LiteRT
resets them). LiteRT's reference kernels compute the expected outputs of the written file.
"""

import flatbuffers
import numpy as np
import tensorflow as tf
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema

from .core import FLOAT32, HYBRID, Case, Input, Rng, model_inputs

CASES = []
GROUP = "sequence"


def _tensor(name, shape, dtype, buffer=0, variable=False, quantization=None):
  tensor = schema.TensorT()
  tensor.name, tensor.shape, tensor.buffer = name, [int(d) for d in shape], buffer
  tensor.type = {"float32": schema.TensorType.FLOAT32, "int8": schema.TensorType.INT8}[np.dtype(dtype).name]
  tensor.isVariable = variable
  if quantization is not None:
    tensor.quantization = schema.QuantizationParametersT()
    tensor.quantization.scale = [float(np.float32(quantization))]
    tensor.quantization.zeroPoint = [0]
  return tensor


def _buffer(data=None):
  buffer = schema.BufferT()
  buffer.data = None if data is None else np.frombuffer(data, dtype=np.uint8)
  return buffer


class State:
  """A variable (state) operand of the given shape."""

  def __init__(self, shape):
    self.shape = shape


def _symmetric_int8(values):
  """Per-tensor symmetric int8 weights and their scale, as the converter writes dynamic-range weights."""
  scale = float(np.max(np.abs(values))) / 127 or 1.0
  return np.clip(np.round(values / scale), -127, 127).astype(np.int8), scale


def _pack(code, inputs, operands, output_shapes, options, version, int8_operands):
  model = schema.ModelT()
  model.version = 3
  model.description = f"{code} test model"
  opcode = schema.OperatorCodeT()
  opcode.builtinCode = getattr(schema.BuiltinOperator, code)
  opcode.deprecatedBuiltinCode = min(opcode.builtinCode, 127)
  opcode.version = version
  model.operatorCodes = [opcode]
  model.buffers = [_buffer()]
  tensors = [_tensor(f"x{i}" if i else "x", shape, "float32") for i, shape in enumerate(inputs)]
  operator_inputs = []
  for position, operand in enumerate(operands):
    if operand is None:
      operator_inputs.append(-1)
    elif isinstance(operand, int):
      operator_inputs.append(operand)
    elif isinstance(operand, State):
      tensors.append(_tensor(f"state_{len(tensors)}", operand.shape, "float32", variable=True))
      operator_inputs.append(len(tensors) - 1)
    else:
      constant = np.ascontiguousarray(operand, dtype=np.float32)
      quantization = None
      if position in int8_operands:
        constant, quantization = _symmetric_int8(constant)
      model.buffers.append(_buffer(constant.tobytes()))
      tensors.append(_tensor(f"constant_{len(tensors)}", constant.shape, constant.dtype, len(model.buffers) - 1,
                             quantization=quantization))
      operator_inputs.append(len(tensors) - 1)
  first_output = len(tensors)
  tensors += [_tensor(f"y{i}" if i else "y", shape, "float32") for i, shape in enumerate(output_shapes)]
  operator = schema.OperatorT()
  operator.opcodeIndex, operator.inputs = 0, operator_inputs
  operator.outputs = list(range(first_output, len(tensors)))
  operator.builtinOptionsType = getattr(schema.BuiltinOptions, type(options).__name__[:-1])
  operator.builtinOptions = options
  subgraph = schema.SubGraphT()
  subgraph.name = "main"
  subgraph.tensors, subgraph.operators = tensors, [operator]
  subgraph.inputs, subgraph.outputs = list(range(len(inputs))), list(operator.outputs)
  model.subgraphs = [subgraph]
  builder = flatbuffers.Builder(1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  return bytes(builder.Output())


def recurrent_model(code, inputs, operands, output_count, options, version=1, int8_operands=()):
  """A one-operator model: `inputs` are the model inputs' shapes; `operands` the operator's inputs
  in order (an int: a model input, None: absent, State: a variable tensor, an array: a constant
  weight, int8 with a per-tensor scale when its position is in `int8_operands`, as dynamic-range
  quantization stores weights). The output shapes are the ones LiteRT computes."""
  int8_operands = frozenset(int8_operands)
  model = _pack(code, inputs, operands, [[1]] * output_count, options, version, int8_operands)
  interpreter = litert.Interpreter(model_content=model)
  interpreter.allocate_tensors()
  shapes = [list(detail["shape"]) for detail in interpreter.get_output_details()]
  return _pack(code, inputs, operands, shapes, options, version, int8_operands)


def _record_second_invoke(case):
  """Annotation: LiteRT's outputs of a second invoke on the same inputs, which start from the
  states the first invoke left (inline in the manifest entry as `second_invoke_outputs`)."""
  def annotate(entry, model_bytes):
    inputs, _ = model_inputs(case, model_bytes, Rng(case.name + "/inputs"))
    interpreter = litert.Interpreter(model_content=model_bytes, num_threads=1,
                                     experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    for _ in range(2):
      for detail, values in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], values)
      interpreter.invoke()
    entry["second_invoke_outputs"] = [interpreter.get_tensor(detail["index"]).reshape(-1).tolist()
                                      for detail in interpreter.get_output_details()]
  return annotate


def case(name, inputs, build, expect, mode=FLOAT32, **options):
  CASES.append(Case(name=name, group=GROUP, mode=mode, inputs=[Input(shape) for shape in inputs], make=lambda r: None,
                    build=build, expect=[expect], **options))
  CASES[-1].annotate = _record_second_invoke(CASES[-1])


def _activation(name):
  return getattr(schema.ActivationFunctionType, name)


# --- LSTM operands ------------------------------------------------------------------------------

def lstm_operands(r, n_input, n_cell, n_output=None, cifg=False, peephole=False, projection=False,
                  projection_bias=False, layer_norm=False, input_index=0, batch=1):
  """The 17 weight operands of one LSTM direction plus its two states (and, with `layer_norm`,
  the four coefficient vectors, returned separately)."""
  n_output = n_output or n_cell
  matrix = lambda rows, cols: r.uniform((rows, cols), -0.6, 0.6)
  vector = lambda: r.uniform((n_cell,), -0.5, 0.5)
  input_weights = [None if cifg and gate == 0 else matrix(n_cell, n_input) for gate in range(4)]
  recurrent = [None if cifg and gate == 0 else matrix(n_cell, n_output) for gate in range(4)]
  peepholes = [None if not peephole or (cifg and gate == 0) else vector() for gate in range(3)]
  biases = [None if cifg and gate == 0 else vector() for gate in range(4)]
  biases[1] = biases[1] + 1.0  # a forget bias like Keras' unit_forget_bias
  projection_weights = matrix(n_output, n_cell) if projection else None
  projection_bias_values = r.uniform((n_output,), -0.2, 0.2) if projection_bias else None
  weights = input_weights + recurrent + peepholes + biases + [projection_weights, projection_bias_values]
  states = [State((batch, n_output)), State((batch, n_cell))]
  norms = [None if cifg and gate == 0 else r.uniform((n_cell,), 0.5, 1.5) for gate in range(4)] if layer_norm else []
  return weights, states, norms


def unidirectional_lstm(time_major=False, batch=2, steps=5, n_input=4, n_cell=6, n_output=None, cell_clip=0.0,
                        proj_clip=0.0, activation="TANH", twenty=False, single_step=False, hybrid=False,
                        asymmetric=False, **variant):
  def build(r):
    weights, states, norms = lstm_operands(r, n_input, n_cell, n_output, batch=batch, **variant)
    operands = [0] + weights + states + ([] if twenty else (norms or [None] * 4))
    if single_step:
      options = schema.LSTMOptionsT()
      code, shape = "LSTM", (batch, n_input)
    else:
      options = schema.UnidirectionalSequenceLSTMOptionsT()
      options.timeMajor = time_major
      code, shape = "UNIDIRECTIONAL_SEQUENCE_LSTM", (steps, batch, n_input) if time_major else (batch, steps, n_input)
    options.fusedActivationFunction = _activation(activation)
    options.cellClip, options.projClip = cell_clip, proj_clip
    options.asymmetricQuantizeInputs = asymmetric
    # Dynamic-range weights: every matrix and peephole (operands 1-11) and the projection (16).
    return recurrent_model(code, [shape], operands, 1, options, version=3 if hybrid else 1,
                           int8_operands=[*range(1, 12), 16] if hybrid else ())
  return build


def _sequence_shape(time_major, batch, steps, n_input):
  return (steps, batch, n_input) if time_major else (batch, steps, n_input)


for name, settings in {
    "basic": {},
    "time_major": {"time_major": True},
    "batch1_long": {"batch": 1, "steps": 12},
    "peephole_cell_clip": {"peephole": True, "cell_clip": 0.4},
    "projection_clip": {"projection": True, "projection_bias": True, "n_output": 3, "proj_clip": 0.3},
    "projection_no_bias": {"projection": True, "n_output": 5},
    "layer_norm": {"layer_norm": True},
    "cifg_peephole": {"cifg": True, "peephole": True},
    "cifg_layer_norm_projection": {"cifg": True, "layer_norm": True, "projection": True, "n_output": 4,
                                   "time_major": True},
    "relu6": {"activation": "RELU6"},
    "twenty_operands": {"twenty": True, "peephole": True},
}.items():
  time_major = settings.get("time_major", False)
  shape = _sequence_shape(time_major, settings.get("batch", 2), settings.get("steps", 5), 4)
  case(f"seq_ulstm_f32_{name}", [shape], unidirectional_lstm(**settings), "UNIDIRECTIONAL_SEQUENCE_LSTM")

for name, settings in {
    "full": {},
    "peephole_projection": {"peephole": True, "projection": True, "projection_bias": True, "n_output": 3,
                            "cell_clip": 0.8, "twenty": True},
    "layer_norm": {"layer_norm": True, "cifg": True},
}.items():
  case(f"seq_lstm_f32_{name}", [(2, 4)], unidirectional_lstm(single_step=True, **settings), "LSTM")


def bidirectional_lstm(time_major=False, batch=1, steps=4, n_input=3, n_cell=5, merge=True, aux=None, **variant):
  """`aux`: None, "weights" (an auxiliary input with weights for both directions) or "input" (an
  auxiliary input without weights: the backward direction's input)."""
  def build(r):
    forward, forward_states, _ = lstm_operands(r, n_input, n_cell, batch=batch, **variant)
    backward, backward_states, _ = lstm_operands(r, n_input, n_cell, batch=batch, **variant)
    aux_weights = [None] * 8
    if aux == "weights":
      aux_weights = [r.uniform((n_cell, 2), -0.6, 0.6) for _ in range(8)]
    operands = ([0] + forward + backward + forward_states + backward_states + [1 if aux else None] + aux_weights)
    options = schema.BidirectionalSequenceLSTMOptionsT()
    options.fusedActivationFunction = _activation("TANH")
    options.mergeOutputs, options.timeMajor = merge, time_major
    inputs = [_sequence_shape(time_major, batch, steps, n_input)]
    if aux:
      inputs.append(_sequence_shape(time_major, batch, steps, 2 if aux == "weights" else n_input))
    return recurrent_model("BIDIRECTIONAL_SEQUENCE_LSTM", inputs, operands, 1 if merge else 2, options)
  return build, inputs_of(time_major, batch, steps, n_input, aux)


def inputs_of(time_major, batch, steps, n_input, aux):
  shapes = [_sequence_shape(time_major, batch, steps, n_input)]
  if aux:
    shapes.append(_sequence_shape(time_major, batch, steps, 2 if aux == "weights" else n_input))
  return shapes


for name, settings in {
    "merged": {},
    "separate_time_major": {"merge": False, "time_major": True, "batch": 2},
    "aux_weights": {"aux": "weights", "time_major": True},
    "aux_backward_input": {"aux": "input", "merge": False},
    "peephole_cifg": {"peephole": True, "cifg": True, "time_major": True, "batch": 2},
}.items():
  build, shapes = bidirectional_lstm(**settings)
  case(f"seq_bilstm_f32_{name}", shapes, build, "BIDIRECTIONAL_SEQUENCE_LSTM")


# --- RNN ----------------------------------------------------------------------------------------

def rnn_operands(r, n_input, units, batch):
  return [r.uniform((units, n_input), -0.7, 0.7), r.uniform((units, units), -0.5, 0.5),
          r.uniform((units,), -0.3, 0.3), State((batch, units))]


def rnn(kind, time_major=False, batch=2, steps=5, n_input=4, units=6, activation="TANH", hybrid=False,
        asymmetric=False):
  def build(r):
    operands = [0] + rnn_operands(r, n_input, units, batch)
    if kind == "RNN":
      options, shape = schema.RNNOptionsT(), (batch, n_input)
    else:
      options = schema.SequenceRNNOptionsT()
      options.timeMajor = time_major
      shape = _sequence_shape(time_major, batch, steps, n_input)
    options.fusedActivationFunction = _activation(activation)
    options.asymmetricQuantizeInputs = asymmetric
    return recurrent_model(kind, [shape], operands, 1, options, version=3 if hybrid else 1,
                           int8_operands=(1, 2) if hybrid else ())
  shape = (batch, n_input) if kind == "RNN" else _sequence_shape(time_major, batch, steps, n_input)
  return build, [shape]


for name, kind, settings in [
    ("seq_rnn_f32_tanh", "RNN", {}),
    ("seq_rnn_f32_relu", "RNN", {"activation": "RELU"}),
    ("seq_urnn_f32_tanh", "UNIDIRECTIONAL_SEQUENCE_RNN", {}),
    ("seq_urnn_f32_time_major_relu_n1", "UNIDIRECTIONAL_SEQUENCE_RNN", {"time_major": True, "activation": "RELU_N1_TO_1"}),
    ("seq_urnn_f32_none_long", "UNIDIRECTIONAL_SEQUENCE_RNN", {"activation": "NONE", "batch": 1, "steps": 10}),
]:
  build, shapes = rnn(kind, **settings)
  case(name, shapes, build, kind)


def bidirectional_rnn(time_major=False, batch=2, steps=4, n_input=3, units=5, merge=True):
  def build(r):
    operands = [0] + rnn_operands(r, n_input, units, batch) + rnn_operands(r, n_input, units + 1, batch)
    options = schema.BidirectionalSequenceRNNOptionsT()
    options.fusedActivationFunction = _activation("TANH")
    options.mergeOutputs, options.timeMajor = merge, time_major
    return recurrent_model("BIDIRECTIONAL_SEQUENCE_RNN", [_sequence_shape(time_major, batch, steps, n_input)],
                           operands + [None, None, None], 1 if merge else 2, options)
  return build, [_sequence_shape(time_major, batch, steps, n_input)]


for name, settings in {"merged": {}, "separate_time_major": {"merge": False, "time_major": True}}.items():
  build, shapes = bidirectional_rnn(**settings)
  case(f"seq_birnn_f32_{name}", shapes, build, "BIDIRECTIONAL_SEQUENCE_RNN")


# --- SVDF ---------------------------------------------------------------------------------------

def svdf(batch=2, n_input=5, units=4, rank=1, memory=6, bias=True, activation="NONE", hybrid=False,
         asymmetric=False):
  def build(r):
    filters = units * rank
    operands = [0, r.uniform((filters, n_input), -0.7, 0.7), r.uniform((filters, memory), -0.7, 0.7),
                r.uniform((units,), -0.3, 0.3) if bias else None, State((batch, memory * filters))]
    options = schema.SVDFOptionsT()
    options.rank = rank
    options.fusedActivationFunction = _activation(activation)
    options.asymmetricQuantizeInputs = asymmetric
    return recurrent_model("SVDF", [(batch, n_input)], operands, 1, options, version=4 if hybrid else 1,
                           int8_operands=(1, 2) if hybrid else ())
  return build


for name, settings in {
    "rank1": {},
    "rank2_relu": {"rank": 2, "activation": "RELU"},
    "no_bias_batch1": {"bias": False, "batch": 1, "memory": 3},
}.items():
  case(f"seq_svdf_f32_{name}", [(settings.get("batch", 2), 5)], svdf(**settings), "SVDF")


# --- Dynamic-range ("hybrid") weights: int8 with one scale, float activations -------------------

for name, settings in {
    "basic": {},
    "asymmetric_time_major": {"asymmetric": True, "time_major": True},
    "peephole_projection": {"peephole": True, "projection": True, "projection_bias": True, "n_output": 3},
    "cifg_layer_norm": {"cifg": True, "layer_norm": True},
}.items():
  time_major = settings.get("time_major", False)
  case(f"seq_ulstm_hybrid_{name}", [_sequence_shape(time_major, 2, 5, 4)],
       unidirectional_lstm(hybrid=True, **settings), "UNIDIRECTIONAL_SEQUENCE_LSTM", mode=HYBRID)
case("seq_lstm_hybrid_full", [(2, 4)], unidirectional_lstm(single_step=True, hybrid=True), "LSTM", mode=HYBRID)

for name, kind, settings in [
    ("seq_rnn_hybrid_relu", "RNN", {"activation": "RELU"}),
    ("seq_urnn_hybrid_relu", "UNIDIRECTIONAL_SEQUENCE_RNN", {"activation": "RELU"}),
    ("seq_urnn_hybrid_asymmetric_none", "UNIDIRECTIONAL_SEQUENCE_RNN", {"activation": "NONE", "asymmetric": True}),
    ("seq_urnn_hybrid_tanh", "UNIDIRECTIONAL_SEQUENCE_RNN", {}),
]:
  build, shapes = rnn(kind, hybrid=True, **settings)
  case(name, shapes, build, kind, mode=HYBRID)

for name, settings in {"rank1": {}, "rank2_relu_asymmetric": {"rank": 2, "activation": "RELU", "asymmetric": True}}.items():
  case(f"seq_svdf_hybrid_{name}", [(2, 5)], svdf(hybrid=True, **settings), "SVDF", mode=HYBRID)


# --- Keras recurrent layers (converted; today's converter writes WHILE loops) ---------------------

def keras_model(layer, shape, batch_size=None):
  def make(r):
    inputs = tf.keras.Input(shape=shape[1:], batch_size=batch_size or shape[0])
    return tf.keras.Model(inputs, layer()(inputs))
  return make


for name, layer, shape in [
    ("simple_rnn_sequences", lambda: tf.keras.layers.SimpleRNN(5, return_sequences=True), (1, 6, 3)),
    ("gru_last", lambda: tf.keras.layers.GRU(4), (1, 5, 3)),
    ("lstm_last", lambda: tf.keras.layers.LSTM(5), (2, 4, 3)),
    ("bidirectional_lstm", lambda: tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, return_sequences=True)),
     (1, 5, 3)),
    ("stacked_gru_lstm", lambda: tf.keras.Sequential([tf.keras.layers.GRU(6, return_sequences=True),
                                                     tf.keras.layers.LSTM(3)]), (2, 7, 4)),
    ("stateful_lstm", lambda: tf.keras.layers.LSTM(4, stateful=True, return_sequences=True), (1, 5, 3)),
]:
  CASES.append(Case(name=f"seq_keras_f32_{name}", group=GROUP, mode=FLOAT32, kind="network", inputs=[Input(shape)],
                    make=keras_model(layer, shape), expect=["WHILE"]))
  if "stateful" in name:  # the state lives in resource variables that the next invoke reads
    CASES[-1].annotate = _record_second_invoke(CASES[-1])
