"""Wire messages checked against the official SDKs' own type models.

The providers generate these models from their API specs, so they are a reading of the
protocol independent of ours. Each ``check_*`` function takes one JSON message as it went
over the wire and returns the problems found: a validation error (wrong type, wrong enum
value, missing required field, wrong nesting) or a field the SDK model does not know.

The SDKs disagree on strictness: ``google-genai`` models forbid extra fields; ``openai`` and
``anthropic`` models allow them and their request types are TypedDicts (which drop unknown
keys). ``unknown_fields`` therefore compares what was sent with what the model kept.
"""

from __future__ import annotations

import contextlib
import functools
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pydantic
from pydantic import TypeAdapter, ValidationError

Check = Callable[[Mapping[str, Any]], list[str]]


# -- the generic part ----------------------------------------------------------------------


def unknown_fields(sent: Any, parsed: Any, path: str = "") -> list[str]:
    """Paths of fields in ``sent`` that the validated ``parsed`` does not model."""
    if isinstance(parsed, Iterator):
        parsed = list(parsed)  # a validated Iterable: iterating it validates its items
    if isinstance(sent, Mapping) and isinstance(parsed, pydantic.BaseModel):
        return _unknown_in_model(sent, parsed, path)
    if isinstance(sent, Mapping) and isinstance(parsed, Mapping):
        out: list[str] = []
        for key, value in sent.items():
            if key not in parsed:
                out.append(f"{path}{key}")
            else:
                out += unknown_fields(value, parsed[key], f"{path}{key}.")
        return out
    if isinstance(sent, list) and isinstance(parsed, list | tuple):
        out = []
        for i, (value, item) in enumerate(zip(sent, parsed, strict=False)):
            out += unknown_fields(value, item, f"{path}{i}.")
        return out
    return []


def _unknown_in_model(sent: Mapping[str, Any], model: pydantic.BaseModel, path: str) -> list[str]:
    names = {(info.alias or name): name for name, info in type(model).model_fields.items()}
    names |= {name: name for name in type(model).model_fields}
    extra = model.__pydantic_extra__ or {}
    out: list[str] = []
    for key, value in sent.items():
        if key in extra or key not in names:
            out.append(f"{path}{key}")
        else:
            out += unknown_fields(value, getattr(model, names[key]), f"{path}{key}.")
    return out


def validate(adapter: TypeAdapter[Any], message: Any, *, json: bool = False) -> list[str]:
    """Validate ``message`` with ``adapter``; problems as ``path: message`` lines."""
    import json as json_module

    try:
        with warnings.catch_warnings(record=True) as caught:
            # google-genai enums accept an unknown value with a warning (forward
            # compatibility); on our wire that is a wrong enum value.
            warnings.simplefilter("always")
            if json:
                parsed = adapter.validate_json(json_module.dumps(message))
            else:
                parsed = adapter.validate_python(message)
        problems = [str(w.message) for w in caught if "is not a valid" in str(w.message)]
        return problems + [f"unknown field {p}" for p in unknown_fields(message, parsed)]
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def _by_type(union: Any) -> dict[str, Any]:
    """A union of event models keyed by the value of their ``type`` literal."""
    table: dict[str, Any] = {}
    for member in typing.get_args(union):
        if typing.get_origin(member) is typing.Annotated:
            member = typing.get_args(member)[0]
        if typing.get_origin(member) is typing.Union:
            table |= _by_type(member)
            continue
        hints = member.model_fields if hasattr(member, "model_fields") else {}
        literal = hints.get("type")
        if literal is not None:
            for value in typing.get_args(literal.annotation):
                table[value] = member
    return table


def _check_event(table: Mapping[str, Any], message: Mapping[str, Any], what: str) -> list[str]:
    model = table.get(str(message.get("type")))
    if model is None:
        return [f"{what} type {message.get('type')!r} is not in the SDK"]
    return validate(_adapter(model), message)


# -- OpenAI --------------------------------------------------------------------------------


@functools.cache
def _realtime_tables() -> tuple[dict[str, Any], dict[str, Any]]:
    from openai.types.realtime import RealtimeClientEvent, RealtimeServerEvent

    return _by_type(RealtimeClientEvent), _by_type(RealtimeServerEvent)


def check_openai_realtime_client(message: Mapping[str, Any]) -> list[str]:
    """A client event against ``openai.types.realtime.RealtimeClientEvent``."""
    return _check_event(_realtime_tables()[0], message, "client event")


SESSION_FIELDS_NOT_IN_SDK: dict[str, Callable[[Any], bool]] = {
    "id": lambda v: isinstance(v, str) and v.startswith("sess_"),
    "object": lambda v: v == "realtime.session",
    "expires_at": lambda v: isinstance(v, int) and not isinstance(v, bool),
}
"""A documented SDK gap, not stripped: fields of ``session.created`` / ``session.updated``'s
session that the GA reference's own examples show (``"object": "realtime.session"``,
``"id": "sess_..."``, ``"expires_at"``, as replayed in
``fixtures/openai_realtime_audio_and_call.json``) but the SDK's
``RealtimeSessionCreateRequest`` does not model. The whole message is validated; only the
SDK's "unknown field" for these paths is excused, and only when the value has the
reference's shape (anything else is reported)."""


def check_openai_realtime_server(message: Mapping[str, Any]) -> list[str]:
    """A server event against ``openai.types.realtime.RealtimeServerEvent`` (whole)."""
    problems = _check_event(_realtime_tables()[1], message, "server event")
    session = message.get("session")
    if message.get("type") not in ("session.created", "session.updated") or not isinstance(
        session, Mapping
    ):
        return problems
    excused = {
        f"unknown field session.{name}"
        for name, valid in SESSION_FIELDS_NOT_IN_SDK.items()
        if name in session and valid(session[name])
    }
    return [p for p in problems if p not in excused]


def check_xai_realtime_client(message: Mapping[str, Any]) -> list[str]:
    """xAI's dialect (no official SDK types: a documented gap). ``session.update`` is checked
    against the session parameters xAI's voice agent guide documents
    (``variants.XAI_SESSION_PARAMETERS``), ``response.create`` against its documented
    ``response.modalities``; every other event is OpenAI's and checked with OpenAI's SDK."""
    from voxbench.targets.realtime.openai.variants import xai_undocumented

    kind = message.get("type")
    if kind == "session.update":
        session = message.get("session")
        if not isinstance(session, Mapping):
            return ["session: expected an object"]
        problems = [f"undocumented field {p}" for p in xai_undocumented(session)]
        detection = session.get("turn_detection")
        if isinstance(detection, Mapping) and detection.get("type") not in ("server_vad", None):
            problems.append(f"session.turn_detection.type {detection.get('type')!r}")
        return problems + [f"unknown field {k}" for k in message if k not in XAI_EVENT_FIELDS]
    if kind == "response.create":
        response = message.get("response") or {}
        problems = [f"unknown field response.{k}" for k in response if k != "modalities"]
        return problems + [f"unknown field {k}" for k in message if k not in XAI_EVENT_FIELDS]
    return check_openai_realtime_client(message)


XAI_EVENT_FIELDS = ("type", "event_id", "session", "response")
"""The top-level fields of xAI's ``session.update`` / ``response.create``."""


def check_xai_realtime_server(message: Mapping[str, Any]) -> list[str]:
    """xAI's dialect: OpenAI's events, validated whole with OpenAI's SDK. Documented gaps
    (the xAI voice agent guide): ``status`` on user transcripts, whose partials
    (``in_progress``) carry no ``usage``; only those problems are excused."""
    problems = check_openai_realtime_server(message)
    kind = "conversation.item.input_audio_transcription.completed"
    status = message.get("status")
    if message.get("type") != kind or "status" not in message:
        return problems
    if status not in ("in_progress", "completed"):
        return [*problems, f"status value {status!r}"]
    excused = {"unknown field status"} | (
        {"usage: Field required"} if status == "in_progress" else set()
    )
    return [p for p in problems if p not in excused]


def check_openai_chat_request(message: Mapping[str, Any], *, deployment: bool = False) -> list[str]:
    """A ``/chat/completions`` body against the SDK's create params.

    ``deployment``: an Azure deployment URL names the model, so the body need not.
    """
    from openai.types.chat import completion_create_params as params

    if deployment and "model" not in message:
        message = {**message, "model": "deployment"}

    kind = (
        params.CompletionCreateParamsStreaming
        if message.get("stream")
        else params.CompletionCreateParamsNonStreaming
    )
    return validate(_adapter(kind), message)


def check_openai_chat_response(message: Mapping[str, Any]) -> list[str]:
    """A whole ``chat.completion`` or one ``chat.completion.chunk``."""
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    model = (
        ChatCompletionChunk if message.get("object") == "chat.completion.chunk" else ChatCompletion
    )
    return validate(_adapter(model), message)


def check_openai_speech_request(message: Mapping[str, Any]) -> list[str]:
    """An ``/audio/speech`` body against ``SpeechCreateParams``."""
    from openai.types.audio.speech_create_params import SpeechCreateParams

    return validate(_adapter(SpeechCreateParams), message)


def check_openai_transcription(message: Mapping[str, Any]) -> list[str]:
    """A JSON ``/audio/transcriptions`` answer against ``Transcription``."""
    from openai.types.audio import Transcription

    return validate(_adapter(Transcription), message)


# -- Anthropic -----------------------------------------------------------------------------


SAMPLING_FIELDS_OF_2023_06_01 = ("temperature", "top_p", "top_k")
"""A known SDK gap, documented rather than stripped: request fields of API version
``2023-06-01`` (the ``anthropic-version`` voxbench sends) that the SDK 2.x models lack, as
the SDK targets ``2026-10-21``, which refuses them on every model. Under ``2023-06-01`` each
model takes them or not (the migration guide: none from Claude Opus 4.7 on): the check
reports one the SDK does not model only where it is not a number, and the model's own rules
(the strict fake's reading of the docs, ``check_model_fields``) judge every request."""


def check_anthropic_request(message: Mapping[str, Any]) -> list[str]:
    """A whole ``/v1/messages`` body against the SDK's create params and the model's rules."""
    from anthropic.types import message_create_params as params

    from voxbench.testing.anthropic_http import check_model_fields

    kind = (
        params.MessageCreateParamsStreaming
        if message.get("stream")
        else params.MessageCreateParamsNonStreaming
    )
    problems: list[str] = []
    for problem in validate(_adapter(kind), message):
        name = problem.removeprefix("unknown field ")
        if name in SAMPLING_FIELDS_OF_2023_06_01:  # the documented gap, and only it
            if not isinstance(message[name], int | float) or isinstance(message[name], bool):
                problems.append(f"{name}: expected a number")
            continue
        problems.append(problem)
    try:
        check_model_fields(str(message.get("model", "")), dict(message))
    except ValueError as exc:
        problems.append(f"model {message.get('model')!r} refuses it: {exc}")
    return problems


def check_anthropic_response(message: Mapping[str, Any]) -> list[str]:
    """A whole ``Message`` or one raw stream event."""
    from anthropic.types import Message, RawMessageStreamEvent

    if message.get("type") == "message":
        return validate(_adapter(Message), message)
    if message.get("type") == "ping":
        return [] if set(message) == {"type"} else [f"ping with fields {sorted(message)}"]
    return _check_event(_by_type(RawMessageStreamEvent), message, "stream event")


# -- Google --------------------------------------------------------------------------------


def check_gemini_live_client(message: Mapping[str, Any]) -> list[str]:
    """A client message against ``google.genai.types.LiveClientMessage``."""
    from google.genai import types

    setup = message.get("setup")
    if isinstance(setup, Mapping) and "realtimeInputConfig" in setup:
        # The SDK's LiveClientSetup lacks this field; its converter
        # (_live_converters._LiveConnectConfig_to_mldev) writes a RealtimeInputConfig there.
        rest = {k: v for k, v in setup.items() if k != "realtimeInputConfig"}
        input_config = validate(
            _adapter(types.RealtimeInputConfig), setup["realtimeInputConfig"], json=True
        )
        problems = [f"setup.realtimeInputConfig.{p}" for p in input_config]
        return problems + validate(
            _adapter(types.LiveClientMessage), {**message, "setup": rest}, json=True
        )
    return validate(_adapter(types.LiveClientMessage), message, json=True)


def check_gemini_live_server(message: Mapping[str, Any]) -> list[str]:
    """A server message against ``google.genai.types.LiveServerMessage``."""
    from google.genai import types

    return validate(_adapter(types.LiveServerMessage), message, json=True)


@functools.cache
def _generate_request_fields() -> dict[str, Any]:
    from google.genai import types

    return {
        "contents": list[types.Content],
        "systemInstruction": types.Content,
        "tools": list[types.Tool],
        "toolConfig": types.ToolConfig,
        "generationConfig": types.GenerationConfig,
        "safetySettings": list[types.SafetySetting],
        "cachedContent": str,
    }


def check_gemini_generate_request(message: Mapping[str, Any]) -> list[str]:
    """A ``generateContent`` body: each documented field against its SDK type."""
    fields = _generate_request_fields()
    problems: list[str] = []
    for key, value in message.items():
        if key not in fields:
            problems.append(f"unknown field {key}")
            continue
        problems += [f"{key}.{p}" for p in validate(_adapter(fields[key]), value, json=True)]
    return problems


def check_gemini_generate_response(message: Mapping[str, Any]) -> list[str]:
    """A whole response or one streamed chunk against ``GenerateContentResponse``."""
    from google.genai import types

    return validate(_adapter(types.GenerateContentResponse), message, json=True)


def warm_up() -> None:
    """Import the SDKs' type modules and build their validators once, before any test runs.

    Done lazily, the first check of a session imports ``anthropic`` (about a second) or
    ``google.genai`` inside a fake server's handler, on the event loop: a test with a
    sub-second turn timeout would then time out on its first request.
    """
    for name, check in sorted(globals().items()):
        if name.startswith("check_") and callable(check):
            with contextlib.suppress(Exception):  # an empty message is refused: that's fine
                check({})
