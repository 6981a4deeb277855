"""How a report's audio players reach their audio: a relative link, a viewer's URL, or the
audio itself embedded as a ``data:`` URI (a mailed report then plays with nothing beside it).

A time range is cut out of the file: linked, into ``clips/`` beside it as lossless FLAC at
the file's own rate and channels (``clips/conversation_12.30-15.80.flac``), so a turn's player
scrubs that turn, not a 4-minute recording; a folder that cannot be written falls back to a
media fragment (``conversation.wav#t=12.3,15.8``: Chromium starts there and pauses at the end,
but its scrubber spans the whole file). Embedded, the range is kept as mono 16 kHz FLAC, so a
long run stays mailable.
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import soundfile as sf
from markupsafe import Markup, escape

from voxbench.audio.wav import Audio, read_wav, read_wav_span

EMBED_RATE = 16_000
"""Sample rate of embedded clips: speech stays clear at a third of a 48 kHz file's size."""


@dataclass
class AudioLinks:
    """Where the players of one report get their audio.

    ``base_dir``: the folder the HTML file is written to (links are relative to it);
    ``embed``: put the audio itself into the page; ``url_for``: a web viewer's own URL for a
    file (wins over ``base_dir``)."""

    base_dir: Path | None = None
    embed: bool = False
    url_for: Callable[[Path], str | None] | None = None

    @classmethod
    def served(cls, prefixes: dict[Path, str]) -> AudioLinks:
        """Links for a web viewer that serves each folder of ``prefixes`` under its URL prefix
        (``{run_a: "/run/A/", run_b: "/run/B/"}``); a file outside them gets no player."""
        roots = [(folder.resolve(), prefix) for folder, prefix in prefixes.items()]

        def url_for(file: Path) -> str | None:
            resolved = file.resolve()
            for folder, prefix in roots:
                if resolved.is_relative_to(folder):
                    return prefix + quote(resolved.relative_to(folder).as_posix())
            return None

        return cls(url_for=url_for)

    def src(
        self, file: Path, start: float | None = None, end: float | None = None
    ) -> Markup | None:
        """The ``src`` of a player for ``file`` (between ``start`` and ``end`` seconds), or
        None when the file is not there to play."""
        if not file.is_file():
            return None
        if self.embed:
            return Markup(self._data_uri(file, start, end))
        if start is not None or end is not None:
            clip = cut_clip(file, start or 0.0, end)
            if clip is not None:
                file, start, end = clip, None, None
        if self.url_for is not None:
            url = self.url_for(file)
            if url is None:
                return None
        else:
            base = self.base_dir if self.base_dir is not None else file.parent
            url = quote(Path(os.path.relpath(file.resolve(), base.resolve())).as_posix())
        return Markup(escape(url + _fragment(start, end)))

    def _data_uri(self, file: Path, start: float | None, end: float | None) -> str:
        audio = (
            read_wav(file)
            if start is None and end is None
            else read_wav_span(file, start or 0.0, end)
        )
        samples = audio.samples
        if samples.ndim == 2:  # both channels heard (an overlap too)
            # Column by column: numpy's mean over a 2-wide axis is many times slower.
            mixed = samples[:, 0].copy()
            for c in range(1, samples.shape[1]):
                mixed += samples[:, c]
            samples = mixed / np.float32(samples.shape[1])
        clip = Audio(samples, audio.sample_rate)
        clip = clip.resampled(EMBED_RATE) if clip.frames else clip
        buffer = io.BytesIO()
        sf.write(buffer, clip.samples, clip.sample_rate, subtype="PCM_16", format="FLAC")
        return "data:audio/flac;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


CLIPS_DIR = "clips"
"""Where a linked report keeps the ranges it cut, beside the file they were cut from."""


def cut_clip(file: Path, start: float, end: float | None) -> Path | None:
    """``file`` between ``start`` and ``end`` seconds as ``clips/<stem>_<start>-<end>.flac``
    beside it (made once; remade when the file is newer), or None when it cannot be written."""
    start = max(start, 0.0)
    span = f"{start:.2f}-{end:.2f}" if end is not None else f"{start:.2f}-end"
    clip = file.parent / CLIPS_DIR / f"{file.stem}_{span}.flac"
    try:
        if clip.is_file() and clip.stat().st_mtime >= file.stat().st_mtime:
            return clip
        audio = read_wav_span(file, start, end)
        if not audio.frames:
            return None
        clip.parent.mkdir(exist_ok=True)
        partial = clip.with_name(f".{clip.name}.{os.getpid()}.part")
        sf.write(partial, audio.samples, audio.sample_rate, subtype="PCM_16", format="FLAC")
        os.replace(partial, clip)  # a reader never sees half a clip
    except (OSError, sf.LibsndfileError, RuntimeError):
        return None
    return clip


def _fragment(start: float | None, end: float | None) -> str:
    if start is None and end is None:
        return ""
    a = f"{max(start or 0.0, 0.0):.2f}"
    return f"#t={a},{end:.2f}" if end is not None else f"#t={a}"
