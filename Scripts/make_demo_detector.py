#!/usr/bin/env python3
"""Trains the demo detector in TestModels/demo_detector/: an AutoML Vision Edge-shaped SSD that
finds four kinds of coloured shapes on textured backgrounds.

    /work/venv/bin/python Scripts/make_demo_detector.py      (TensorFlow 2.21, ai-edge-litert, Pillow)

The model: uint8 input [1, 320, 320, 3] (pixel p means (p - 127.5) / 127.5, as the metadata's
NormalizationOptions say), a 2x2 average pool, a small depthwise-separable backbone, 3x3 box and
class heads on a 20x20 and a 10x10 feature map (two square anchors per cell, 1000 in all), full
integer quantization (uint8 in, uint8 box encodings and sigmoid scores out), then the
TFLite_Detection_PostProcess custom op appended to the flatbuffer (uint8 anchors, fast NMS, SSD box coder
scales 10/10/5/5, one background score column, as exported SSD detectors carry it). Training runs
on scenes drawn here at 160x160 (1-4 shapes, 20-65 px, random colours, smooth noise, stripes and
grain behind them: what the pool makes of the 320x320 scenes), with SSD anchor matching, focal loss on the scores and a
Huber loss on the box encodings, for 1500 steps or 14 minutes, whichever ends first (the
learning rate follows a cosine over that budget; the machine it was trained on was shared).

Output, in TestModels/demo_detector/:
  demo_detector.tflite  the model with TFLite Support metadata (ImageProperties RGB 320x320,
                        NormalizationOptions 127.5/127.5, BoundingBoxProperties, the label file
                        as an AssociatedFile) and labels.txt in the ZIP appended to it.
  automl/               an AutoML Vision Edge export bundle: model.tflite (the same model without
                        metadata), dict.txt (no background line) and tflite_metadata.json.
  scene_N.jpg / .png    test scenes (320x320 and one 640x480 photo-sized one), never trained on.
  scenes.json           their ground truth: per object the label and the box in pixels
                        (left, top, right, bottom, exclusive right/bottom edges).
  scene_N.output_K.npy  LiteRT's (BUILTIN_REF) four outputs on the 320x320 scenes as Pillow
                        decodes them: boxes, classes, scores, count. Fast NMS leaves the slots
                        after `count` unwritten, so only the first `count` entries mean anything.
The same seeds give the same scenes; TensorFlow's training is not bit-reproducible across
machines, so rerunning gives an equivalent, not an identical, model.
"""

import io
import json
import os
import sys
import time
import zipfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "TestModels", "demo_detector")
LABELS = ["circle", "square", "triangle", "cross"]
SIZE = 320
POOLED = SIZE // 2
FEATURE_MAPS = [(20, [0.15, 0.23]), (10, [0.32, 0.45])]  # grid size, anchor sizes (normalized)
MAX_DETECTIONS = 10
SCORE_THRESHOLD = 0.3
INPUT_NAME = "normalized_input_image_tensor"
TRAIN_SCENES = int(os.environ.get("DEMO_DETECTOR_SCENES", "1200"))
TRAIN_STEPS = int(os.environ.get("DEMO_DETECTOR_STEPS", "1500"))
TRAIN_SECONDS = 60 * float(os.environ.get("DEMO_DETECTOR_MINUTES", "14"))
BATCH = 24


# ---------------------------------------------------------------------------------------------
# Scenes


def smooth_noise(rng, height, width, cells, channels):
    """Random values on a coarse grid, bilinearly enlarged: soft colour blotches."""
    grid = rng.uniform(0, 255, (cells, cells, channels)).astype(np.uint8)
    image = Image.fromarray(grid.squeeze() if channels == 1 else grid)
    return np.asarray(image.resize((width, height), Image.BILINEAR), dtype=np.float32).reshape(height, width, channels)


def background(rng, height, width):
    base = smooth_noise(rng, height, width, int(rng.integers(3, 8)), 3)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    period = rng.uniform(6, 30)
    stripes = np.sin((xs * np.cos(angle) + ys * np.sin(angle)) * 2 * np.pi / period)[..., None]
    base = base * rng.uniform(0.5, 1.0) + stripes * rng.uniform(0, 35) + rng.normal(0, rng.uniform(2, 14), base.shape)
    return base


def shape_mask(kind, ys, xs, left, top, size):
    """Boolean mask of one shape whose bounding box is [left, left + size) x [top, top + size)."""
    u = (xs + 0.5 - left) / size  # 0...1 across the box
    v = (ys + 0.5 - top) / size
    if kind == "circle":
        return (u - 0.5) ** 2 + (v - 0.5) ** 2 <= 0.25
    if kind == "square":
        return (u >= 0) & (u < 1) & (v >= 0) & (v < 1)
    if kind == "triangle":  # apex at the top centre, base along the bottom edge
        return (v >= 0) & (v < 1) & (np.abs(u - 0.5) <= v / 2)
    arm = ((u >= 0.33) & (u < 0.67) & (v >= 0) & (v < 1)) | ((v >= 0.33) & (v < 0.67) & (u >= 0) & (u < 1))
    return arm


def scene(rng, height=SIZE, width=SIZE, scale=1.0):
    """A uint8 [H, W, 3] scene and its objects: (label index, (left, top, right, bottom) in pixels)."""
    image = background(rng, height, width)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    objects = []
    for _ in range(int(rng.integers(1, 5))):
        for _attempt in range(20):
            size = int(rng.integers(40, 131) * scale)
            left, top = int(rng.integers(0, width - size)), int(rng.integers(0, height - size))
            box = (left, top, left + size, top + size)
            if all(intersection(box, other[1]) == 0 for other in objects):
                break
        else:
            continue
        label = int(rng.integers(0, len(LABELS)))
        mask = shape_mask(LABELS[label], ys, xs, left, top, size)
        under = image[mask].mean(axis=0)
        for _attempt in range(50):
            colour = rng.uniform(0, 255, 3)
            if np.abs(colour - under).sum() > 150:
                break
        shading = 1 + 0.15 * (ys - top) / size
        image[mask] = (colour * shading[..., None])[mask] + rng.normal(0, 4, (int(mask.sum()), 3))
        ys_in, xs_in = np.nonzero(mask)
        objects.append((label, (int(xs_in.min()), int(ys_in.min()), int(xs_in.max()) + 1, int(ys_in.max()) + 1)))
    return np.clip(np.round(image), 0, 255).astype(np.uint8), objects


def intersection(a, b):
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))


def iou(a, b):
    inter = intersection(a, b)
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def normalized(pixels):
    return (pixels.astype(np.float32) - 127.5) / 127.5


# ---------------------------------------------------------------------------------------------
# Anchors and targets


def anchors():
    """(ycenter, xcenter, h, w), normalized: per feature-map cell, one square anchor per size."""
    rows = []
    for cells, sizes in FEATURE_MAPS:
        for row in range(cells):
            for column in range(cells):
                for size in sizes:
                    rows.append(((row + 0.5) / cells, (column + 0.5) / cells, size, size))
    return np.asarray(rows, dtype=np.float32)


ANCHORS = anchors()


def targets(objects):
    """SSD matching: an anchor takes the object it overlaps most if IoU >= 0.45; every object also
    takes its best anchor. Returns box encodings (ty, tx, th, tw) scaled 10/10/5/5, the class
    column per anchor (0 = background) and the positive mask."""
    count = len(ANCHORS)
    anchor_boxes = np.stack([ANCHORS[:, 0] - ANCHORS[:, 2] / 2, ANCHORS[:, 1] - ANCHORS[:, 3] / 2,
                             ANCHORS[:, 0] + ANCHORS[:, 2] / 2, ANCHORS[:, 1] + ANCHORS[:, 3] / 2], axis=1)
    encodings = np.zeros((count, 4), np.float32)
    classes = np.zeros(count, np.int32)
    if not objects:
        return encodings, classes
    boxes = np.asarray([[b[1] / SIZE, b[0] / SIZE, b[3] / SIZE, b[2] / SIZE] for _, b in objects], np.float32)
    top = np.maximum(anchor_boxes[:, None, 0], boxes[None, :, 0])
    left = np.maximum(anchor_boxes[:, None, 1], boxes[None, :, 1])
    bottom = np.minimum(anchor_boxes[:, None, 2], boxes[None, :, 2])
    right = np.minimum(anchor_boxes[:, None, 3], boxes[None, :, 3])
    inter = np.clip(bottom - top, 0, None) * np.clip(right - left, 0, None)
    area_a = (anchor_boxes[:, 2] - anchor_boxes[:, 0]) * (anchor_boxes[:, 3] - anchor_boxes[:, 1])
    area_b = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    overlaps = inter / (area_a[:, None] + area_b[None, :] - inter)
    best_object = overlaps.argmax(axis=1)
    matched = overlaps.max(axis=1) >= 0.45
    for index, anchor in enumerate(overlaps.argmax(axis=0)):
        best_object[anchor], matched[anchor] = index, True
    chosen = boxes[best_object]
    centre_y, centre_x = (chosen[:, 0] + chosen[:, 2]) / 2, (chosen[:, 1] + chosen[:, 3]) / 2
    height, width = chosen[:, 2] - chosen[:, 0], chosen[:, 3] - chosen[:, 1]
    encodings[:, 0] = 10 * (centre_y - ANCHORS[:, 0]) / ANCHORS[:, 2]
    encodings[:, 1] = 10 * (centre_x - ANCHORS[:, 1]) / ANCHORS[:, 3]
    encodings[:, 2] = 5 * np.log(height / ANCHORS[:, 2])
    encodings[:, 3] = 5 * np.log(width / ANCHORS[:, 3])
    labels = np.asarray([label for label, _ in objects])
    classes[matched] = labels[best_object[matched]] + 1
    return encodings, classes


def flipped(objects):
    return [(label, (SIZE - right, top, SIZE - left, bottom)) for label, (left, top, right, bottom) in objects]


# ---------------------------------------------------------------------------------------------
# Model


def build_models(tf):
    """The body (160x160 float input) and the exported model (320x320, average pool, body)."""
    layers = tf.keras.layers

    def unit(x, channels, stride, separable=True):
        if separable:
            x = layers.DepthwiseConv2D(3, stride, "same", use_bias=False)(x)
            x = layers.BatchNormalization()(x)
            x = layers.ReLU(6.0)(x)
        x = layers.Conv2D(channels, 1 if separable else 3, 1 if separable else stride, "same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        return layers.ReLU(6.0)(x)

    columns = len(LABELS) + 1
    image = tf.keras.Input((POOLED, POOLED, 3))
    x = unit(image, 16, 2, separable=False)  # 80
    x = unit(x, 32, 2)  # 40
    x = unit(x, 32, 1)
    x = unit(x, 64, 2)  # 20
    feature20 = unit(x, 64, 1)
    x = unit(feature20, 96, 2)  # 10
    feature10 = unit(x, 96, 1)
    boxes, scores = [], []
    for feature, (_, sizes) in zip((feature20, feature10), FEATURE_MAPS):
        head = unit(feature, 64, 1)
        boxes.append(layers.Reshape((-1, 4))(layers.Conv2D(len(sizes) * 4, 3, padding="same")(head)))
        scores.append(layers.Reshape((-1, columns))(layers.Conv2D(
            len(sizes) * columns, 3, padding="same", bias_initializer=tf.keras.initializers.Constant(-4.0))(head)))
    body = tf.keras.Model(image, [layers.Concatenate(axis=1, name="box_encodings")(boxes),
                                  layers.Concatenate(axis=1, name="class_logits")(scores)])
    full_input = tf.keras.Input((SIZE, SIZE, 3), batch_size=1)
    encodings, logits = body(layers.AveragePooling2D(2)(full_input))
    exported = tf.keras.Model(full_input, [encodings, layers.Activation("sigmoid")(logits)])
    return body, exported


def train(tf, body, rng):
    started = time.time()
    images = np.empty((TRAIN_SCENES, POOLED, POOLED, 3), np.float16)
    all_objects = []
    for index in range(TRAIN_SCENES):
        pixels, objects = scene(rng, POOLED, POOLED, scale=0.5)
        images[index] = normalized(pixels)
        all_objects.append([(label, tuple(2 * edge for edge in box)) for label, box in objects])
    encodings = np.stack([targets(o)[0] for o in all_objects] + [targets(flipped(o))[0] for o in all_objects])
    classes = np.stack([targets(o)[1] for o in all_objects] + [targets(flipped(o))[1] for o in all_objects])
    print(f"{TRAIN_SCENES} scenes drawn in {time.time() - started:.0f} s; training {TRAIN_STEPS} steps", flush=True)

    optimizer = tf.keras.optimizers.Adam(3e-3)
    columns = len(LABELS) + 1

    @tf.function
    def step(batch, target_encodings, target_classes):
        with tf.GradientTape() as tape:
            predicted_encodings, logits = body(batch, training=True)
            positive = tf.cast(target_classes > 0, tf.float32)
            count = tf.maximum(tf.reduce_sum(positive), 1.0)
            one_hot = tf.one_hot(target_classes, columns)
            probabilities = tf.sigmoid(logits)
            cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(one_hot, logits)
            p_t = one_hot * probabilities + (1 - one_hot) * (1 - probabilities)
            alpha = one_hot * 0.25 + (1 - one_hot) * 0.75
            focal = tf.reduce_sum(alpha * (1 - p_t) ** 2 * cross_entropy) / count
            error = tf.abs(target_encodings - predicted_encodings)
            huber = tf.reduce_sum(tf.reduce_sum(tf.where(error < 1, 0.5 * error ** 2, error - 0.5), axis=-1) * positive) / count
            loss = focal + huber
        gradients = tape.gradient(loss, body.trainable_variables)
        optimizer.apply_gradients(zip(gradients, body.trainable_variables))
        return focal, huber

    training_started = time.time()
    for number in range(TRAIN_STEPS):
        # Cosine decay over the steps or the time budget, whichever runs out first.
        progress = max(number / TRAIN_STEPS, (time.time() - training_started) / TRAIN_SECONDS)
        if progress >= 1:
            break
        optimizer.learning_rate.assign(3e-3 * 0.5 * (1 + np.cos(np.pi * progress)))
        picks = rng.integers(0, 2 * TRAIN_SCENES, BATCH)
        flips = picks >= TRAIN_SCENES
        batch = images[picks % TRAIN_SCENES].astype(np.float32)
        batch[flips] = batch[flips][:, :, ::-1]
        focal, huber = step(tf.constant(batch), tf.constant(encodings[picks]), tf.constant(classes[picks]))
        if number % 100 == 0:
            print(f"step {number}: focal {float(focal):.3f} box {float(huber):.3f} ({time.time() - started:.0f} s)", flush=True)


def quantize(tf, exported, rng):
    def representative():
        for _ in range(100):
            pixels, _ = scene(rng)
            yield [normalized(pixels)[None]]
        yield [np.full((1, SIZE, SIZE, 3), -1.0, np.float32)]
        yield [np.full((1, SIZE, SIZE, 3), 1.0, np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(exported)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.uint8
    converter.inference_output_type = tf.uint8
    return converter.convert()


def with_postprocess(model_bytes):
    """Appends TFLite_Detection_PostProcess after the uint8 encodings and scores, with the anchors
    stored as uint8 (scale 1/255) like quantized SSD exports: LiteRT reads the anchors as uint8
    whenever the box encodings are uint8 (float anchors there give all-zero boxes)."""
    from ai_edge_litert import schema_py_generated as schema
    from testmodels import detection

    model = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
    subgraph = model.subgraphs[0]
    outputs = sorted(subgraph.outputs, key=lambda index: subgraph.tensors[index].shape[-1] != 4)
    encodings, scores = [(float(subgraph.tensors[i].quantization.scale[0]), int(subgraph.tensors[i].quantization.zeroPoint[0]))
                         for i in outputs]
    options = {"max_detections": MAX_DETECTIONS, "max_classes_per_detection": 1, "nms_score_threshold": SCORE_THRESHOLD,
               "nms_iou_threshold": 0.5, "num_classes": len(LABELS), **detection.BOX_CODER_SCALES}
    quantization = {"encodings": encodings, "scores": scores, "anchors": (1 / 255, 0)}
    return named_input(detection.append_postprocess(ANCHORS, options, quantization)(model_bytes)), options


def named_input(model_bytes):
    """Names the image input as AutoML Vision Edge exports do (tflite_metadata.json's inputTensor)."""
    from testmodels import surgery

    def change(model):
        subgraph = model.subgraphs[0]
        subgraph.tensors[subgraph.inputs[0]].name = INPUT_NAME
    return surgery.edit(model_bytes, change)


# ---------------------------------------------------------------------------------------------
# Metadata and bundle


def metadata_buffer():
    """TFLite Support metadata (schema M001), written with make_metadata_fixtures' table helpers."""
    import flatbuffers
    from make_metadata_fixtures import associated_file, offsets, s, scalars, table

    b = flatbuffers.Builder(1024)
    image_size = table(b, {0: ("u32", SIZE), 1: ("u32", SIZE)})
    image_props = table(b, {0: ("i8", 1), 1: ("offset", image_size)})  # ColorSpaceType.RGB
    input_content = table(b, {0: ("u8", 2), 1: ("offset", image_props)})  # ContentProperties.ImageProperties
    norm = table(b, {0: ("offset", scalars(b, "f32", [127.5])), 1: ("offset", scalars(b, "f32", [127.5]))})
    norm_unit = table(b, {0: ("u8", 1), 1: ("offset", norm)})  # ProcessOptions.NormalizationOptions
    stats = table(b, {0: ("offset", scalars(b, "f32", [255.0])), 1: ("offset", scalars(b, "f32", [0.0]))})
    input_tensor = table(b, {
        0: ("offset", s(b, "image")), 1: ("offset", s(b, "Input image to be detected.")),
        3: ("offset", input_content), 4: ("offset", offsets(b, [norm_unit])), 5: ("offset", stats)})
    # Boxes: (top, left, bottom, right) = index order [1, 0, 3, 2] of (left, top, right, bottom),
    # BoundingBoxType.BOUNDARIES, CoordinateType.RATIO.
    box_props = table(b, {0: ("offset", scalars(b, "u32", [1, 0, 3, 2])), 1: ("i8", 1), 2: ("i8", 0)})
    box_range = table(b, {0: ("i32", 2), 1: ("i32", 2)})
    box_content = table(b, {0: ("u8", 3), 1: ("offset", box_props), 2: ("offset", box_range)})
    location = table(b, {0: ("offset", s(b, "location")), 1: ("offset", s(b, "The locations of the detected boxes.")),
                         3: ("offset", box_content)})
    class_range = table(b, {0: ("i32", 1), 1: ("i32", 2)})
    class_content = table(b, {0: ("u8", 1), 1: ("offset", table(b, {})), 2: ("offset", class_range)})
    labels = associated_file(b, "labels.txt", "Labels for the detected shapes.", 3)  # TENSOR_VALUE_LABELS
    category = table(b, {0: ("offset", s(b, "category")), 1: ("offset", s(b, "The classes of the detected boxes.")),
                         3: ("offset", class_content), 6: ("offset", offsets(b, [labels]))})
    score_range = table(b, {0: ("i32", 1), 1: ("i32", 2)})
    score_content = table(b, {0: ("u8", 1), 1: ("offset", table(b, {})), 2: ("offset", score_range)})
    score = table(b, {0: ("offset", s(b, "score")), 1: ("offset", s(b, "The scores of the detected boxes.")),
                      3: ("offset", score_content)})
    count = table(b, {0: ("offset", s(b, "number of detections")),
                      1: ("offset", s(b, "The number of the detected boxes."))})
    group = table(b, {0: ("offset", s(b, "detection_result")),
                      1: ("offset", offsets(b, [s(b, "location"), s(b, "category"), s(b, "score")]))})
    subgraph = table(b, {
        2: ("offset", offsets(b, [input_tensor])),
        3: ("offset", offsets(b, [location, category, score, count])),
        8: ("offset", offsets(b, [group]))})
    root = table(b, {
        0: ("offset", s(b, "SwiftTFLite demo shape detector")),
        1: ("offset", s(b, "Finds circles, squares, triangles and crosses (40-130 px at 320x320) on "
                           "textured backgrounds. Trained on synthetic scenes by Scripts/make_demo_detector.py.")),
        2: ("offset", s(b, "1")),
        3: ("offset", offsets(b, [subgraph])),
        4: ("offset", s(b, "SwiftTFLite")),
        5: ("offset", s(b, "Apache-2.0")),
        7: ("offset", s(b, "1.0.0"))})
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def with_metadata(model_bytes):
    from make_metadata_fixtures import with_metadata as attach, zip_of

    return attach(model_bytes, metadata_buffer()) + zip_of({"labels.txt": "\n".join(LABELS) + "\n"})


def write_bundle(model_bytes, options):
    folder = os.path.join(OUT, "automl")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.tflite"), "wb") as out:
        out.write(model_bytes)
    with open(os.path.join(folder, "dict.txt"), "w") as out:
        out.write("\n".join(LABELS) + "\n")
    from testmodels.detection import OUTPUT_NAMES

    bundle = {"inferenceType": "QUANTIZED_UINT8", "inputShape": [1, SIZE, SIZE, 3],
              "inputTensor": INPUT_NAME, "maxDetections": options["max_detections"],
              "outputTensorRepresentation": ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"],
              "outputTensors": OUTPUT_NAMES}
    with open(os.path.join(folder, "tflite_metadata.json"), "w") as out:
        json.dump(bundle, out, indent=2)
        out.write("\n")


# ---------------------------------------------------------------------------------------------
# Test scenes, reference outputs, evaluation


def detections(outputs, width, height, threshold=0.5):
    boxes, classes, scores, count = outputs
    found = []
    for index in range(int(count[0])):
        if scores[0, index] >= threshold:
            top, left, bottom, right = boxes[0, index]
            found.append((int(classes[0, index]), float(scores[0, index]),
                          (left * width, top * height, right * width, bottom * height)))
    return found


def matches(objects, found):
    """Objects found with the right label and IoU >= 0.5."""
    return sum(any(label == f[0] and iou(box, f[2]) >= 0.5 for f in found) for label, box in objects)


def evaluate(model_bytes, rng, count=60):
    from testmodels.litert_run import run

    objects_total = hits = false_alarms = 0
    for _ in range(count):
        pixels, objects = scene(rng)
        found = detections(run(model_bytes, [pixels[None]]), SIZE, SIZE)
        objects_total += len(objects)
        hits += matches(objects, found)
        false_alarms += sum(not any(label == f[0] and iou(box, f[2]) >= 0.5 for label, box in objects) for f in found)
    print(f"held-out scenes: {hits}/{objects_total} objects found (score >= 0.5, IoU >= 0.5, right label); "
          f"{false_alarms} false detections", flush=True)


def write_scenes(model_bytes):
    from testmodels.litert_run import run

    rng = np.random.default_rng(20261126)
    described = []
    for number, (extension, height, width) in enumerate(
            [("jpg", SIZE, SIZE), ("png", SIZE, SIZE), ("jpg", SIZE, SIZE), ("jpg", 480, 640)], start=1):
        pixels, objects = scene(rng, height, width, scale=width / SIZE if height != SIZE else 1.0)
        name = f"scene_{number}.{extension}"
        path = os.path.join(OUT, name)
        Image.fromarray(pixels).save(path, quality=90) if extension == "jpg" else Image.fromarray(pixels).save(path)
        entry = {"file": name, "width": width, "height": height,
                 "objects": [{"label": LABELS[label], "box": list(box)} for label, box in objects]}
        decoded = np.asarray(Image.open(path).convert("RGB"))
        if (height, width) == (SIZE, SIZE):
            outputs = run(model_bytes, [decoded[None]])
            for index, value in enumerate(outputs):
                np.save(os.path.join(OUT, f"scene_{number}.output_{index}.npy"), value)
            found = detections(outputs, width, height)
            entry["reference_found"] = matches(objects, found)
            print(f"{name}: {len(objects)} objects, LiteRT finds {matches(objects, found)} of them; "
                  f"{len(found)} detections >= 0.5: " +
                  ", ".join(f"{LABELS[c]} {s:.2f}" for c, s, _ in found), flush=True)
        described.append(entry)
    with open(os.path.join(OUT, "scenes.json"), "w") as out:
        json.dump({"labels": LABELS, "scenes": described}, out, indent=1)
        out.write("\n")


def main():
    import tensorflow as tf

    tf.keras.utils.set_random_seed(5)
    os.makedirs(OUT, exist_ok=True)
    body, exported = build_models(tf)
    train(tf, body, np.random.default_rng(7))
    model_bytes, options = with_postprocess(quantize(tf, exported, np.random.default_rng(8)))
    evaluate(model_bytes, np.random.default_rng(9))
    write_bundle(model_bytes, options)
    with open(os.path.join(OUT, "demo_detector.tflite"), "wb") as out:
        out.write(with_metadata(model_bytes))
    write_scenes(model_bytes)


if __name__ == "__main__":
    main()
