"""SSD-style detector heads ending in the TFLite_Detection_PostProcess custom op.

The converter never emits this op from a TF graph (the Object Detection API export scripts add it
by graph rewriting), so every case converts a model that produces box encodings and class scores
and then appends the custom op to the flatbuffer: an anchors constant, the FlexBuffer options and
the four float32 outputs (boxes, classes, scores, number of detections), as exported detectors
carry it.

* `detection_postprocess_<mode>_<variant>`: the op alone; its inputs are the model inputs
  (float32, or uint8 with quantization parameters as in quantized SSD exports).
* `ssd_mini_f32`: a small convolutional box predictor (two feature maps, box and class heads,
  RESHAPE, CONCATENATION, LOGISTIC) feeding the op, as in SSD MobileNet exports.

Fast NMS leaves the output slots after the last detection unwritten in LiteRT, so fast-NMS cases
are built to fill every slot (the generator refuses a case that does not); regular NMS zero-fills
its tail and its cases leave some slots empty on purpose.
"""

import numpy as np
import tensorflow as tf
from ai_edge_litert import schema_py_generated as schema
from flatbuffers import flexbuffers

from . import surgery
from .core import FLOAT32, UINT8, Case, Input, NotGenerated, Rng, run

CASES = []

OP_NAME = "TFLite_Detection_PostProcess"
OUTPUT_NAMES = [OP_NAME] + [f"{OP_NAME}:{i}" for i in (1, 2, 3)]
# SSD's box-coder scales.
BOX_CODER_SCALES = {"y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}


def grid_anchors(rows, columns, sizes):
  """(ycenter, xcenter, h, w) anchors: one per grid cell and size, normalized to [0, 1]."""
  anchors = []
  for row in range(rows):
    for column in range(columns):
      for height, width in sizes:
        anchors.append(((row + 0.5) / rows, (column + 0.5) / columns, height, width))
  return np.asarray(anchors, dtype=np.float32)


def _quantization(scale, zero_point):
  parameters = schema.QuantizationParametersT()
  parameters.scale = [float(scale)]
  parameters.zeroPoint = [int(zero_point)]
  return parameters


def _add_tensor(model, name, shape, tensor_type, data=None, quantization=None):
  buffer = schema.BufferT()
  if data is not None:
    buffer.data = list(np.ascontiguousarray(data).tobytes())
  model.buffers.append(buffer)
  tensor = schema.TensorT()
  tensor.name = name
  tensor.shape = list(shape)
  tensor.type = tensor_type
  tensor.buffer = len(model.buffers) - 1
  tensor.quantization = quantization
  subgraph = model.subgraphs[0]
  subgraph.tensors.append(tensor)
  return len(subgraph.tensors) - 1


def append_postprocess(anchors, options, quantization=None):
  """A surgery edit: feeds the model's two outputs (box encodings, class scores) and an anchors
  constant to a new TFLite_Detection_PostProcess operator whose outputs become the model's.
  `quantization` = {"encodings", "scores", "anchors"}: (scale, zero point) for uint8 models; the
  anchors constant is then stored quantized."""
  def change(model):
    subgraph = model.subgraphs[0]
    encodings, scores = subgraph.outputs[0], subgraph.outputs[1]
    if subgraph.tensors[encodings].shape[-1] != 4:
      encodings, scores = scores, encodings
    if quantization:
      subgraph.tensors[encodings].quantization = _quantization(*quantization["encodings"])
      subgraph.tensors[scores].quantization = _quantization(*quantization["scores"])
      scale, zero_point = quantization["anchors"]
      stored = np.clip(np.round(anchors / scale) + zero_point, 0, 255).astype(np.uint8)
      anchor_tensor = _add_tensor(model, "anchors", anchors.shape, schema.TensorType.UINT8, stored,
                                  _quantization(scale, zero_point))
    else:
      anchor_tensor = _add_tensor(model, "anchors", anchors.shape, schema.TensorType.FLOAT32, anchors)
    slots = options["max_detections"] * options["max_classes_per_detection"]
    shapes = [(1, slots, 4), (1, slots), (1, slots), (1,)]
    outputs = [_add_tensor(model, name, shape, schema.TensorType.FLOAT32) for name, shape in zip(OUTPUT_NAMES, shapes)]
    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.CUSTOM
    code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode = OP_NAME
    code.version = 1
    model.operatorCodes.append(code)
    operator = schema.OperatorT()
    operator.opcodeIndex = len(model.operatorCodes) - 1
    operator.inputs = [encodings, scores, anchor_tensor]
    operator.outputs = outputs
    operator.customOptions = list(bytes(flexbuffers.Dumps(options)))
    operator.customOptionsFormat = schema.CustomOptionsFormat.FLEXBUFFERS
    subgraph.operators.append(operator)
    subgraph.outputs = outputs
  return lambda model_bytes: surgery.edit(model_bytes, change)


def require_filled_slots(name, inputs, options):
  """An `annotate` hook: a fast-NMS case must fill every output slot, since LiteRT leaves the slots
  after the last detection unwritten (their expected values would be whatever memory held)."""
  def annotate(entry, model_bytes):
    if options.get("use_regular_nms"):
      return
    rng = Rng(name + "/inputs")  # the inputs core.generate drew
    count = run(model_bytes, [spec.draw(rng) for spec in inputs])[3]
    if int(count[0]) != options["max_detections"]:
      raise NotGenerated(f"fast NMS kept {int(count[0])} of {options['max_detections']} boxes: unwritten slots")
  return annotate


def _options(**overrides):
  options = {"max_detections": 10, "max_classes_per_detection": 1, "nms_score_threshold": 0.3,
             "nms_iou_threshold": 0.5, "num_classes": 6, **BOX_CODER_SCALES}
  options.update(overrides)
  return options


def _encodings(count, spread=0.6):
  """Box encodings (ty, tx, th, tw) that move boxes around their anchors and grow or shrink them."""
  def draw(rng):
    values = rng.normal((1, count, 4))
    values[..., :2] *= spread * 10.0 / 4
    values[..., 2:] *= spread * 5.0 / 4
    return values
  return draw


def _scores(count, columns):
  """Class probabilities in (0, 1), spread so thresholds and NMS both matter."""
  return lambda rng: 1 / (1 + np.exp(-2.5 * rng.normal((1, count, columns)) - 0.5))


def _quantized(draw, scale, zero_point):
  return lambda rng: np.clip(np.round(draw(rng) / scale) + zero_point, 0, 255).astype(np.uint8)


def _identity(rng):
  return lambda encodings, scores: (tf.identity(encodings), tf.identity(scores))


def postprocess_case(variant, mode, anchors, options, background=True, quantization=None):
  count = len(anchors)
  columns = options["num_classes"] + (1 if background else 0)
  encodings, scores = _encodings(count), _scores(count, columns)
  if mode == UINT8:
    encodings = _quantized(encodings, *quantization["encodings"])
    scores = _quantized(scores, *quantization["scores"])
  dtype = "uint8" if mode == UINT8 else "float32"
  name = f"detection_postprocess_{'uint8' if mode == UINT8 else 'f32'}_{variant}"
  inputs = [Input((1, count, 4), dtype=dtype, values=encodings), Input((1, count, columns), dtype=dtype, values=scores)]
  CASES.append(Case(
      name=name, group="detection", mode=mode, kind="op", inputs=inputs, make=_identity, expect=[OP_NAME],
      tweak=_plain_conversion, post=append_postprocess(anchors, options, quantization),
      annotate=require_filled_slots(name, inputs, options), extra={"detection_options": options}))


def _plain_conversion(converter):
  """The op cases convert an identity graph: no optimization, whatever the manifest mode says."""
  converter.optimizations = []
  converter.representative_dataset = None
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  converter.inference_input_type = tf.float32
  converter.inference_output_type = tf.float32


ANCHORS = grid_anchors(8, 8, [(0.2, 0.2), (0.3, 0.15)])  # 128 anchors
UINT8_QUANTIZATION = {"encodings": (0.05, 128), "scores": (1 / 255, 0), "anchors": (1 / 255, 0)}

postprocess_case("fast_top1", FLOAT32, ANCHORS, _options())
postprocess_case("fast_top3_no_background", FLOAT32, ANCHORS, _options(max_classes_per_detection=3, max_detections=8),
                 background=False)
postprocess_case("regular", FLOAT32, ANCHORS,
                 _options(use_regular_nms=True, detections_per_class=3, max_detections=20, nms_score_threshold=0.7))
postprocess_case("regular_per_class_cap_above_max", FLOAT32, ANCHORS,
                 _options(use_regular_nms=True, detections_per_class=100, max_detections=12, nms_iou_threshold=0.3))
postprocess_case("fast_top1", UINT8, ANCHORS, _options(), quantization=UINT8_QUANTIZATION)
postprocess_case("regular", UINT8, ANCHORS,
                 _options(use_regular_nms=True, detections_per_class=4, max_detections=16, nms_score_threshold=0.6),
                 quantization=UINT8_QUANTIZATION)


# ---------------------------------------------------------------------------------------------
# A whole small detector


SSD_IMAGE = 32
SSD_CLASSES = 5
SSD_FEATURE_MAPS = [(8, [(0.25, 0.25), (0.35, 0.2)]), (4, [(0.5, 0.5), (0.7, 0.4)])]


def ssd_anchors():
  return np.concatenate([grid_anchors(size, size, sizes) for size, sizes in SSD_FEATURE_MAPS])


def ssd_mini(rng):
  """Backbone of two stride-2 stages and a third that halves again; the last two feature maps
  (8x8, 4x4) get 3x3 box and class heads."""
  stem = rng.const((3, 3, 3, 16), 0.3)
  stage8 = rng.const((3, 3, 16, 16), 0.15)
  stage4 = rng.const((3, 3, 16, 24), 0.15)
  heads = [(rng.const((3, 3, channels, len(sizes) * 4), 0.1),
            rng.const((3, 3, channels, len(sizes) * (SSD_CLASSES + 1)), 0.3))
           for (_, sizes), channels in zip(SSD_FEATURE_MAPS, (16, 24))]

  def fn(image):
    feature16 = tf.nn.relu6(tf.nn.conv2d(image, stem, 2, "SAME"))
    feature8 = tf.nn.relu6(tf.nn.conv2d(feature16, stage8, 2, "SAME"))
    feature4 = tf.nn.relu6(tf.nn.conv2d(feature8, stage4, 2, "SAME"))
    boxes, classes = [], []
    for feature, (box_head, class_head) in zip((feature8, feature4), heads):
      boxes.append(tf.reshape(tf.nn.conv2d(feature, box_head, 1, "SAME"), (1, -1, 4)))
      classes.append(tf.reshape(tf.nn.conv2d(feature, class_head, 1, "SAME"), (1, -1, SSD_CLASSES + 1)))
    return tf.concat(boxes, axis=1), tf.sigmoid(tf.concat(classes, axis=1))
  return fn


SSD_OPTIONS = _options(num_classes=SSD_CLASSES, max_detections=10, nms_score_threshold=0.2, nms_iou_threshold=0.45)
SSD_INPUTS = [Input((1, SSD_IMAGE, SSD_IMAGE, 3), 0.0, 1.0)]
CASES.append(Case(
    name="ssd_mini_f32", group="detection", mode=FLOAT32, kind="network", inputs=SSD_INPUTS, make=ssd_mini,
    expect=["CONV_2D", "RESHAPE", "CONCATENATION", "LOGISTIC", OP_NAME],
    post=append_postprocess(ssd_anchors(), SSD_OPTIONS), annotate=require_filled_slots("ssd_mini_f32", SSD_INPUTS, SSD_OPTIONS),
    extra={"detection_options": SSD_OPTIONS}))
