"""Download an upstream benchmark's public Hugging Face dataset, cache it, and import it.

``huggingface_hub.snapshot_download`` fetches the dataset (its audio included) into the
Hugging Face cache (``--cache DIR``, else ``HF_HOME``'s); a second download of the same
revision reads the cache. ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` are read when the download
starts (not when ``huggingface_hub`` was imported): offline, only the cache is used.

The snapshot is then imported like a checkout: when it holds the benchmark's Python files
they are read from it, otherwise from ``source`` (a local checkout), with the snapshot's
``audio/`` as the turns' audio. The package records the dataset's commit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.importers.aiewf import DEFAULT_VARIANT, import_aiewf
from voxbench.importers.conversation_bench import (
    BENCHMARK_FILES,
    DEFAULT_NAME,
    import_conversation_bench,
)
from voxbench.importers.package import ImportedBenchmark, git_commit

DATASETS: dict[str, str | None] = {
    "conversation-bench": "arcada-labs/conversation-bench",
    "aiewf": None,
}
"""Each benchmark's public Hugging Face dataset. AIEWF publishes none: its turns and audio
live in its git repository (import a checkout, or name a dataset with ``--repo``)."""

_TRUE = {"1", "true", "yes", "on"}


class DownloadError(PrerequisiteError):
    """The dataset could not be fetched (offline without a cache, unknown repo, no network)."""


@dataclass
class Downloaded:
    """What a download produced."""

    repo_id: str
    snapshot: Path
    dataset_commit: str | None
    from_cache: bool
    imported: ImportedBenchmark


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) asks for no network."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in _TRUE


def fetch_snapshot(
    repo_id: str, *, revision: str | None = None, cache_dir: Path | None = None
) -> tuple[Path, bool]:
    """The dataset's files on disk (downloaded or cached), and whether only the cache was used."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import (
            HfHubHTTPError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )
    except ImportError as exc:  # pragma: no cover - a dependency of voxbench
        raise PrerequisiteError(f"voxbench download needs huggingface_hub: {exc}") from exc
    offline = hub_offline()
    where = f"{repo_id}" + (f" at {revision}" if revision else "")
    cache = f"the cache {cache_dir}" if cache_dir else "the Hugging Face cache (HF_HOME)"
    try:
        path = snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            cache_dir=str(cache_dir) if cache_dir else None,
            local_files_only=offline,
            endpoint=os.environ.get("HF_ENDPOINT") or None,
        )
    except LocalEntryNotFoundError as exc:
        if offline:
            raise DownloadError(
                f"HF_HUB_OFFLINE is set and {where} is not in {cache}: download it once "
                "with the network on (or point --cache at a copy), or unset HF_HUB_OFFLINE"
            ) from exc
        raise DownloadError(
            f"cannot reach the Hugging Face Hub for {where} and it is not in {cache}: {exc}"
        ) from exc
    except RevisionNotFoundError as exc:
        raise ConfigError(
            f"the dataset {repo_id} has no revision {revision!r}",
            field="--revision",
            expected="a branch, tag or commit of the dataset",
        ) from exc
    except RepositoryNotFoundError as exc:
        raise ConfigError(
            f"no Hugging Face dataset {repo_id!r} (or it is private)",
            field="--repo",
            expected="a public dataset id owner/name",
        ) from exc
    except (HfHubHTTPError, OSError) as exc:
        raise DownloadError(f"downloading {where} failed: {exc}") from exc
    return Path(path), offline


def _snapshot_commit(snapshot: Path) -> str | None:
    # The Hub cache keeps each revision under snapshots/<commit>/.
    name = snapshot.name
    return name if len(name) == 40 and all(c in "0123456789abcdef" for c in name) else None


def _conversation_bench_sources(snapshot: Path) -> Path | None:
    for candidate in (snapshot, snapshot / "benchmarks" / DEFAULT_NAME):
        if all((candidate / f).is_file() for f in BENCHMARK_FILES):
            return candidate
    return None


def download_benchmark(
    which: str,
    out_dir: Path,
    *,
    cache_dir: Path | None = None,
    revision: str | None = None,
    repo_id: str | None = None,
    source: Path | None = None,
    variant: str = DEFAULT_VARIANT,
    current_date: date | None = None,
    force: bool = False,
) -> Downloaded:
    """Fetch ``which``'s dataset (``conversation-bench`` or ``aiewf``) and import it."""
    if which not in DATASETS:
        raise ConfigError(
            f"unknown benchmark {which!r}", field="BENCHMARK", expected=", ".join(DATASETS)
        )
    repo_id = repo_id or DATASETS[which]
    if repo_id is None:
        raise ConfigError(
            f"{which} publishes no Hugging Face dataset: its turns and audio are in its git "
            f"repository (voxbench import {which} CHECKOUT)",
            field="--repo",
            expected="--repo owner/name naming a dataset that holds its files",
        )
    snapshot, from_cache = fetch_snapshot(repo_id, revision=revision, cache_dir=cache_dir)
    dataset_commit = _snapshot_commit(snapshot)
    audio = snapshot / "audio"
    audio_dir = audio if audio.is_dir() else None
    if which == "conversation-bench":
        bench = _conversation_bench_sources(snapshot)
        src = bench if bench is not None else _need_source(source, which, repo_id)
        commit = dataset_commit if bench is not None else None
        imported = import_conversation_bench(
            src,
            out_dir,
            current_date=current_date,
            audio_dir=audio_dir,
            force=force,
            upstream_commit=commit if git_commit(src) is None else None,
        )
    else:
        has_sources = (snapshot / "benchmarks" / variant).is_dir()
        src = snapshot if has_sources else _need_source(source, which, repo_id)
        imported = import_aiewf(
            src,
            out_dir,
            variant=variant,
            current_date=current_date,
            audio_dir=audio_dir,
            force=force,
            upstream_commit=dataset_commit if has_sources and git_commit(src) is None else None,
        )
    if src != snapshot and not str(src).startswith(str(snapshot)):
        imported.notes.append(
            f"Python sources from {src}; audio from the dataset {repo_id}"
            + (f" at {dataset_commit}" if dataset_commit else "")
        )
    return Downloaded(repo_id, snapshot, dataset_commit, from_cache, imported)


def _need_source(source: Path | None, which: str, repo_id: str) -> Path:
    if source is None:
        raise ConfigError(
            f"the dataset {repo_id} holds no {which} Python sources (turns.py, tools.py, "
            "system.py)",
            field="--source",
            expected=f"--source CHECKOUT: a local {which} checkout to read them from",
        )
    return source


__all__ = ["DATASETS", "DownloadError", "Downloaded", "download_benchmark", "fetch_snapshot"]
