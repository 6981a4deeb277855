"""AWS event-stream frames and their SigV4 signing, for Bedrock's bidirectional streams.

The frame format (``application/vnd.amazon.eventstream``): a 12-byte prelude (total length,
headers length, CRC32 of the two), typed headers, the payload and a CRC32 of everything
before it. botocore decodes frames (``botocore.eventstream.EventStreamBuffer``) but has no
encoder, so ``encode_message`` writes them; the tests decode what it writes with botocore.

Signing (the "signed event stream" of SigV4): the HTTP request is signed with the payload
hash ``STREAMING-AWS4-HMAC-SHA256-EVENTS``; each event sent after it travels inside an
envelope frame whose headers are ``:date`` (a timestamp) and ``:chunk-signature`` (32 raw
bytes), whose payload is the encoded event. The envelope's signature is an HMAC with the
request's signing key over ``AWS4-HMAC-SHA256-PAYLOAD``, the timestamp, the credential
scope, the previous signature (the request's, for the first event), the SHA-256 of the
encoded ``:date`` header and the SHA-256 of the payload. An envelope with an empty payload
ends the input. Signatures never reach a log or an artifact.
"""

from __future__ import annotations

import binascii
import datetime as dt
import hashlib
import hmac
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.errors import PrerequisiteError, ProtocolError

STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-EVENTS"
"""The ``x-amz-content-sha256`` of a request whose body is a signed event stream."""
EVENT_ALGORITHM = "AWS4-HMAC-SHA256-PAYLOAD"
CONTENT_TYPE = "application/vnd.amazon.eventstream"
INSTALL_HINT = 'Amazon Nova Sonic needs h2 and botocore: pip install "voxbench[nova-sonic]"'

HeaderValue = str | bytes | dt.datetime | bool | int


def _encode_header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    out = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return out + bytes([0 if value else 1])  # type 0 is true, 1 false
    if isinstance(value, dt.datetime):
        millis = int(value.timestamp() * 1000)
        return out + bytes([8]) + struct.pack(">q", millis)
    if isinstance(value, int):
        return out + bytes([4]) + struct.pack(">i", value)
    if isinstance(value, bytes):
        return out + bytes([6]) + struct.pack(">H", len(value)) + value
    text = value.encode("utf-8")
    return out + bytes([7]) + struct.pack(">H", len(text)) + text


def encode_headers(headers: Mapping[str, HeaderValue]) -> bytes:
    """Headers in event-stream wire form, in the order given."""
    return b"".join(_encode_header(k, v) for k, v in headers.items())


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One event-stream frame."""
    raw_headers = encode_headers(headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", binascii.crc32(body))


def event_frame(event_type: str, payload: bytes) -> bytes:
    """An ``event`` message of ``event_type`` carrying JSON ``payload`` (unsigned)."""
    return encode_message(
        {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        },
        payload,
    )


class FrameDecoder:
    """Bytes in, decoded frames out (botocore's parser: CRCs and lengths are checked)."""

    def __init__(self) -> None:
        try:
            from botocore.eventstream import EventStreamBuffer
        except ImportError:
            raise PrerequisiteError(INSTALL_HINT) from None
        self._buffer = EventStreamBuffer()

    def feed(self, data: bytes) -> Iterator[tuple[dict[str, Any], bytes]]:
        """Every whole frame ``data`` completes, as ``(headers, payload)``."""
        from botocore.eventstream import ParserError

        self._buffer.add_data(data)
        try:
            for message in self._buffer:
                yield dict(message.headers), bytes(message.payload)
        except ParserError as exc:
            raise ProtocolError(f"corrupt AWS event-stream frame: {exc}") from exc


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """The SigV4 signing key of ``date`` (``YYYYMMDD``)."""
    key = _hmac(("AWS4" + secret_key).encode("utf-8"), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


@dataclass
class EventSigner:
    """Signs the events of one stream, each chained to the signature before it."""

    secret_key: str = field(repr=False)
    region: str
    service: str
    prior_signature: str = field(repr=False)
    """Hex signature of the last signed frame (at first, the HTTP request's)."""

    def envelope(self, payload: bytes, when: dt.datetime | None = None) -> bytes:
        """``payload`` (an encoded event, or b"" to end the stream) in a signed envelope."""
        moment = (when or dt.datetime.now(dt.UTC)).replace(microsecond=0)
        signature = self.signature(payload, moment)
        self.prior_signature = signature
        return encode_message(
            {":date": moment, ":chunk-signature": bytes.fromhex(signature)}, payload
        )

    def signature(self, payload: bytes, moment: dt.datetime) -> str:
        """The hex signature of an envelope of ``payload`` sent at ``moment`` (no state change)."""
        stamp = moment.strftime("%Y%m%dT%H%M%SZ")
        scope = f"{stamp[:8]}/{self.region}/{self.service}/aws4_request"
        to_sign = "\n".join(
            (
                EVENT_ALGORITHM,
                stamp,
                scope,
                self.prior_signature,
                hashlib.sha256(encode_headers({":date": moment})).hexdigest(),
                hashlib.sha256(payload).hexdigest(),
            )
        )
        key = signing_key(self.secret_key, stamp[:8], self.region, self.service)
        return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class AwsCredentials:
    """Resolved AWS credentials (never printed)."""

    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    token: str | None = field(default=None, repr=False)


def sign_request(
    url: str,
    headers: dict[str, str],
    credentials: AwsCredentials,
    *,
    region: str,
    service: str,
) -> tuple[dict[str, str], str]:
    """SigV4-sign a streaming ``POST url`` with botocore; the headers to send and the
    request signature (hex) that seeds the event chain."""
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError:
        raise PrerequisiteError(INSTALL_HINT) from None
    request = AWSRequest(
        method="POST",
        url=url,
        headers={**headers, "x-amz-content-sha256": STREAMING_PAYLOAD},
        data=b"",
    )
    creds = Credentials(credentials.access_key, credentials.secret_key, credentials.token)
    SigV4Auth(creds, service, region).add_auth(request)
    signed = {k: str(v) for k, v in request.headers.items()}
    authorization = signed.get("Authorization", "")
    _, _, signature = authorization.rpartition("Signature=")
    if not signature:
        raise ProtocolError("SigV4 signing produced no signature")
    return signed, signature
