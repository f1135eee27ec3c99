#!/usr/bin/env python3
"""Writes TestModels/format3d: small models using what 2025-2026 converters write (schema 3d).

Every model is built field by field with LiteRT's own schema classes (ai-edge-litert 2.3.0's
`schema_py_generated`), so field ids and enum values are LiteRT's:

- external_fc.tflite + external_fc_weights.bin: FULLY_CONNECTED whose weights and bias live in an
  external file (ExternalBufferGroup / ExternalBuffer / Tensor.external_buffer), at 64-byte aligned
  offsets after padding. Its input and expected output are saved next to it: numpy's x @ W^T + b,
  checked against LiteRT's CompiledModel (whose weight loader reads external buffers; LiteRT's
  Interpreter leaves such tensors without data).
- external_*.tflite (bad input): the same graph with a group name that climbs out of the folder,
  an absolute group name, a missing file, a range past the end of the file, a length that does not
  match the tensor, an id no external buffer has, two buffers with one id, data both inline and
  external; blockwise_bad_scales.tflite names a scale tensor that does not exist.
- types_2026.tflite: DEQUANTIZE of INT2, UINT4, FLOAT8_E4M3FN and FLOAT8_E5M2 constants (the
  runtime holds none of these types).
- quantization_2026.tflite: FULLY_CONNECTED with INT4 weights under BlockwiseQuantization (block
  size 4, block shape [1, 4], scales in a tensor) and under MultiAxisQuantization (axes [0, 1]).
- signature_subgraph.tflite: subgraph 0 runs; subgraph 1, which only a signature reaches,
  dequantizes a UINT4 constant.
- boundary_uint4.tflite: no operators; a UINT4 subgraph input is also its output.
- custom_decode.tflite: a custom operator with custom code DECODE whose options are a FlexBuffer
  map (values chosen here to exercise the decoder), followed by ADD.

`manifest.json` records, per model, what the tests expect (from these definitions, not from the
Swift code), and whether LiteRT's Interpreter loads and prepares it.

Usage: /work/venv/bin/python Scripts/make_format_3d_fixtures.py   (writes TestModels/format3d)
"""
import json
import os

import ai_edge_litert
import flatbuffers
import numpy as np
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema
from flatbuffers import flexbuffers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "TestModels", "format3d")
# LiteRT's weight loader maps external data as host memory aligned to 64 bytes: every range starts
# at a multiple of 64.
ALIGNMENT = 64


def tensor(name, type_name, shape, buffer=0, external=0, quantization=None):
    value = schema.TensorT()
    value.name = name
    value.type = getattr(schema.TensorType, type_name)
    value.shape = shape
    value.buffer = buffer
    value.externalBuffer = external
    value.quantization = quantization
    return value


def buffer(data=None):
    value = schema.BufferT()
    if data is not None:
        value.data = list(data)
    return value


def operator_code(name, custom_code=None):
    code = schema.OperatorCodeT()
    code.builtinCode = getattr(schema.BuiltinOperator, name)
    code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    code.customCode = custom_code
    code.version = 1
    return code


def operator(opcode_index, inputs, outputs, custom_options=None):
    value = schema.OperatorT()
    value.opcodeIndex = opcode_index
    value.inputs = inputs
    value.outputs = outputs
    if custom_options is not None:
        value.customOptions = list(custom_options)
    return value


def subgraph(tensors, inputs, outputs, operators):
    graph = schema.SubGraphT()
    graph.tensors, graph.inputs, graph.outputs, graph.operators = tensors, inputs, outputs, operators
    return graph


def signature(key, subgraph_index, inputs, outputs):
    """A signature def; inputs and outputs are (name, tensor index) pairs."""
    def maps(pairs):
        result = []
        for name, index in pairs:
            entry = schema.TensorMapT()
            entry.name, entry.tensorIndex = name, index
            result.append(entry)
        return result
    value = schema.SignatureDefT()
    value.signatureKey, value.subgraphIndex = key, subgraph_index
    value.inputs, value.outputs = maps(inputs), maps(outputs)
    return value


def finish(codes, tensors, inputs, outputs, operators, buffers, groups=None, externals=None, more_subgraphs=(),
           signatures=None):
    model = schema.ModelT()
    model.version = 3
    model.description = "SwiftTFLite format3d fixture"
    model.operatorCodes = codes
    model.subgraphs = [subgraph(tensors, inputs, outputs, operators)] + list(more_subgraphs)
    model.signatureDefs = signatures
    model.buffers = [buffer()] + buffers
    model.externalBufferGroups = groups
    model.externalBuffers = externals
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def group(name):
    value = schema.ExternalBufferGroupT()
    value.name = name
    return value


def external(identifier, group_index, offset, length, packing="unpacked"):
    return schema.ExternalBufferT(id=identifier, group=group_index, offset=offset, length=length, packing=packing)


WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 8 - 0.5
BIAS = np.array([0.5, -2.0, 1.0], dtype=np.float32)
INPUT = np.array([[1.0, -2.0, 0.5, 3.0]], dtype=np.float32)


def external_fc(group_name="external_fc_weights.bin", weights_range=(ALIGNMENT, 48), bias_id=2, weight_id=1,
                duplicate_id=False, inline_too=False):
    """FULLY_CONNECTED(input, weights, bias) with weights and bias in external buffers."""
    tensors = [
        tensor("input", "FLOAT32", [1, 4]),
        tensor("weights", "FLOAT32", [3, 4], buffer=1 if inline_too else 0, external=weight_id),
        tensor("bias", "FLOAT32", [3], external=bias_id),
        tensor("output", "FLOAT32", [1, 3]),
    ]
    buffers = [buffer(WEIGHTS.tobytes())] if inline_too else []
    externals = [external(1, 0, *weights_range), external(1 if duplicate_id else 2, 0, 2 * ALIGNMENT, 12)]
    return finish([operator_code("FULLY_CONNECTED")], tensors, [0], [3], [operator(0, [0, 1, 2], [3])], buffers,
                  [group(group_name)], externals)


def types_2026():
    """DEQUANTIZE of one constant of each type the runtime does not hold."""
    cases = [("int2", "INT2", bytes([0b11100100])), ("uint4", "UINT4", bytes([0x21, 0x43])),
             ("float8_e4m3fn", "FLOAT8_E4M3FN", bytes([0x38, 0x40, 0x44, 0x48])),
             ("float8_e5m2", "FLOAT8_E5M2", bytes([0x3C, 0x40, 0x42, 0x44]))]
    tensors, operators, buffers, outputs = [], [], [], []
    for index, (name, type_name, data) in enumerate(cases):
        quantization = schema.QuantizationParametersT()
        quantization.scale, quantization.zeroPoint = [0.5], [0]
        tensors.append(tensor(name, type_name, [4], buffer=index + 1,
                              quantization=quantization if "float8" not in name else None))
        tensors.append(tensor(name + "_as_float", "FLOAT32", [4]))
        buffers.append(buffer(data))
        operators.append(operator(0, [2 * index], [2 * index + 1]))
        outputs.append(2 * index + 1)
    return finish([operator_code("DEQUANTIZE")], tensors, [], outputs, operators, buffers)


def quantization_2026(scales_tensor=2):
    """FULLY_CONNECTED with blockwise and with multi-axis quantized INT4 weights, whose scales are
    tensor `scales_tensor`."""
    def details(kind, value):
        parameters = schema.QuantizationParametersT()
        parameters.detailsType = getattr(schema.QuantizationDetails, kind)
        parameters.details = value
        return parameters

    int4_weights = bytes([0x21, 0x43, 0x65, 0x07] * 2)  # [2, 8] INT4, two values a byte
    scales = np.array([[0.5, 0.25], [1.0, 2.0]], dtype=np.float32)
    tensors = [
        tensor("input", "FLOAT32", [1, 8]),
        tensor("blockwise_weights", "INT4", [2, 8], buffer=1, quantization=details(
            "BlockwiseQuantization", schema.BlockwiseQuantizationT(scales=scales_tensor, zeroPoints=-1, blockSize=4,
                                                                    blockShape=[1, 4]))),
        tensor("block_scales", "FLOAT32", [2, 2], buffer=2),
        tensor("blockwise_output", "FLOAT32", [1, 2]),
        tensor("multi_axis_weights", "INT4", [2, 8], buffer=1, quantization=details(
            "MultiAxisQuantization", schema.MultiAxisQuantizationT(scales=2, zeroPoints=-1, blockSize=0,
                                                                    quantizedDimensions=[0, 1]))),
        tensor("multi_axis_output", "FLOAT32", [1, 2]),
    ]
    operators = [operator(0, [0, 1, -1], [3]), operator(0, [0, 4, -1], [5])]
    return finish([operator_code("FULLY_CONNECTED")], tensors, [0], [3, 5], operators,
                  [buffer(int4_weights), buffer(scales.tobytes())])


DECODE_OPTIONS = {"decode_type": "lut", "bits_per_index": 4, "value_table_stride": 16, "ancillary": [1, 2, 3]}


def custom_decode():
    """DECODE (custom) on an int8 input, then ADD of the result to itself."""
    tensors = [tensor("encoded", "INT8", [1, 8]), tensor("decoded", "FLOAT32", [1, 8]),
               tensor("sum", "FLOAT32", [1, 8])]
    options = flexbuffers.Dumps(DECODE_OPTIONS)
    operators = [operator(0, [0], [1], custom_options=options), operator(1, [1, 1], [2])]
    return finish([operator_code("CUSTOM", "DECODE"), operator_code("ADD")], tensors, [0], [2], operators, [])


def signature_subgraph():
    """Subgraph 0 adds its input to itself; subgraph 1, reached only through signature
    `dequantize`, dequantizes a UINT4 constant."""
    main = [tensor("x", "FLOAT32", [2]), tensor("x_plus_x", "FLOAT32", [2])]
    quantization = schema.QuantizationParametersT()
    quantization.scale, quantization.zeroPoint = [0.5], [0]
    second = subgraph([tensor("uint4", "UINT4", [2], buffer=1, quantization=quantization),
                       tensor("uint4_as_float", "FLOAT32", [2])], [], [1], [operator(1, [0], [1])])
    signatures = [signature("add", 0, [("x", 0)], [("y", 1)]), signature("dequantize", 1, [], [("y", 1)])]
    return finish([operator_code("ADD"), operator_code("DEQUANTIZE")], main, [0], [1], [operator(0, [0, 0], [1])],
                  [buffer(bytes([0x21]))], more_subgraphs=[second], signatures=signatures)


def boundary_uint4():
    """No operators: a UINT4 subgraph input that is also the output."""
    return finish([], [tensor("packed", "UINT4", [2])], [0], [0], [], [])


def litert_loads(path):
    """Whether LiteRT's interpreter loads and prepares the model, or its error."""
    try:
        interpreter = litert.Interpreter(model_path=path,
                                         experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
        interpreter.allocate_tensors()
        return {"loads": True}
    except Exception as error:  # LiteRT raises ValueError / RuntimeError with its reporter's text
        return {"loads": False, "error": str(error).strip().splitlines()[0][:200]}


def compiled_model_output(path):
    """external_fc's output from LiteRT's CompiledModel, which loads external buffers."""
    from ai_edge_litert.compiled_model import CompiledModel
    model = CompiledModel.from_file(path)
    inputs, outputs = model.create_input_buffers(0), model.create_output_buffers(0)
    inputs[0].write(INPUT)
    model.run_by_index(0, inputs, outputs)
    return np.array(outputs[0].read(3, np.float32), dtype=np.float32).reshape(1, 3)


def main():
    os.makedirs(ROOT, exist_ok=True)
    with open(os.path.join(ROOT, "external_fc_weights.bin"), "wb") as handle:
        handle.write(bytes([0xAB]) * ALIGNMENT + WEIGHTS.tobytes() + bytes([0xCD]) * (ALIGNMENT - 48)
                     + BIAS.tobytes())
    expected = (INPUT @ WEIGHTS.T + BIAS).astype(np.float32)
    np.save(os.path.join(ROOT, "external_fc.input_0.npy"), INPUT, allow_pickle=False)
    np.save(os.path.join(ROOT, "external_fc.expected_0.npy"), expected, allow_pickle=False)
    models = {
        "external_fc": (external_fc(), "loads"),
        "external_escape": (external_fc(group_name="../external_fc_weights.bin"), "Model.external_buffer_groups[0].name"),
        "external_absolute": (external_fc(group_name="/etc/passwd"), "Model.external_buffer_groups[0].name"),
        "external_missing_file": (external_fc(group_name="missing_weights.bin"), "cannot open"),
        "external_past_end": (external_fc(weights_range=(2 * ALIGNMENT, 48)), "lies beyond the end"),
        "external_lying_length": (external_fc(weights_range=(ALIGNMENT, 40)), "needs 48 bytes"),
        "external_unknown_id": (external_fc(bias_id=9), "no entry of Model.external_buffers has that id"),
        "external_duplicate_id": (external_fc(duplicate_id=True), "is also the id of"),
        "external_inline_too": (external_fc(inline_too=True), "has data both in buffer"),
        "types_2026": (types_2026(), "unsupported"),
        "quantization_2026": (quantization_2026(), "unsupported"),
        "blockwise_bad_scales": (quantization_2026(scales_tensor=99), "(BlockwiseQuantization).scales is 99"),
        "custom_decode": (custom_decode(), "unsupported"),
        "signature_subgraph": (signature_subgraph(), "unsupported"),
        "boundary_uint4": (boundary_uint4(), "unsupported"),
    }
    manifest = {"generator": {"ai_edge_litert": ai_edge_litert.__version__, "numpy": np.__version__},
                "decode_options": DECODE_OPTIONS, "models": []}
    for name, (data, expectation) in models.items():
        path = os.path.join(ROOT, f"{name}.tflite")
        with open(path, "wb") as handle:
            handle.write(data)
        manifest["models"].append({"name": name, "file": f"format3d/{name}.tflite", "expect": expectation,
                                   "litert_interpreter": litert_loads(path)})
    litert_output = compiled_model_output(os.path.join(ROOT, "external_fc.tflite"))
    assert np.array_equal(litert_output, expected), (litert_output, expected)
    manifest["external_fc_litert_compiled_model_output"] = litert_output.tolist()
    with open(os.path.join(ROOT, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
