"""Models whose structure matters more than one kernel: several signatures, control flow
subgraphs (WHILE, IF), resource variables, buffers stored after the flatbuffer, recurrent and
detection ops (the TFLite_Detection_PostProcess custom op lives in detection.py). Written to `graphs/`.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

from .core import FLOAT32, Case, Input
from .single_ops import conv2d, image

CASES = []


def graph(name, inputs, make, expect, **options):
  CASES.append(Case(name=name, group="graphs", mode=FLOAT32, kind="network", inputs=inputs, make=make, expect=expect,
                    **options))


# --- Several signatures (one subgraph each) ----------------------------------------------------

class _TwoSignatures(tf.Module):

  def __init__(self, weights):
    super().__init__()
    self.weights = weights

  @tf.function(input_signature=[tf.TensorSpec([2, 3], name="x"), tf.TensorSpec([2, 3], name="x1")], autograph=False)
  def add(self, x, x1):
    return {"sum": x + x1}

  @tf.function(input_signature=[tf.TensorSpec([1, 4], name="x")], autograph=False)
  def dense_relu(self, x):
    return {"features": tf.nn.relu(tf.matmul(x, self.weights))}


def _saved_model_converter(module, signatures, **converter_options):
  directory = tempfile.mkdtemp(prefix="testmodels_")
  tf.saved_model.save(module, directory, signatures=signatures)
  converter = tf.lite.TFLiteConverter.from_saved_model(directory, signature_keys=list(signatures))
  for option, value in converter_options.items():
    setattr(converter, option, value)
  return converter


def _two_signatures(r):
  module = _TwoSignatures(r.const((4, 5)))
  return _saved_model_converter(module, {"add": module.add, "dense_relu": module.dense_relu})


graph("signatures_f32_add_and_dense_relu", [], _two_signatures, ["ADD"],
      signatures={"add": [Input((2, 3)), Input((2, 3))], "dense_relu": [Input((1, 4))]})


# --- Resource variables: CALL_ONCE initializes, then READ / ASSIGN on every invoke ------------

class _Accumulator(tf.Module):

  def __init__(self, initial):
    super().__init__()
    self.total = tf.Variable(initial)

  @tf.function(input_signature=[tf.TensorSpec([2, 3], name="x")], autograph=False)
  def accumulate(self, x):
    self.total.assign_add(x)
    return {"total": self.total.read_value() * 2.0}


def _accumulator(r):
  module = _Accumulator(r.normal((2, 3)))
  return _saved_model_converter(module, {"accumulate": module.accumulate}, experimental_enable_resource_variables=True)


graph("variables_f32_accumulate", [], _accumulator, ["CALL_ONCE", "VAR_HANDLE", "ASSIGN_VARIABLE", "READ_VARIABLE"],
      signatures={"accumulate": [Input((2, 3))]},
      extra={"note": "stateful: outputs are those of the first invoke after allocation"})


# --- Control flow --------------------------------------------------------------------------------

def _while_loop(r):
  def fn(x, count):
    def body(i, value):
      return i + 1, value * 0.5 + tf.sin(value)
    return tf.while_loop(lambda i, value: i < count[0], body, [tf.constant(0), x])[1]
  return fn


graph("while_f32_iterate_count", [Input((2, 3), -2, 2), Input((1,), 3, 3, "int32")], _while_loop, ["WHILE"])


def _if_branches(r):
  weights = r.const((3, 3))
  def fn(x, flag):
    return tf.cond(flag[0], lambda: tf.matmul(x, weights), lambda: tf.nn.relu(x) - 1.0)
  return fn


graph("if_f32_true_branch", [Input((2, 3), -1, 2), Input((1,), dtype="bool", values=[True])], _if_branches, ["IF"])
graph("if_f32_false_branch", [Input((2, 3), -1, 2), Input((1,), dtype="bool", values=[False])], _if_branches, ["IF"])


# --- File layout: buffers after the flatbuffer (offset / size) --------------------------------

def buffer_offset(converter):
  converter._experimental_use_buffer_offset = True


graph("conv2d_f32_buffers_after_flatbuffer", [image(8, 8, 3)], conv2d(3, 3, 3, 8, act="relu6"), ["CONV_2D"],
      tweak=buffer_offset, extra={"layout": "constant buffers stored after the flatbuffer (Buffer.offset / size)",
                                  "note": "the converter orders the trailing buffers differently from run to run, so "
                                          "the file's bytes change on regeneration; its outputs do not"})


# --- Recurrent and detection ops ----------------------------------------------------------------

def _lstm(r):
  inputs = tf.keras.Input((5, 4), batch_size=1)
  layer = tf.keras.layers.LSTM(6, return_sequences=True)
  outputs = layer(inputs)
  layer.set_weights([r.normal(w.shape, 0.5) for w in layer.get_weights()])
  return tf.keras.Model(inputs, outputs)


graph("lstm_f32_keras_while_loop", [Input((1, 5, 4))], _lstm, ["WHILE"],
      extra={"note": "Keras 3 LSTM converts to a WHILE loop over the time steps, not UNIDIRECTIONAL_SEQUENCE_LSTM"})


def _boxes(r, count):
  corners = r.uniform((count, 2), 0, 0.8)
  sizes = r.uniform((count, 2), 0.05, 0.3)
  return np.concatenate([corners, corners + sizes], axis=1).astype(np.float32)


graph("non_max_suppression_v4_f32", [Input((12, 4), values=lambda r: _boxes(r, 12)), Input((12,), 0, 1)],
      lambda r: (lambda boxes, scores: tf.raw_ops.NonMaxSuppressionV4(
          boxes=boxes, scores=scores, max_output_size=5, iou_threshold=0.4, score_threshold=0.2,
          pad_to_max_output_size=True)),
      ["NON_MAX_SUPPRESSION_V4"])
graph("non_max_suppression_v5_f32", [Input((12, 4), values=lambda r: _boxes(r, 12)), Input((12,), 0, 1)],
      lambda r: (lambda boxes, scores: tf.image.non_max_suppression_with_scores(
          boxes, scores, 5, iou_threshold=0.5, score_threshold=0.1, soft_nms_sigma=0.0)),
      ["NON_MAX_SUPPRESSION_V5"])


graph("scatter_nd_f32", [Input((3, 4))],
      lambda r: (lambda updates: tf.scatter_nd([[1], [3], [0]], updates, [5, 4])), ["SCATTER_ND"])
graph("where_f32_coordinates", [Input((3, 4), -1, 1, step=0.5)],
      lambda r: (lambda x: tf.where(x > 0)), ["WHERE"], extra={"note": "output shape depends on the data"})
