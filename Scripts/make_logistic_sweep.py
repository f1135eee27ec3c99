#!/usr/bin/env python3
"""Writes TestModels/activations/logistic_sweep.*.npy: LiteRT's float LOGISTIC over a sweep of the
whole float range, for the accuracy test of the runtime's logistic (GeneratedLogisticKernelTests).

The input holds NaN, ±inf, ±0, the smallest and largest subnormals and normals, the largest finite
floats, the values around the approximation's cap (±87) and where the true result underflows
(±103.97), 4096 bit patterns spread evenly over the positive floats with both signs (every
magnitude from subnormal to huge), and a dense run over [-20, 20]. The outputs are LiteRT 2.3's:
the reference kernels (BUILTIN_REF) and the default optimized builtin kernels. Run from the
repository root with the pinned LiteRT / TensorFlow (Scripts/requirements.txt):
    python3 Scripts/make_logistic_sweep.py
"""

import pathlib
import tempfile

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

OUT = pathlib.Path(__file__).resolve().parent.parent / "TestModels/activations"


def sweep():
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38,
               1.1754944e-38, -1.1754944e-38, 3.4028235e38, -3.4028235e38, 1e-30, -1e-30, 1e-8, -1e-8,
               86.9, -86.9, 87.0, -87.0, 87.1, -87.1, 88.7, -88.7, 103.9, -103.9, 104.0, -104.0, 200, -200]
    patterns = (np.arange(4096, dtype=np.uint64) * (0x7F800000 // 4096)).astype(np.uint32)
    magnitudes = patterns.view(np.float32)
    dense = np.linspace(-20, 20, 8192, dtype=np.float32)
    values = np.concatenate([np.array(special, dtype=np.float32), magnitudes, -magnitudes, dense])
    return values.astype(np.float32)


def model(count):
    function = tf.function(lambda x: tf.math.sigmoid(x),
                           input_signature=[tf.TensorSpec([count], tf.float32)])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function.get_concrete_function()], function)
    return converter.convert()


def run(flatbuffer, values, resolver):
    with tempfile.TemporaryDirectory() as directory:
        path = pathlib.Path(directory) / "logistic.tflite"
        path.write_bytes(flatbuffer)
        interpreter = Interpreter(model_path=str(path), experimental_op_resolver_type=resolver)
        interpreter.allocate_tensors()
        assert [op["op_name"] for op in interpreter._get_ops_details()] == ["LOGISTIC"]
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], values)
        interpreter.invoke()
        return interpreter.get_tensor(interpreter.get_output_details()[0]["index"]).copy()


def main():
    values = sweep()
    flatbuffer = model(values.size)
    OUT.mkdir(parents=True, exist_ok=True)
    np.save(OUT / "logistic_sweep.input.npy", values)
    np.save(OUT / "logistic_sweep.litert_reference.npy", run(flatbuffer, values, OpResolverType.BUILTIN_REF))
    np.save(OUT / "logistic_sweep.litert_builtin.npy",
            run(flatbuffer, values, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    print(f"wrote {values.size} values to {OUT}")


if __name__ == "__main__":
    main()
