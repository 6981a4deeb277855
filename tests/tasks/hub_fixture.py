"""A tiny local copy of a Hub dataset, written by the test (never downloaded).

``write_hub_fixture`` saves ``rows`` with ``datasets``' ``save_to_disk`` exactly as a user's
copy of the public dataset would look (``load_dataset(...).save_to_disk(dir)``): the columns
given, the audio column an ``Audio`` feature. A registered Hub task is then run against it with
``dataset_dirs: {task: folder}`` or ``--dataset-dir task=folder``, so a task YAML naming a
column the public dataset does not have fails in CI.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

SAMPLE_RATE = 16_000


def tone_wav(seconds: float = 0.5, hz: float = 220.0, rate: int = SAMPLE_RATE) -> bytes:
    """A quiet sine tone encoded as a 16-bit WAV."""
    t = np.arange(int(rate * seconds)) / rate
    buffer = io.BytesIO()
    sf.write(buffer, (0.1 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def _audio_value(value: Any) -> dict[str, Any]:
    """An ``Audio`` cell as Arrow stores it: ``{bytes, path}``."""
    if isinstance(value, bytes):
        return {"bytes": value, "path": None}
    if isinstance(value, dict) and "array" in value:
        buffer = io.BytesIO()
        sf.write(buffer, np.asarray(value["array"], dtype=np.float32), value["sampling_rate"],
                 format="WAV")  # fmt: skip
        return {"bytes": buffer.getvalue(), "path": value.get("path")}
    if isinstance(value, dict):
        return {"bytes": value.get("bytes"), "path": value.get("path")}
    raise TypeError(f"an audio cell is WAV bytes or a dict, not {type(value).__name__}")


def write_hub_fixture(
    folder: Path,
    rows: dict[str, list],
    *,
    audio_column: str = "audio",
    split: str = "test",
    config: str | None = None,
) -> Path:
    """Save ``rows`` (column → values) as a ``save_to_disk`` ``DatasetDict`` holding ``split``.

    The audio column holds short synthetic tones (a different pitch per row) unless ``rows``
    gives it (WAV bytes, ``{bytes, path}`` or ``{array, sampling_rate}`` per row). With
    ``config`` the copy goes to ``folder/<config>`` (one folder per config, as several configs
    of one dataset are kept side by side); either way ``folder`` is returned: the folder to
    name in ``dataset_dirs``.
    """
    datasets = pytest.importorskip("datasets")
    counts = {len(values) for values in rows.values()}
    if len(counts) != 1:
        raise ValueError(f"columns of unequal length: {sorted(counts)}")
    (count,) = counts
    columns = dict(rows)
    if audio_column in columns:
        audio = [_audio_value(v) for v in columns.pop(audio_column)]
    else:
        audio = [{"bytes": tone_wav(0.5, 200.0 + 40 * i), "path": None} for i in range(count)]
    # Built as the Arrow struct ``Audio`` stores and then cast: ``datasets`` 4 wants torchcodec
    # to *encode* audio, which neither the reader nor the fixture needs.
    inferred = datasets.Dataset.from_dict(columns).features if columns else {}
    features = datasets.Features(
        {
            audio_column: {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
            **inferred,
        }
    )
    table = datasets.Dataset.from_dict({audio_column: audio, **columns}, features=features)
    table = table.cast_column(audio_column, datasets.Audio(sampling_rate=SAMPLE_RATE))
    target = folder / config if config is not None else folder
    datasets.DatasetDict({split: table}).save_to_disk(str(target))
    return folder
