"""Writes TestModels/taskvision/: models with Task-Library metadata, an AutoML Vision Edge export
bundle, a test scene, and the results the Task API must give on it, computed here with LiteRT and
numpy (the reference the Swift `TensorFlowLiteTaskVision` tests assert).

Models (existing test networks with metadata added by make_metadata_fixtures' FlatBuffer helpers):
* `ssd_mini_metadata.tflite`: detection/ssd_mini_f32 (float input [1, 32, 32, 3], values 0..1)
  with metadata: RGB image, normalization mean 0 / std 255, boxes BOUNDARIES [1, 0, 3, 2] RATIO,
  class labels (labels.txt, and labels_fr.txt with locale "fr"), sigmoid score calibration with
  a calibration file, score threshold 0.3; the files are in the appended ZIP (one entry deflated).
* `mobilenet_uint8_metadata.tflite`: networks/mobilenet_mini_uint8 (uint8 in and out) with a
  TENSOR_AXIS_LABELS file: a classifier driven by metadata.
* `hostile/*.tflite`: the detector with metadata that disagrees with the model or its files
  (repeated box index, two means for RGB, zero std, display names shorter than labels, calibration
  file missing or malformed, no ZIP at all).
* `automl_bundle/`: model.tflite (ssd_mini_f32 without metadata), dict.txt (no background line,
  trailing empty line) and tflite_metadata.json as AutoML Vision Edge writes them.
* `automl_uint8/`: the same network (same seeded weights) fully quantized with uint8 input and
  outputs, then TFLite_Detection_PostProcess on the uint8 encodings and scores (anchors stored as
  uint8, scale 1/255), as a QUANTIZED_UINT8 AutoML bundle: the shape AutoML exports have.

Pipeline the expectations follow (Task Library semantics): decode with Pillow, stretch to the
input size with tf.image.resize(..., "bilinear") (no antialias); float input: (x - mean) / std;
uint8 input: the resized values rounded half away from zero. Detector outputs: boxes as the
metadata index says, times the image width / height (no rounding, no clipping); class index =
int(value); calibrated score = scale / (1 + exp(-(slope * g(x) + offset))), the default score when
x < min_score or the class has no parameters; kept when score >= threshold, in the model's order.
Classifier: dequantized output, calibrated, sorted by score (ties: lower index first). int8 input
(networks/mobilenet_mini_int8, options mean 0 / std 255): normalized, then round(x / scale) half
away from zero plus the zero point, in float32.

    /work/venv/bin/python Scripts/make_taskvision_fixtures.py
"""

import io
import json
import math
import os
import shutil
import sys
import zipfile

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_metadata_fixtures as meta  # noqa: E402  (FlatBuffer helpers: table, offsets, scalars, ...)
from testmodels import core, detection  # noqa: E402  (the ssd_mini network and the post-process surgery)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "TestModels/taskvision")
SSD = os.path.join(ROOT, "TestModels/detection/ssd_mini_f32.tflite")
MOBILENET_UINT8 = os.path.join(ROOT, "TestModels/networks/mobilenet_mini_uint8.tflite")
MOBILENET_LABELS = os.path.join(ROOT, "TestModels/networks/mobilenet_mini_labels.txt")

DETECTOR_LABELS = ["circle", "square", "triangle", "star", "ring"]
DETECTOR_LABELS_FR = ["cercle", "carré", "triangle", "étoile", "anneau"]
# scale, slope, offset[, min_score] per class; class 2 has none (gets the default score).
CALIBRATION = ["1.0,2.0,-0.5", "0.9,1.5,0.0,0.3", "", "1.0,1.0,0.25", "1.0,3.0,-1.0,0.2"]
DEFAULT_SCORE = 0.05
SCORE_THRESHOLD = 0.3
SSD_MEAN, SSD_STD = 0.0, 255.0


def ssd_metadata(box_index=(1, 0, 3, 2), mean=(SSD_MEAN,), std=(SSD_STD,)):
    b = meta.flatbuffers.Builder(1024)
    t, s = meta.table, meta.s
    image_props = t(b, {0: ("i8", 1), 1: ("offset", t(b, {0: ("u32", 32), 1: ("u32", 32)}))})
    input_content = t(b, {0: ("u8", 2), 1: ("offset", image_props)})
    norm = t(b, {0: ("offset", meta.scalars(b, "f32", list(mean))), 1: ("offset", meta.scalars(b, "f32", list(std)))})
    input_tensor = t(b, {0: ("offset", s(b, "image")), 3: ("offset", input_content),
                         4: ("offset", meta.offsets(b, [t(b, {0: ("u8", 1), 1: ("offset", norm)})]))})
    box_props = t(b, {0: ("offset", meta.scalars(b, "u32", list(box_index))), 1: ("i8", 1), 2: ("i8", 0)})
    box_content = t(b, {0: ("u8", 3), 1: ("offset", box_props), 2: ("offset", t(b, {0: ("i32", 2), 1: ("i32", 2)}))})
    location = t(b, {0: ("offset", s(b, "location")), 3: ("offset", box_content)})
    labels = meta.associated_file(b, "labels.txt", "Shape names.", 3)
    labels_fr = meta.associated_file(b, "labels_fr.txt", "Noms des formes.", 3, "fr")
    category = t(b, {0: ("offset", s(b, "category")), 6: ("offset", meta.offsets(b, [labels, labels_fr]))})
    calibration_file = meta.associated_file(b, "calibration.csv", "Sigmoid parameters per class.", 4)
    calibration = t(b, {0: ("i8", 0), 1: ("f32", DEFAULT_SCORE)})
    threshold = t(b, {0: ("f32", SCORE_THRESHOLD)})
    score = t(b, {0: ("offset", s(b, "score")),
                  4: ("offset", meta.offsets(b, [t(b, {0: ("u8", 2), 1: ("offset", calibration)}),
                                                 t(b, {0: ("u8", 3), 1: ("offset", threshold)})])),
                  6: ("offset", meta.offsets(b, [calibration_file]))})
    count = t(b, {0: ("offset", s(b, "number of detections"))})
    subgraph = t(b, {2: ("offset", meta.offsets(b, [input_tensor])),
                     3: ("offset", meta.offsets(b, [location, category, score, count]))})
    root = t(b, {0: ("offset", s(b, "Mini shape detector")), 3: ("offset", meta.offsets(b, [subgraph]))})
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def mobilenet_metadata():
    b = meta.flatbuffers.Builder(1024)
    t, s = meta.table, meta.s
    image_props = t(b, {0: ("i8", 1), 1: ("offset", t(b, {0: ("u32", 32), 1: ("u32", 32)}))})
    norm = t(b, {0: ("offset", meta.scalars(b, "f32", [0.0])), 1: ("offset", meta.scalars(b, "f32", [255.0]))})
    input_tensor = t(b, {0: ("offset", s(b, "image")), 3: ("offset", t(b, {0: ("u8", 2), 1: ("offset", image_props)})),
                         4: ("offset", meta.offsets(b, [t(b, {0: ("u8", 1), 1: ("offset", norm)})]))})
    labels = meta.associated_file(b, "digits.txt", "Digit names.", 2)
    output = t(b, {0: ("offset", s(b, "probability")), 6: ("offset", meta.offsets(b, [labels]))})
    subgraph = t(b, {2: ("offset", meta.offsets(b, [input_tensor])), 3: ("offset", meta.offsets(b, [output]))})
    root = t(b, {0: ("offset", s(b, "Mini digit classifier")), 3: ("offset", meta.offsets(b, [subgraph]))})
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def zip_with_deflated(files, deflated):
    """A ZIP of `files` (fixed timestamps, so the output is the same on every run)."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, text in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED if name in deflated else zipfile.ZIP_STORED
            archive.writestr(entry, text)
    return data.getvalue()


def ssd_uint8():
    """ssd_mini with the float model's weights, quantized to uint8 in and out, plus the post-process op."""
    case = core.Case(name="ssd_mini_uint8", group="taskvision", mode=core.UINT8, inputs=detection.SSD_INPUTS,
                     make=detection.ssd_mini, kind="network")
    model = core.make_converter(case, core.Rng("ssd_mini_f32")).convert()
    outputs = Interpreter(model_content=model).get_output_details()
    boxes = next(d for d in outputs if d["shape"][-1] == 4)
    scores = next(d for d in outputs if d["shape"][-1] != 4)
    quantization = {"encodings": boxes["quantization"], "scores": scores["quantization"], "anchors": (1 / 255, 0)}
    return detection.append_postprocess(detection.ssd_anchors(), detection.SSD_OPTIONS, quantization)(model)


def write_bundle(folder, model_bytes, inference_type):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.tflite"), "wb") as out:
        out.write(model_bytes)
    with open(os.path.join(folder, "dict.txt"), "w") as out:
        out.write("\n".join(DETECTOR_LABELS) + "\n\n")
    with open(os.path.join(folder, "tflite_metadata.json"), "w") as out:
        json.dump({
            "inferenceType": inference_type, "inputShape": [1, 32, 32, 3], "inputTensor": "x", "maxDetections": 10,
            "outputTensorRepresentation": ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"],
            "outputTensors": ["TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
                              "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"]}, out, indent=2)


def scene():
    """A 96x72 RGB scene: a gradient with a few filled shapes (deterministic)."""
    width, height = 96, 72
    x = np.linspace(0, 1, width)[None, :, None]
    y = np.linspace(0, 1, height)[:, None, None]
    base = np.concatenate([40 + 150 * x + 0 * y, 60 + 120 * y + 0 * x, 200 - 100 * x * y], axis=2)
    image = Image.fromarray(base.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    draw.ellipse((8, 10, 36, 38), fill=(230, 40, 40))
    draw.rectangle((52, 8, 86, 30), fill=(30, 30, 220))
    draw.polygon([(20, 66), (44, 44), (68, 66)], fill=(250, 230, 20))
    return image


def resized(pixels, height, width):
    return tf.image.resize(pixels.astype(np.float32), [height, width], "bilinear").numpy()


def run(model_path, value):
    """The outputs of LiteRT's reference kernels (BUILTIN_REF), dequantized."""
    interpreter = Interpreter(model_path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], value[None])
    interpreter.invoke()
    outputs = []
    for detail in interpreter.get_output_details():
        data = interpreter.get_tensor(detail["index"])
        scale, zero_point = detail["quantization"]
        outputs.append((data.astype(np.float64) - zero_point) * scale if scale else data.astype(np.float64))
    return outputs


def calibrated(score, class_index, transform):
    line = CALIBRATION[class_index] if class_index < len(CALIBRATION) else ""
    if not line:
        return DEFAULT_SCORE
    params = [float(v) for v in line.split(",")]
    if len(params) == 4 and score < params[3]:
        return DEFAULT_SCORE
    g = {"identity": lambda v: v}[transform](np.float32(score))
    return float(np.float32(params[0] / (1 + math.exp(-(params[1] * g + params[2])))))


def detections(pixels, model_path, mean, std, labels, threshold, calibrate, display_names=None):
    """The Task-API detections; mean None means a uint8 input (rounded resized pixels)."""
    height, width = pixels.shape[:2]
    if mean is None:
        value = np.floor(resized(pixels, 32, 32) + 0.5).clip(0, 255).astype(np.uint8)
    else:
        value = ((resized(pixels, 32, 32) - mean) / std).astype(np.float32)
    boxes, classes, scores, count = run(model_path, value)
    found = []
    for i in range(int(count[0])):
        index = int(classes[0, i])
        score = calibrated(scores[0, i], index, "identity") if calibrate else float(np.float32(scores[0, i]))
        if score < threshold:
            continue
        top, left, bottom, right = (float(np.float32(v)) for v in boxes[0, i])
        found.append({
            "index": index, "label": labels[index], "display_name": (display_names or labels)[index], "score": score,
            "box": {"left": left * width, "top": top * height, "right": right * width, "bottom": bottom * height}})
    return found


def main():
    os.makedirs(OUT, exist_ok=True)
    picture = scene()
    picture.save(os.path.join(OUT, "scene.png"))
    pixels = np.asarray(Image.open(os.path.join(OUT, "scene.png")).convert("RGB"))

    # Detector with metadata and an appended ZIP (labels deflated, the rest stored).
    ssd_bytes = open(SSD, "rb").read()
    files = {"labels.txt": "\n".join(DETECTOR_LABELS) + "\n", "labels_fr.txt": "\n".join(DETECTOR_LABELS_FR) + "\n",
             "calibration.csv": "\n".join(CALIBRATION) + "\n"}
    ssd_path = os.path.join(OUT, "ssd_mini_metadata.tflite")
    with open(ssd_path, "wb") as out:
        out.write(meta.with_metadata(ssd_bytes, ssd_metadata()) + zip_with_deflated(files, deflated={"labels.txt"}))

    # Metadata that disagrees with the model or its files (each must be refused with a clear error).
    hostile = os.path.join(OUT, "hostile")
    os.makedirs(hostile, exist_ok=True)
    variants = {
        "box_index_repeats": (ssd_metadata(box_index=(0, 0, 1, 2)), files),
        "two_means_for_rgb": (ssd_metadata(mean=(0.0, 0.0)), files),
        "zero_std": (ssd_metadata(std=(0.0,)), files),
        "display_names_short": (ssd_metadata(), {**files, "labels_fr.txt": "cercle\ncarré\n"}),
        "calibration_file_missing": (ssd_metadata(), {k: v for k, v in files.items() if k != "calibration.csv"}),
        "calibration_line_bad": (ssd_metadata(), {**files, "calibration.csv": "1.0,2.0\n"}),
        "no_zip": (ssd_metadata(), None),
    }
    for name, (metadata, variant_files) in variants.items():
        with open(os.path.join(hostile, name + ".tflite"), "wb") as out:
            out.write(meta.with_metadata(ssd_bytes, metadata)
                      + (zip_with_deflated(variant_files, deflated=set()) if variant_files else b""))

    # Classifier with metadata (uint8 input and output).
    digit_labels = open(MOBILENET_LABELS).read().split("\n")
    digit_labels = [line for line in digit_labels if line]
    classifier_path = os.path.join(OUT, "mobilenet_uint8_metadata.tflite")
    with open(classifier_path, "wb") as out:
        out.write(meta.with_metadata(open(MOBILENET_UINT8, "rb").read(), mobilenet_metadata())
                  + zip_with_deflated({"digits.txt": "\n".join(digit_labels) + "\n"}, deflated={"digits.txt"}))

    # AutoML Vision Edge bundles: around the plain float detector, and around its uint8 twin.
    bundle = os.path.join(OUT, "automl_bundle")
    write_bundle(bundle, ssd_bytes, "FLOAT")
    uint8_bundle = os.path.join(OUT, "automl_uint8")
    write_bundle(uint8_bundle, ssd_uint8(), "QUANTIZED_UINT8")

    # Classifier expectations: uint8 input = resized values rounded half away from zero.
    quantized = np.floor(resized(pixels, 32, 32) + 0.5).clip(0, 255).astype(np.uint8)
    (probabilities,) = run(classifier_path, quantized)
    order = sorted(range(probabilities.shape[-1]), key=lambda i: (-probabilities[0, i], i))
    classes = [{"index": i, "label": digit_labels[i], "score": float(np.float32(probabilities[0, i]))} for i in order]

    # int8 classifier without metadata, driven by options: normalized (x - 0) / 255, quantized with the
    # input's parameters, all in float32, rounding half away from zero.
    int8_path = os.path.join(ROOT, "TestModels/networks/mobilenet_mini_int8.tflite")
    details = Interpreter(int8_path).get_input_details()[0]
    scale, zero_point = details["quantization"]
    normalized = (resized(pixels, 32, 32) - np.float32(0)) / np.float32(255)
    scaled = normalized / np.float32(scale)
    int8_input = (np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5)) + zero_point).clip(-128, 127).astype(np.int8)
    (int8_scores,) = run(int8_path, int8_input)
    int8_order = sorted(range(int8_scores.shape[-1]), key=lambda i: (-int8_scores[0, i], i))

    expected = {
        "image": {"file": "scene.png", "width": pixels.shape[1], "height": pixels.shape[0]},
        "metadata_detector": detections(pixels, ssd_path, SSD_MEAN, SSD_STD, DETECTOR_LABELS, SCORE_THRESHOLD, True,
                                        DETECTOR_LABELS_FR),
        # The bundle has no calibration or threshold: every reported box, raw scores.
        "bundle_detector": detections(pixels, os.path.join(bundle, "model.tflite"), 0.0, 255.0, DETECTOR_LABELS, 0.0,
                                      False),
        "uint8_bundle_detector": detections(pixels, os.path.join(uint8_bundle, "model.tflite"), None, None,
                                            DETECTOR_LABELS, 0.0, False),
        "metadata_classifier": classes,
        "int8_classifier": [{"index": i, "label": digit_labels[i], "score": float(np.float32(int8_scores[0, i]))}
                            for i in int8_order],
    }
    with open(os.path.join(OUT, "expected.json"), "w") as out:
        json.dump(expected, out, indent=1)
    print(json.dumps(expected, indent=1)[:3000])


if __name__ == "__main__":
    main()
