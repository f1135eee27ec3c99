"""Writes two more TestModels/taskvision/ fixtures beside make_taskvision_fixtures.py's (which it
reuses: the scene, the Pillow + tf.image.resize pipeline, LiteRT's BUILTIN_REF runs, the metadata
FlatBuffer helpers), with the reference results in `expected_extra.json`:

* `classifier_1x1xN.tflite`: a small float Keras classifier (32x32 RGB in, values 0..1) that ends
  in a 1x1 convolution and a softmax without flattening, so its output is [1, 1, 1, 7], with
  metadata (normalization mean 0 / std 255, labels `shapes.txt` in the appended ZIP). The expected
  classes are LiteRT's scores on the scene, sorted by score (ties: lower index first).
* `postprocess_uint8_float_anchors.tflite`: TFLite_Detection_PostProcess fed uint8 box encodings
  and class scores (model inputs) with a FLOAT32 anchors constant that carries quantization
  parameters (scale 1/255, zero point 3). LiteRT's kernel dequantizes the anchors as it
  dequantizes uint8 encodings: it reads the anchors' raw bytes as uint8 with the anchors'
  parameters (detection_postprocess.cc DecodeCenterSizeBoxes), so the anchors it uses are the
  float32 bytes of the constant, not its values. The inputs and LiteRT's four outputs are stored.

    /work/venv/bin/python Scripts/make_taskvision_extra_fixtures.py
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_metadata_fixtures as meta  # noqa: E402
import make_taskvision_fixtures as taskvision  # noqa: E402
from testmodels import core, detection  # noqa: E402

OUT = taskvision.OUT
SHAPE_LABELS = ["circle", "square", "triangle", "star", "ring", "cross", "heart"]
ANCHOR_SCALE, ANCHOR_ZERO_POINT = 1 / 255, 3


def classifier_model():
    """Conv 3x3/2 (relu) -> conv 3x3/2 (relu) -> average pool to 1x1 (kept 4-D) -> 1x1 conv -> softmax."""
    tf.keras.utils.set_random_seed(11)
    inputs = tf.keras.Input((32, 32, 3), batch_size=1)
    x = tf.keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)
    x = tf.keras.layers.Conv2D(12, 3, strides=2, padding="same", activation="relu")(x)
    x = tf.keras.layers.AveragePooling2D(8)(x)
    x = tf.keras.layers.Conv2D(len(SHAPE_LABELS), 1)(x)
    outputs = tf.keras.layers.Softmax()(x)
    model = tf.keras.Model(inputs, outputs)
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    return converter.convert()


def classifier_metadata():
    b = meta.flatbuffers.Builder(1024)
    t, s = meta.table, meta.s
    image_props = t(b, {0: ("i8", 1), 1: ("offset", t(b, {0: ("u32", 32), 1: ("u32", 32)}))})
    norm = t(b, {0: ("offset", meta.scalars(b, "f32", [0.0])), 1: ("offset", meta.scalars(b, "f32", [255.0]))})
    input_tensor = t(b, {0: ("offset", s(b, "image")), 3: ("offset", t(b, {0: ("u8", 2), 1: ("offset", image_props)})),
                         4: ("offset", meta.offsets(b, [t(b, {0: ("u8", 1), 1: ("offset", norm)})]))})
    labels = meta.associated_file(b, "shapes.txt", "Shape names.", 2)
    output = t(b, {0: ("offset", s(b, "probability")), 6: ("offset", meta.offsets(b, [labels]))})
    subgraph = t(b, {2: ("offset", meta.offsets(b, [input_tensor])), 3: ("offset", meta.offsets(b, [output]))})
    root = t(b, {0: ("offset", s(b, "Shape classifier with a [1, 1, 1, N] output")),
                 3: ("offset", meta.offsets(b, [subgraph]))})
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def postprocess_model():
    """An identity graph of two uint8 inputs, then the post-process op with float anchors carrying
    quantization parameters."""
    count = len(detection.ANCHORS)
    options = detection._options()
    columns = options["num_classes"] + 1
    inputs = [core.Input((1, count, 4), dtype="uint8"), core.Input((1, count, columns), dtype="uint8")]
    case = core.Case(name="postprocess_uint8_float_anchors", group="taskvision", mode=core.FLOAT32, inputs=inputs,
                     make=detection._identity, tweak=detection._plain_conversion)
    identity = core.make_converter(case, core.Rng(case.name)).convert()
    quantization = detection.UINT8_QUANTIZATION

    def change(model):
        subgraph = model.subgraphs[0]
        encodings, scores = subgraph.outputs[0], subgraph.outputs[1]
        if subgraph.tensors[encodings].shape[-1] != 4:
            encodings, scores = scores, encodings
        subgraph.tensors[encodings].quantization = detection._quantization(*quantization["encodings"])
        subgraph.tensors[scores].quantization = detection._quantization(*quantization["scores"])
        anchors = detection._add_tensor(model, "anchors", detection.ANCHORS.shape, detection.schema.TensorType.FLOAT32,
                                        detection.ANCHORS, detection._quantization(ANCHOR_SCALE, ANCHOR_ZERO_POINT))
        slots = options["max_detections"] * options["max_classes_per_detection"]
        shapes = [(1, slots, 4), (1, slots), (1, slots), (1,)]
        outputs = [detection._add_tensor(model, name, shape, detection.schema.TensorType.FLOAT32)
                   for name, shape in zip(detection.OUTPUT_NAMES, shapes)]
        code = detection.schema.OperatorCodeT()
        code.builtinCode = detection.schema.BuiltinOperator.CUSTOM
        code.deprecatedBuiltinCode = detection.schema.BuiltinOperator.CUSTOM
        code.customCode = detection.OP_NAME
        code.version = 1
        model.operatorCodes.append(code)
        operator = detection.schema.OperatorT()
        operator.opcodeIndex = len(model.operatorCodes) - 1
        operator.inputs = [encodings, scores, anchors]
        operator.outputs = outputs
        operator.customOptions = list(bytes(detection.flexbuffers.Dumps(options)))
        operator.customOptionsFormat = detection.schema.CustomOptionsFormat.FLEXBUFFERS
        subgraph.operators.append(operator)
        subgraph.outputs = outputs

    model = detection.surgery.edit(identity, change)
    rng = np.random.default_rng(20261126)
    encodings = np.clip(np.round(rng.normal(size=(1, count, 4)) * 30) + 128, 0, 255).astype(np.uint8)
    scores = np.clip(np.round(255 / (1 + np.exp(-2.5 * rng.normal(size=(1, count, columns)) - 0.5))), 0, 255)
    return model, [encodings, scores.astype(np.uint8)]


def main():
    pixels = np.asarray(Image.open(os.path.join(OUT, "scene.png")).convert("RGB"))

    classifier_path = os.path.join(OUT, "classifier_1x1xN.tflite")
    with open(classifier_path, "wb") as out:
        out.write(meta.with_metadata(classifier_model(), classifier_metadata())
                  + taskvision.zip_with_deflated({"shapes.txt": "\n".join(SHAPE_LABELS) + "\n"}, deflated=set()))
    value = ((taskvision.resized(pixels, 32, 32) - np.float32(0)) / np.float32(255)).astype(np.float32)
    (probabilities,) = taskvision.run(classifier_path, value)
    assert probabilities.shape == (1, 1, 1, len(SHAPE_LABELS)), probabilities.shape
    flat = probabilities.reshape(-1)
    order = sorted(range(flat.size), key=lambda i: (-flat[i], i))
    classes = [{"index": i, "label": SHAPE_LABELS[i], "score": float(np.float32(flat[i]))} for i in order]

    model, inputs = postprocess_model()
    postprocess_path = os.path.join(OUT, "postprocess_uint8_float_anchors.tflite")
    with open(postprocess_path, "wb") as out:
        out.write(model)
    interpreter = Interpreter(postprocess_path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    outputs = [interpreter.get_tensor(detail["index"]) for detail in interpreter.get_output_details()]
    # What LiteRT's arithmetic uses as anchors: the constant's bytes, dequantized.
    raw = np.frombuffer(detection.ANCHORS.astype(np.float32).tobytes()[:detection.ANCHORS.size], dtype=np.uint8)
    used = (raw.astype(np.float32) - ANCHOR_ZERO_POINT) * np.float32(ANCHOR_SCALE)
    print("anchors LiteRT uses (first 2):", used.reshape(-1, 4)[:2], "count", outputs[3])

    expected = {
        "classifier_1x1xN": {"image": "scene.png", "classes": classes},
        "postprocess_uint8_float_anchors": {
            "inputs": [value.reshape(-1).tolist() for value in inputs],
            "boxes": outputs[0].reshape(-1).tolist(), "classes": outputs[1].reshape(-1).tolist(),
            "scores": outputs[2].reshape(-1).tolist(), "count": outputs[3].reshape(-1).tolist()},
    }
    with open(os.path.join(OUT, "expected_extra.json"), "w") as out:
        json.dump(expected, out)
    print(json.dumps(expected["classifier_1x1xN"], indent=1))
    print("count", outputs[3], "boxes", outputs[0][0, :3])


if __name__ == "__main__":
    main()
