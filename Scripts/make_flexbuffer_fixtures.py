#!/usr/bin/env python3
"""Writes Tests/TFLiteFormatTests/Fixtures/FlexBufferPythonFixtures.swift.

Each fixture is a FlexBuffer produced by the reference Python encoder
(`flatbuffers.flexbuffers` from the `flatbuffers` PyPI package) together with
the JSON text of the value that was encoded, so the Swift reader can be checked
against an encoder it shares no code with.

Run with any Python that has `flatbuffers` installed, for example:
    /work/venv-ref/bin/python Scripts/make_flexbuffer_fixtures.py
"""

import array
import json
import math
import pathlib

import flatbuffers
from flatbuffers import flexbuffers

OUTPUT = (pathlib.Path(__file__).resolve().parent.parent
          / "Tests/TFLiteFormatTests/Fixtures/FlexBufferPythonFixtures.swift")

BitWidth = flexbuffers.BitWidth
Type = flexbuffers.Type


def build(write, **builder_options):
    """Runs `write(builder)` on a fresh Builder and returns the finished bytes."""
    builder = flexbuffers.Builder(**builder_options)
    write(builder)
    return bytes(builder.Finish())


def detection_postprocess_options(builder):
    """The custom options of TFLite_Detection_PostProcess, written as TFLite's converter does
    (ints, a bool, 32-bit floats)."""
    with builder.Map():
        builder.Int("max_detections", 10)
        builder.Int("max_classes_per_detection", 1)
        builder.Int("detections_per_class", 100)
        builder.Bool("use_regular_nms", False)
        builder.Float("nms_score_threshold", 0.3, byte_width=4)
        builder.Float("nms_iou_threshold", 0.6, byte_width=4)
        builder.Int("num_classes", 90)
        builder.Float("y_scale", 10.0, byte_width=4)
        builder.Float("x_scale", 10.0, byte_width=4)
        builder.Float("h_scale", 5.0, byte_width=4)
        builder.Float("w_scale", 5.0, byte_width=4)


DETECTION_OPTIONS = {
    "max_detections": 10, "max_classes_per_detection": 1, "detections_per_class": 100,
    "use_regular_nms": False, "nms_score_threshold": 0.3, "nms_iou_threshold": 0.6,
    "num_classes": 90, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0,
}

GOLD = {
    "bar": [1, 2, 3],
    "bool": True,
    "bools": [True, False, True, False],
    "foo": 100.0,
    "mymap": {"foo": "Fred"},
    "vec": [-100, "Fred", 4.0, b"M", False, 4.0],
}


def typed_vectors(builder):
    with builder.Map():
        builder.Key("ints8")
        builder.TypedVectorFromElements(array.array("b", [1, -2, 127, -128]))
        builder.Key("ints64")
        builder.TypedVectorFromElements(array.array("q", [2**62, -(2**62)]))
        builder.Key("uints16")
        builder.TypedVectorFromElements(array.array("H", [0, 65535]))
        builder.Key("floats32")
        builder.TypedVectorFromElements(array.array("f", [0.5, -1.25, 8.0]))
        builder.Key("floats64")
        builder.TypedVectorFromElements(array.array("d", [0.1, 1e300]))
        builder.Key("bools")
        builder.TypedVectorFromElements([True, False, True], element_type=Type.BOOL)
        builder.Key("keys")
        builder.TypedVectorFromElements(["alpha", "beta"], element_type=Type.KEY)


TYPED_VECTORS = {
    "ints8": [1, -2, 127, -128], "ints64": [2**62, -(2**62)], "uints16": [0, 65535],
    "floats32": [0.5, -1.25, 8.0], "floats64": [0.1, 1e300], "bools": [True, False, True],
    "keys": ["alpha", "beta"],
}


def fixed_vectors(builder):
    with builder.Vector():
        builder.FixedTypedVectorFromElements([1, -2])
        builder.FixedTypedVectorFromElements([1, 2, 3], element_type=Type.UINT)
        builder.FixedTypedVectorFromElements([1.5, 2.5, 3.5, 4.5])
        builder.FixedTypedVectorFromElements([70000, -70000, 5, 6])
        builder.FixedTypedVectorFromElements([0.1, 0.2], byte_width=8)
        builder.FixedTypedVectorFromElements([300, 400, 500], element_type=Type.UINT, byte_width=8)


FIXED_VECTORS = [[1, -2], [1, 2, 3], [1.5, 2.5, 3.5, 4.5], [70000, -70000, 5, 6], [0.1, 0.2], [300, 400, 500]]


def indirect_values(builder):
    with builder.Vector():
        builder.IndirectInt(-5)
        builder.IndirectInt(2**40)
        builder.IndirectInt(7, byte_width=8)
        builder.IndirectUInt(250)
        builder.IndirectUInt(2**64 - 1)
        builder.IndirectFloat(0.25)
        builder.IndirectFloat(0.1, byte_width=8)
        builder.Int(3)


INDIRECT_VALUES = [-5, 2**40, 7, 250, 2**64 - 1, 0.25, 0.1, 3]

SCALARS = [None, True, 0, -1, 2**63 - 1, -(2**63), 0.5, -1e-300, "", "Grüße, \"Welt\"\n", b"", b"\x00\xff"]

NESTED = {
    "level1": {"level2": {"level3": [[1, [2, [3, {"deep": "yes"}]]]]}},
    "empty_map": {},
    "empty_vector": [],
    "list_of_maps": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}],
}

LARGE_MAP = {f"key_{index:03d}": index * 1000 for index in range(300)}
LARGE_BLOB = bytes(range(256)) * 2


def fixtures():
    """(name, bytes, encoded value) for every fixture."""
    return [
        ("gold", flexbuffers.Dumps(GOLD), GOLD),
        ("gold_force_16_bit", build(lambda b: b.Add(GOLD), force_min_bit_width=BitWidth.W16), GOLD),
        ("gold_force_32_bit", build(lambda b: b.Add(GOLD), force_min_bit_width=BitWidth.W32), GOLD),
        ("gold_force_64_bit", build(lambda b: b.Add(GOLD), force_min_bit_width=BitWidth.W64), GOLD),
        ("detection_postprocess_options", build(detection_postprocess_options), DETECTION_OPTIONS),
        ("typed_vectors", build(typed_vectors), TYPED_VECTORS),
        ("fixed_vectors", build(fixed_vectors), FIXED_VECTORS),
        ("indirect_values", build(indirect_values), INDIRECT_VALUES),
        ("scalars", flexbuffers.Dumps(SCALARS), SCALARS),
        ("nested", flexbuffers.Dumps(NESTED), NESTED),
        ("shared_strings_and_keys", build(lambda b: b.Add(NESTED["list_of_maps"] * 2), share_strings=True),
         NESTED["list_of_maps"] * 2),
        ("large_map", flexbuffers.Dumps(LARGE_MAP), LARGE_MAP),
        ("large_blob", flexbuffers.Dumps([LARGE_BLOB, 1]), [LARGE_BLOB, 1]),
        ("root_int", flexbuffers.Dumps(13), 13),
        ("root_uint_max", build(lambda b: b.UInt(2**64 - 1)), 2**64 - 1),
        ("root_double", flexbuffers.Dumps(0.1), 0.1),
        ("root_string", flexbuffers.Dumps("hello"), "hello"),
    ]


def json_ready(value):
    """The value with blobs turned into lists of byte values, as the Swift reader renders them."""
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_ready(item) for item in value]
    return value


def same_value(decoded, expected):
    """Whether Python's own decoder read back the encoded value (32-bit floats approximately)."""
    if isinstance(expected, float):
        return math.isclose(decoded, expected, rel_tol=1e-7)
    if isinstance(expected, dict):
        return decoded.keys() == expected.keys() and all(same_value(decoded[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return len(decoded) == len(expected) and all(same_value(d, e) for d, e in zip(decoded, expected))
    return decoded == expected


def swift_bytes(data):
    rows = [", ".join(str(byte) for byte in data[start:start + 24]) for start in range(0, len(data), 24)]
    return "[\n" + "".join(f"      {row},\n" for row in rows) + "    ]"


def main():
    entries = []
    for name, data, value in fixtures():
        assert same_value(flexbuffers.Loads(data), value), name
        text = json.dumps(json_ready(value), sort_keys=True, ensure_ascii=False)
        assert '"#' not in text, name
        entries.append(
            f"  FlexBufferPythonFixture(\n    name: \"{name}\",\n    bytes: {swift_bytes(data)},\n"
            f"    json: #\"{text}\"#),\n")
    OUTPUT.write_text(
        "// Generated by Scripts/make_flexbuffer_fixtures.py with the FlexBuffers encoder of the Python\n"
        f"// `flatbuffers` package {flatbuffers.__version__}. Do not edit; rerun the script instead.\n\n"
        "/// A FlexBuffer written by the reference Python encoder, and the JSON of the value it encodes.\n"
        "struct FlexBufferPythonFixture {\n  let name: String\n  let bytes: [UInt8]\n  let json: String\n}\n\n"
        "let flexBufferPythonFixtures: [FlexBufferPythonFixture] = [\n" + "".join(entries) + "]\n")
    print(f"wrote {len(entries)} fixtures to {OUTPUT}")


if __name__ == "__main__":
    main()
