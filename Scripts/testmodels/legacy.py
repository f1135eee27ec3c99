"""uint8 models with uint8 kernels, as TF 1.x quantization-aware training produced them.

Today's converter quantizes to int8 and only wraps uint8 inputs and outputs around the int8
graph. Models from TOCO-era QAT (and AutoML Vision Edge exports) run uint8 kernels with per-tensor
asymmetric weights instead. The TF1 converter still writes those from a graph with
`FakeQuant` nodes: this module builds such a graph (fake-quant on every input and after every
stage, ranges measured on calibration data) and converts it with `inference_type=uint8`.
"""

import numpy as np
import tensorflow as tf

from .core import Rng, input_name

tf1 = tf.compat.v1


def _stages(case, rng):
  built = case.make(rng)
  return built if isinstance(built, list) else [built]


def _as_list(values):
  return list(values) if isinstance(values, (list, tuple)) else [values]


def _placeholders(case):
  return [tf1.placeholder(tf.as_dtype(spec.dtype), list(spec.shape), name=input_name(i))
          for i, spec in enumerate(case.inputs)]


def _stage_ranges(case, samples):
  """(min, max) of every stage's outputs over the calibration samples, widened to contain 0."""
  graph = tf.Graph()
  with graph.as_default():
    placeholders = _placeholders(case)
    values, outputs = placeholders, []
    for stage in _stages(case, Rng(case.name)):
      values = _as_list(stage(*values))
      outputs.append(values)
    with tf1.Session(graph=graph) as session:
      ranges = [[(0.0, 0.0) for _ in stage_outputs] for stage_outputs in outputs]
      for sample in samples:
        results = session.run(outputs, dict(zip(placeholders, sample)))
        for s, stage_results in enumerate(results):
          for o, result in enumerate(stage_results):
            lo, hi = ranges[s][o]
            ranges[s][o] = (min(lo, float(np.min(result))), max(hi, float(np.max(result))))
  return ranges


def _input_stats(lo, hi):
  """(mean, std) with real = (q - mean) / std, matching FakeQuant's nudged zero point."""
  lo, hi = min(lo, 0.0), max(hi, 0.0)
  scale = (hi - lo) / 255.0
  zero_point = float(np.clip(np.round(-lo / scale), 0, 255))
  return zero_point, 1.0 / scale


def convert(case, representative):
  """The converted flatbuffer of `case` as a uint8-kernel model."""
  samples = list(representative(Rng(case.name + "/calibration"))())
  ranges = _stage_ranges(case, samples)
  graph = tf.Graph()
  with graph.as_default():
    placeholders = _placeholders(case)
    values = [tf.quantization.fake_quant_with_min_max_args(p, min(spec.lo, 0.0), max(spec.hi, 0.0))
              for p, spec in zip(placeholders, case.inputs)]
    for stage, stage_ranges in zip(_stages(case, Rng(case.name)), ranges):
      values = [tf.quantization.fake_quant_with_min_max_args(v, lo, hi) if v.dtype == tf.float32 else v
                for v, (lo, hi) in zip(_as_list(stage(*values)), stage_ranges)]
    with tf1.Session(graph=graph) as session:
      converter = tf1.lite.TFLiteConverter.from_session(session, placeholders, values)
      converter.inference_type = tf.uint8
      converter.quantized_input_stats = {
          input_name(i): _input_stats(spec.lo, spec.hi) for i, spec in enumerate(case.inputs)}
      return converter.convert()
