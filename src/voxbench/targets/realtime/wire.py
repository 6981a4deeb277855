"""Pieces every provider's ``events.py`` builds on: a JSON wire model and strict parsing.

Client events are strict (``extra="forbid"``): the fake servers parse what the adapters send
with the same models, so a field an adapter invents is caught by a test. Server events
tolerate extra fields, because providers add fields without notice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from voxbench.core.errors import ProtocolError

M = TypeVar("M", bound=BaseModel)


class WireModel(BaseModel):
    """A JSON message (or part of one) of a provider protocol.

    ``dump`` drops unset optional fields, except those named in ``KEEP_NULL``: there an
    explicit ``None`` is meaningful on the wire (OpenAI's ``turn_detection: null`` turns
    server VAD off, which is not the same as leaving the field out).
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    KEEP_NULL: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _keep_explicit_nulls(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.KEEP_NULL:
                if name in self.model_fields_set and getattr(self, name) is None:
                    data[name] = None
        return data

    def dump(self) -> dict[str, Any]:
        """The JSON object to send."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)

    def to_json(self) -> str:
        """The JSON text to send."""
        return json.dumps(self.dump(), separators=(",", ":"))


class ClientModel(WireModel):
    """A client → server message: unknown fields are a bug in our adapter."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def decode_json_object(raw: str | bytes | dict[str, Any], protocol: str) -> dict[str, Any]:
    """Decode one websocket text message into a JSON object, or raise ``ProtocolError``."""
    if isinstance(raw, dict):
        return raw
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{protocol}: message is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"{protocol}: message is a JSON {type(data).__name__}, not an object")
    return data


def describe_validation_error(exc: Exception) -> str:
    """The first problem of a pydantic validation error, as ``field: message``."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", exc))
    return str(exc)


def parse_tagged(
    raw: str | bytes | dict[str, Any],
    table: Mapping[str, type[M]],
    *,
    what: str,
    name: str,
    tag: str = "type",
    unknown: Callable[[str, dict[str, Any]], M] | None = None,
    unknown_label: str = "message type",
) -> M:
    """One message whose ``tag`` field names its model in ``table``.

    With ``unknown``, a message of a type not in the table becomes ``unknown(kind, data)``
    (what we read from a provider, which adds types without notice); without it, it is a
    ``ProtocolError`` naming the type (what a fake reads from our adapters). ``what`` names
    the message in errors about its shape, ``name`` the protocol in validation errors.
    """
    data = decode_json_object(raw, what)
    kind = data.get(tag)
    if unknown is not None and not isinstance(kind, str):
        raise ProtocolError(f"{what} has no {tag!r}: {str(data)[:200]}")
    cls = table.get(str(kind))
    if cls is None:
        if unknown is not None:
            return unknown(str(kind), data)
        raise ProtocolError(f"unknown {unknown_label} {kind!r}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(f"{name} {kind!r}: {describe_validation_error(exc)}") from exc
