"""Twilio Media Streams messages (bidirectional ``<Connect><Stream>``), as pydantic models.

Source: Twilio's "Media Streams - WebSocket Messages" page (2026). Twilio connects to the
bot's websocket and sends ``connected`` ({protocol: "Call", version: "1.0.0"}), then
``start`` (``sequenceNumber``, ``streamSid``, ``start {streamSid, accountSid, callSid,
tracks, customParameters, mediaFormat {encoding: "audio/x-mulaw", sampleRate: 8000,
channels: 1}}``), ``media`` (``media {track, chunk, timestamp, payload}``: base64 μ-law, 20 ms
each), ``mark`` (``mark {name}``: audio the bot queued before that mark has played),
``dtmf`` and ``stop`` (``stop {accountSid, callSid}``). Every message but ``connected``
carries ``sequenceNumber`` (a string counting from "1") and ``streamSid``. The bot sends
``media`` (``media {payload}``), ``mark`` (``mark {name}``) and ``clear`` (drop the audio
queued), each with the ``streamSid``.

voxbench plays Twilio here, so what it sends is strict (``ClientModel``) and what a bot
sends is tolerant.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from voxbench.targets.realtime.wire import (
    ClientModel,
    WireModel,
    parse_tagged,
)

SAMPLE_RATE = 8000
ENCODING: Final = "audio/x-mulaw"
CHUNK_MS = 20

# -- Twilio → bot (voxbench sends these) --------------------------------------------------


class MediaFormat(ClientModel):
    encoding: Literal["audio/x-mulaw"] = ENCODING
    sampleRate: int = SAMPLE_RATE
    channels: int = 1


class StartInfo(ClientModel):
    streamSid: str
    accountSid: str
    callSid: str
    tracks: list[str] = Field(default_factory=lambda: ["inbound"])
    customParameters: dict[str, str] = Field(default_factory=dict)
    mediaFormat: MediaFormat = Field(default_factory=MediaFormat)


class TwilioMessage(ClientModel):
    pass


class Connected(TwilioMessage):
    event: Literal["connected"] = "connected"
    protocol: str = "Call"
    version: str = "1.0.0"


class Start(TwilioMessage):
    event: Literal["start"] = "start"
    sequenceNumber: str
    start: StartInfo
    streamSid: str


class InboundMedia(ClientModel):
    track: Literal["inbound", "outbound"] = "inbound"
    chunk: str
    timestamp: str
    payload: str


class Media(TwilioMessage):
    event: Literal["media"] = "media"
    sequenceNumber: str
    media: InboundMedia
    streamSid: str


class MarkName(ClientModel):
    name: str


class Mark(TwilioMessage):
    event: Literal["mark"] = "mark"
    sequenceNumber: str
    streamSid: str
    mark: MarkName


class StopInfo(ClientModel):
    accountSid: str
    callSid: str


class Stop(TwilioMessage):
    event: Literal["stop"] = "stop"
    sequenceNumber: str
    streamSid: str
    stop: StopInfo


TWILIO_MESSAGES: dict[str, type[TwilioMessage]] = {
    cls.model_fields["event"].default: cls for cls in (Connected, Start, Media, Mark, Stop)
}

# -- bot → Twilio -------------------------------------------------------------------------


class BotMessage(WireModel):
    pass


class OutboundMedia(WireModel):
    payload: str


class BotMedia(BotMessage):
    event: Literal["media"] = "media"
    streamSid: str = ""
    media: OutboundMedia


class BotMark(BotMessage):
    event: Literal["mark"] = "mark"
    streamSid: str = ""
    mark: MarkName


class BotClear(BotMessage):
    event: Literal["clear"] = "clear"
    streamSid: str = ""


class UnknownBotMessage(BotMessage):
    event: str
    data: dict[str, Any] = Field(default_factory=dict)


BOT_MESSAGES: dict[str, type[BotMessage]] = {
    cls.model_fields["event"].default: cls for cls in (BotMedia, BotMark, BotClear)
}


def parse_bot_message(raw: str | bytes | dict[str, Any]) -> BotMessage:
    """One bot message → its model; an unknown ``event`` gives ``UnknownBotMessage``."""
    return parse_tagged(
        raw,
        BOT_MESSAGES,
        what="Twilio stream message",
        name="Twilio",
        tag="event",
        unknown=lambda kind, data: UnknownBotMessage(event=kind, data=data),
    )


def parse_twilio_message(raw: str | bytes | dict[str, Any]) -> TwilioMessage:
    """One message from Twilio → its model (what a bot, or the fake bot, reads)."""
    return parse_tagged(
        raw,
        TWILIO_MESSAGES,
        what="Twilio stream message",
        name="Twilio",
        tag="event",
        unknown_label="Twilio event",
    )
