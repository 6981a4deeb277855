"""Silero's ONNX file taken apart without the ``onnx`` package: its float weights, and the
graph from the LSTM on as a model of its own.

``voxbench.audio.silero_encoder`` computes the convolutional front of faster-whisper's
Silero v6 in numpy (five matrix products over the whole batch, ~3x faster than onnxruntime's
convolutions on 4-frame inputs); onnxruntime still runs the recurrent tail (LSTM, decoder).
That needs the weights and a model that starts at the LSTM's input. The ``onnx`` package is
not a dependency, and an ONNX file is a protocol-buffer message, so this module reads and
writes the few fields involved in protobuf's wire format (varints and length-delimited
fields): nodes, initializers, graph inputs. Everything it keeps is copied byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Field numbers from onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto).
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_VALUE_INFO = 1, 5, 11, 13
_NODE_INPUT, _NODE_OP_TYPE = 1, 4
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME, _TENSOR_RAW_DATA = 1, 2, 8, 9
_VALUE_NAME = 1
_FLOAT = 1  # TensorProto.DataType.FLOAT

_VARINT, _LENGTH_DELIMITED = 0, 2
_FIXED_SIZES = {1: 8, 5: 4}


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of one message, in order."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, i = _varint(data, i)
        elif wire == _LENGTH_DELIMITED:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire in _FIXED_SIZES:
            value, i = data[i : i + _FIXED_SIZES[wire]], i + _FIXED_SIZES[wire]
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)
    return _encode_varint(number << 3 | _LENGTH_DELIMITED) + _encode_varint(len(value)) + value


def _blobs(message: bytes, number: int) -> list[bytes]:
    return [v for n, _, v in _fields(message) if n == number and isinstance(v, bytes)]


def _strings(message: bytes, number: int) -> list[str]:
    return [v.decode() for v in _blobs(message, number)]


def _graph(model: bytes) -> bytes:
    (graph,) = _blobs(model, _MODEL_GRAPH)
    return graph


def operators(model: bytes) -> list[str]:
    """The graph's node types, in order."""
    return [_strings(node, _NODE_OP_TYPE)[0] for node in _blobs(_graph(model), _GRAPH_NODE)]


def float_weights(model: bytes) -> dict[str, np.ndarray]:
    """Every float32 initializer stored as raw data, by name, in its stored shape."""
    out: dict[str, np.ndarray] = {}
    for tensor in _blobs(_graph(model), _GRAPH_INITIALIZER):
        fields = list(_fields(tensor))
        kinds = [v for n, _, v in fields if n == _TENSOR_DATA_TYPE]
        raw = [v for n, _, v in fields if n == _TENSOR_RAW_DATA]
        if kinds != [_FLOAT] or len(raw) != 1 or not isinstance(raw[0], bytes):
            continue
        dims = [int(v) for n, _, v in fields if n == _TENSOR_DIMS]  # not packed in these files
        name = _strings(tensor, _TENSOR_NAME)[0]
        out[name] = np.frombuffer(raw[0], "<f4").reshape(dims).copy()
    return out


def tail_from(model: bytes, operator: str, shape: tuple[int | str, ...]) -> tuple[bytes, str]:
    """The model from the first ``operator`` node on, and that node's first input, now a graph
    input of ``shape`` (float; a string is a symbolic dimension). Nodes before it, the
    initializers and inputs only they used, and the intermediate shape annotations are left
    out; every other field is copied unchanged."""
    graph = _graph(model)
    nodes = _blobs(graph, _GRAPH_NODE)
    ops = [_strings(node, _NODE_OP_TYPE)[0] for node in nodes]
    if operator not in ops:
        raise ValueError(f"no {operator} node in the model")
    kept = nodes[ops.index(operator) :]
    entry = _strings(kept[0], _NODE_INPUT)[0]
    used = {name for node in kept for name in _strings(node, _NODE_INPUT)}

    def dim(d: int | str) -> bytes:
        return _field(1, _field(2, d.encode()) if isinstance(d, str) else _field(1, d))

    tensor_type = _field(1, _FLOAT) + _field(2, b"".join(dim(d) for d in shape))
    new_input = _field(_VALUE_NAME, entry.encode()) + _field(2, _field(1, tensor_type))

    names = {_GRAPH_INITIALIZER: _TENSOR_NAME, _GRAPH_INPUT: _VALUE_NAME}
    body = bytearray()
    dropped = set(nodes[: len(nodes) - len(kept)])
    for number, _, value in _fields(graph):
        assert isinstance(value, bytes), "GraphProto has no scalar fields"
        if number == _GRAPH_NODE and value in dropped:
            continue
        if number in names and _strings(value, names[number])[0] not in used:
            continue
        if number == _GRAPH_VALUE_INFO:
            continue
        body += _field(number, value)
    body += _field(_GRAPH_INPUT, new_input)
    out = bytearray()
    for number, wire, value in _fields(model):
        if number == _MODEL_GRAPH:
            value = bytes(body)
        elif wire not in (_VARINT, _LENGTH_DELIMITED):
            raise ValueError(f"unsupported wire type {wire} in ModelProto")
        out += _field(number, value)
    return bytes(out), entry
