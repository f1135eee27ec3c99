"""Runs a model with LiteRT, in this process or in a child process.

Kept free of TensorFlow imports so that a child process starts quickly. Some LiteRT kernels
abort the whole process on inputs they do not handle (BUILTIN_REF's int8 SOFTMAX on tiny input
scales); `run_isolated` turns such an abort into an exception.
"""

import concurrent.futures
import multiprocessing

from ai_edge_litert import interpreter as litert


def run(model_bytes, inputs, resolver_name="BUILTIN_REF"):
  """Runs the model once with one thread and returns copies of every output."""
  resolver = getattr(litert.OpResolverType, resolver_name)
  interpreter = litert.Interpreter(model_content=model_bytes, experimental_op_resolver_type=resolver,
                                   num_threads=1)
  details = interpreter.get_input_details()
  for detail, value in zip(details, inputs):
    if list(detail["shape"]) != list(value.shape):
      interpreter.resize_tensor_input(detail["index"], value.shape, strict=False)
  interpreter.allocate_tensors()
  for detail, value in zip(details, inputs):
    interpreter.set_tensor(detail["index"], value)
  interpreter.invoke()
  return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


class ProcessDied(Exception):
  """LiteRT ended its process (an abort inside a kernel)."""


def run_isolated(model_bytes, inputs, resolver_name="BUILTIN_REF"):
  """`run` in a fresh child process."""
  context = multiprocessing.get_context("spawn")
  with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
    try:
      return pool.submit(run, model_bytes, inputs, resolver_name).result()
    except concurrent.futures.process.BrokenProcessPool as error:
      raise ProcessDied(f"{resolver_name} ended the process (a kernel aborted)") from error
