"""Writes TestModels/metadata/: TFLite models carrying TFLite Support metadata (TFLITE_METADATA).

The `tflite-support` package does not install on Python 3.11 / numpy 2, so the metadata FlatBuffer
is written here field by field with the `flatbuffers` builder, following metadata_schema.fbs
(file identifier "M001"; a union takes two field slots: type code, then table). The values below
are the reference the Swift tests assert. The model is an existing detection fixture; the metadata
is added as a new buffer with LiteRT's schema object API, then a ZIP of associated files is
appended, as the TFLite Support MetadataPopulator does.

    /work/venv/bin/python Scripts/make_metadata_fixtures.py
"""

import io
import os
import zipfile

import flatbuffers
from ai_edge_litert import schema_py_generated as tfl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "TestModels/detection/detection_postprocess_f32_regular.tflite")
OUT = os.path.join(ROOT, "TestModels/metadata")

LABELS = "background\ncat\ndog\n"
LABELS_FR = "fond\nchat\nchien\n"


def table(builder, fields):
    """Builds one table; `fields` maps slot -> ("offset"|"u8"|"i8"|"u32"|"i32"|"f32", value)."""
    builder.StartObject(max(fields) + 1 if fields else 0)
    for slot, (kind, value) in fields.items():
        if kind == "offset":
            builder.PrependUOffsetTRelativeSlot(slot, value, 0)
        else:
            prepend = {"u8": builder.PrependUint8Slot, "i8": builder.PrependInt8Slot,
                       "u32": builder.PrependUint32Slot, "i32": builder.PrependInt32Slot,
                       "f32": builder.PrependFloat32Slot}[kind]
            prepend(slot, value, None)
    return builder.EndObject()


def offsets(builder, items):
    builder.StartVector(4, len(items), 4)
    for item in reversed(items):
        builder.PrependUOffsetTRelative(item)
    return builder.EndVector()


def scalars(builder, kind, values):
    size = 4
    builder.StartVector(size, len(values), size)
    for value in reversed(values):
        {"f32": builder.PrependFloat32, "u32": builder.PrependUint32}[kind](value)
    return builder.EndVector()


def s(builder, text):
    return builder.CreateString(text)


def associated_file(b, name, description, file_type, locale=None):
    fields = {0: ("offset", s(b, name)), 1: ("offset", s(b, description)), 2: ("i8", file_type)}
    if locale:
        fields[3] = ("offset", s(b, locale))
    return table(b, fields)


def metadata_buffer():
    b = flatbuffers.Builder(1024)
    # Input: an image, RGB, 8x8 default, normalized by (x - 127.5) / 127.5; stats 0...255.
    image_size = table(b, {0: ("u32", 8), 1: ("u32", 8)})
    image_props = table(b, {0: ("i8", 1), 1: ("offset", image_size)})
    input_content = table(b, {0: ("u8", 2), 1: ("offset", image_props)})
    norm = table(b, {0: ("offset", scalars(b, "f32", [127.5])), 1: ("offset", scalars(b, "f32", [127.5]))})
    norm_unit = table(b, {0: ("u8", 1), 1: ("offset", norm)})
    stats = table(b, {0: ("offset", scalars(b, "f32", [255.0])), 1: ("offset", scalars(b, "f32", [0.0]))})
    input_tensor = table(b, {
        0: ("offset", s(b, "image")), 1: ("offset", s(b, "Input image to be detected.")),
        3: ("offset", input_content), 4: ("offset", offsets(b, [norm_unit])), 5: ("offset", stats)})
    # Outputs: locations (boxes top,left,bottom,right ratio over dim 2), classes (labels), scores
    # (calibrated, thresholded), count.
    box_props = table(b, {0: ("offset", scalars(b, "u32", [1, 0, 3, 2])), 1: ("i8", 1), 2: ("i8", 0)})
    box_range = table(b, {0: ("i32", 2), 1: ("i32", 2)})
    box_content = table(b, {0: ("u8", 3), 1: ("offset", box_props), 2: ("offset", box_range)})
    location = table(b, {0: ("offset", s(b, "location")), 3: ("offset", box_content),
                         2: ("offset", offsets(b, [s(b, "batch"), s(b, "box"), s(b, "coordinate")]))})
    feature = table(b, {})
    class_range = table(b, {0: ("i32", 1), 1: ("i32", 1)})
    class_content = table(b, {0: ("u8", 1), 1: ("offset", feature), 2: ("offset", class_range)})
    labels = associated_file(b, "labels.txt", "Labels for detected objects.", 3)
    labels_fr = associated_file(b, "labels_fr.txt", "Étiquettes en français.", 3, "fr")
    category = table(b, {0: ("offset", s(b, "category")), 3: ("offset", class_content),
                         6: ("offset", offsets(b, [labels, labels_fr]))})
    calibration = table(b, {0: ("i8", 2), 1: ("f32", 0.25)})
    calibration_unit = table(b, {0: ("u8", 2), 1: ("offset", calibration)})
    threshold = table(b, {0: ("f32", 0.5)})
    threshold_unit = table(b, {0: ("u8", 3), 1: ("offset", threshold)})
    score_content = table(b, {0: ("u8", 1), 1: ("offset", table(b, {})), 2: ("offset", table(b, {0: ("i32", 1), 1: ("i32", 1)}))})
    score = table(b, {0: ("offset", s(b, "score")), 3: ("offset", score_content),
                      4: ("offset", offsets(b, [calibration_unit, threshold_unit]))})
    count = table(b, {0: ("offset", s(b, "number of detections"))})
    group = table(b, {0: ("offset", s(b, "detection_result")),
                      1: ("offset", offsets(b, [s(b, "location"), s(b, "category"), s(b, "score")]))})
    subgraph = table(b, {
        0: ("offset", s(b, "main")),
        2: ("offset", offsets(b, [input_tensor])),
        3: ("offset", offsets(b, [location, category, score, count])),
        8: ("offset", offsets(b, [group]))})
    model_file = associated_file(b, "readme.txt", "About the model.", 1)
    root = table(b, {
        0: ("offset", s(b, "Metadata fixture detector")),
        1: ("offset", s(b, "Detects cats and dogs.")),
        2: ("offset", s(b, "v3")),
        3: ("offset", offsets(b, [subgraph])),
        4: ("offset", s(b, "SwiftTFLite tests")),
        5: ("offset", s(b, "Apache-2.0")),
        6: ("offset", offsets(b, [model_file])),
        7: ("offset", s(b, "1.2.0"))})
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def with_metadata(model_bytes, metadata):
    model = tfl.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
    buffer = tfl.BufferT()
    buffer.data = list(metadata)
    model.buffers.append(buffer)
    entry = tfl.MetadataT()
    entry.name = "TFLITE_METADATA"
    entry.buffer = len(model.buffers) - 1
    model.metadata = (model.metadata or []) + [entry]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def zip_of(files):
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return data.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(SOURCE, "rb") as source:
        model = with_metadata(source.read(), metadata_buffer())
    archive = zip_of({"labels.txt": LABELS, "labels_fr.txt": LABELS_FR, "readme.txt": "A test model.\n"})
    with open(os.path.join(OUT, "detector_with_metadata.tflite"), "wb") as out:
        out.write(model + archive)
    with open(os.path.join(OUT, "detector_with_bad_metadata.tflite"), "wb") as out:
        out.write(with_metadata(open(SOURCE, "rb").read(), metadata_buffer()[:40]))


if __name__ == "__main__":
    main()
