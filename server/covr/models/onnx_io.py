"""Write a standardized MLP head as an ONNX graph and run ONNX files with onnxruntime.

Why build the graph by hand with ``onnx.helper``: the heads are a few matrix products, so no
converter (and no torch) is needed; the graph states its opset, named inputs with a dynamic batch
axis, and carries model metadata in ``metadata_props`` (DESIGN.md §6, CONVENTIONS "ONNX models").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from covr.models.errors import ModelResourceError

OPSET = 17
BATCH = "batch"
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class MlpWeights:
    """A trained head: ``sigmoid(... relu(((x - mean) / scale) @ W1 + b1) ... @ Wk + bk)``."""

    mean: FloatArray
    scale: FloatArray
    layers: tuple[tuple[FloatArray, FloatArray], ...]

    def forward(self, x: FloatArray) -> FloatArray:
        """The same computation in numpy (what tests compare the ONNX graph with)."""
        h = (x.astype(np.float32) - self.mean) / self.scale
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        out: FloatArray = (1.0 / (1.0 + np.exp(-h))).reshape(-1).astype(np.float32)
        return out


def export_mlp(
    path: Path,
    weights: MlpWeights,
    *,
    inputs: Sequence[tuple[str, int]],
    output: str,
    graph_name: str,
    metadata: Mapping[str, str],
) -> None:
    """Write the head to ``path`` (inputs concatenated on axis 1 in the given order)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    width = sum(w for _, w in inputs)
    if weights.mean.shape != (width,):
        raise ValueError(f"mean has shape {weights.mean.shape}, inputs total {width}")
    nodes = []
    inits = [
        numpy_helper.from_array(weights.mean.astype(np.float32), "mean"),
        numpy_helper.from_array(weights.scale.astype(np.float32), "scale"),
    ]
    if len(inputs) == 1:
        current = inputs[0][0]
    else:
        nodes.append(helper.make_node("Concat", [n for n, _ in inputs], ["joined"], axis=1))
        current = "joined"
    nodes.append(helper.make_node("Sub", [current, "mean"], ["centered"]))
    nodes.append(helper.make_node("Div", ["centered", "scale"], ["h0"]))
    current = "h0"
    for i, (w, b) in enumerate(weights.layers):
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"W{i}"))
        inits.append(numpy_helper.from_array(b.astype(np.float32), f"b{i}"))
        nodes.append(helper.make_node("MatMul", [current, f"W{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]))
        current = f"a{i}"
        if i < len(weights.layers) - 1:
            nodes.append(helper.make_node("Relu", [current], [f"r{i}"]))
            current = f"r{i}"
    nodes.append(helper.make_node("Sigmoid", [current], ["prob2d"]))
    inits.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat"))
    nodes.append(helper.make_node("Reshape", ["prob2d", "flat"], [output]))
    graph = helper.make_graph(
        nodes,
        graph_name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [BATCH, w]) for n, w in inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, [BATCH])],
        inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="covr-graph-service",
    )
    model.ir_version = 8  # readable by onnxruntime >= 1.10
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model, full_check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(model.SerializeToString(deterministic=True))
    tmp.replace(path)


class OnnxHead:
    """One onnxruntime session per file (CPU, few threads), thread-safe ``run``."""

    def __init__(self, path: Path, *, threads: int = 1) -> None:
        import onnxruntime as ort

        if not path.is_file():
            raise ModelResourceError(f"model file {path} does not exist")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelResourceError(f"cannot load model {path}: {exc}") from exc
        self.path = path
        self.metadata: dict[str, str] = dict(self.session.get_modelmeta().custom_metadata_map)
        self.inputs = [(i.name, int(i.shape[1])) for i in self.session.get_inputs()]
        self.output = self.session.get_outputs()[0].name
        self._lock = threading.Lock()

    def run(self, feeds: Mapping[str, FloatArray]) -> FloatArray:
        with self._lock:
            result = self.session.run([self.output], dict(feeds))
        out: FloatArray = np.asarray(result[0], dtype=np.float32)
        return out

    def json_meta(self, key: str) -> Any:
        """A metadata value holding JSON; a clear error when it is missing or broken."""
        raw = self.metadata.get(key)
        if raw is None:
            raise ModelResourceError(f"model {self.path} has no metadata entry {key!r}")
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ModelResourceError(f"model {self.path}: metadata {key!r} is not JSON") from exc


def training_environment() -> dict[str, str]:
    """Library versions and BLAS kernel a model was fitted with (recorded in its metadata).

    Why: fitting is deterministic for one environment (same data, seed and one BLAS thread give
    the same bytes), but another numpy/scikit-learn release or another CPU's BLAS kernels round
    differently, and the MLP's iterations amplify that into other weights and thresholds.
    """
    import sklearn
    from threadpoolctl import threadpool_info

    blas = sorted(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    return {"numpy": np.__version__, "scikit-learn": sklearn.__version__, "blas": "; ".join(blas)}


def single_threaded() -> Any:
    """A context that fits with one BLAS/OpenMP thread: results then do not depend on the
    machine's core count or load (multi-threaded BLAS sums in another order)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def weights_from_sklearn(scaler: Any, mlp: Any) -> MlpWeights:
    """Extract the arrays of a fitted ``StandardScaler`` + ``MLPClassifier``/LogisticRegression."""
    scale = np.asarray(scaler.scale_, dtype=np.float32).copy()
    scale[scale == 0] = 1.0
    mean = np.asarray(scaler.mean_, dtype=np.float32)
    if hasattr(mlp, "coefs_"):
        layers = tuple(
            (np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32))
            for w, b in zip(mlp.coefs_, mlp.intercepts_, strict=True)
        )
    else:
        layers = (
            (
                np.asarray(mlp.coef_, dtype=np.float32).T,
                np.asarray(mlp.intercept_, dtype=np.float32),
            ),
        )
    return MlpWeights(mean=mean, scale=scale, layers=layers)
