"""Bedrock Converse JSON checked against botocore's service model for ``bedrock-runtime``.

botocore validates the parameters a client sends but ignores unknown fields in what it
receives, so the fake's responses and stream events are checked here, shape by shape:
structures (required members, no unknown member), unions (exactly one member), lists, maps,
enums and scalars. Request bodies are checked the same way (members bound to the URI or
headers are not in the body).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from botocore.model import ServiceModel, Shape


@functools.cache
def _service() -> ServiceModel:
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime")


def check_input(operation: str, body: Mapping[str, Any]) -> list[str]:
    """A request body of ``operation`` (``Converse`` / ``ConverseStream``)."""
    shape = _service().operation_model(operation).input_shape
    return _structure(shape, body, "", body_only=True)


def check_model_fields(model_id: str, body: Mapping[str, Any]) -> list[str]:
    """What a Claude model refuses in a Converse request (the strict fake's reading of the
    Claude docs): botocore's model takes ``inferenceConfig.temperature`` for every model."""
    from voxbench.testing.bedrock_http import check_claude_request

    try:
        check_claude_request(model_id, dict(body))
    except ValueError as exc:
        return [f"model {model_id!r}: {exc}"]
    return []


def check_output(operation: str, body: Mapping[str, Any]) -> list[str]:
    """A whole response of ``operation``."""
    shape = _service().operation_model(operation).output_shape
    return _structure(shape, body, "", body_only=True)


def check_stream_event(event_type: str, payload: Mapping[str, Any]) -> list[str]:
    """One ``ConverseStream`` event: ``event_type`` is the frame's ``:event-type`` header."""
    stream = _service().operation_model("ConverseStream").output_shape.members["stream"]
    member = stream.members.get(event_type)
    if member is None:
        return [f"event type {event_type!r} is not in ConverseStreamOutput"]
    return _value(member, payload, f"{event_type}.")


def _structure(shape: Shape, value: Any, path: str, body_only: bool = False) -> list[str]:
    if shape.metadata.get("document"):
        return []  # free-form JSON (tool input, JSON tool results)
    if not isinstance(value, Mapping):
        return [f"{path or '.'}: expected an object ({shape.name})"]
    members = {
        name: member
        for name, member in shape.members.items()
        if not (body_only and member.serialization.get("location"))
    }
    problems = [f"unknown field {path}{k}" for k in value if k not in members]
    required = [r for r in shape.required_members if r in members]
    problems += [f"{path}{r}: required" for r in required if r not in value]
    if shape.metadata.get("union") and len(value) != 1:
        problems.append(f"{path or '.'}: a union holds exactly one member, got {sorted(value)}")
    for key, item in value.items():
        if key in members:
            problems += _value(members[key], item, f"{path}{key}.")
    return problems


def _value(shape: Shape, value: Any, path: str) -> list[str]:
    where = path.rstrip(".")
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, value, path)
    if kind == "list":
        if not isinstance(value, list):
            return [f"{where}: expected a list"]
        return [
            p for i, item in enumerate(value) for p in _value(shape.member, item, f"{path}{i}.")
        ]
    if kind == "map":
        if not isinstance(value, Mapping):
            return [f"{where}: expected a map"]
        return [p for k, item in value.items() for p in _value(shape.value, item, f"{path}{k}.")]
    if kind == "string":
        if not isinstance(value, str):
            return [f"{where}: expected a string"]
        if shape.enum and value not in shape.enum:
            return [f"{where}: {value!r} is not one of {shape.enum}"]
        return []
    if kind in ("integer", "long"):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer"]
    if kind in ("float", "double"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected a number"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{where}: expected a boolean"]
    if kind == "blob":
        return [] if isinstance(value, str) else [f"{where}: expected base64 text"]
    return []  # document, timestamp: free-form here
