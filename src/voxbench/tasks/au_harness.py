"""AU-Harness task YAMLs read as voxbench tasks: a folder of them is a task registry folder.

An AU-Harness task file (``tasks/**/<name>.yaml`` of ServiceNow/AU-Harness) names its task in
``task_name`` and inherits through ``extends: ["../base.yaml#"]`` (a list of ``path#pointer``
references, each a JSON pointer into that file, deep-merged under the file, the file winning).
``base.yaml`` files are bases only. ``convert`` maps one resolved file onto a ``TaskSpec``
mapping — dataset (``dataset_path``/``subset``/``split``), columns, prompt (``user_prompt`` +
the instruction column, Jinja ``{{x}}`` as voxbench's ``{x}``), generation, long-audio policy
and metrics (through ``METRIC_NAMES``) — or says why it cannot (a local dataset, a text-only
variant, no dataset). The metric table lives here because the run-config importer
(``importers.au_harness``) and this reader both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.core.names import name_problem
from voxbench.core.yamlfile import read_yaml

TASK_KEY = "task_name"
AU_ONLY_KEYS = frozenset(
    {"task_name", "dataset_path", "preprocessor", "postprocessor", "long_audio_processing_logic"}
)
"""Keys no voxbench task file has: a file holding one (or a list ``extends``) is AU-Harness's."""
AU_CHUNK_SECONDS = 30.0
"""AU-Harness's default ``chunk_size``: the clip length it cut or chunked at."""

TEXT_ONLY = (
    "a text-only variant (the question typed, no audio): voxbench tasks send audio, "
    "so there is no equivalent"
)


@dataclass(frozen=True)
class MetricMapping:
    """What an AU-Harness metric becomes: voxbench metrics, and how they differ."""

    names: tuple[str, ...]
    note: str = ""


METRIC_NAMES: dict[str, MetricMapping] = {
    "word_error_rate": MetricMapping(
        ("wer",),
        "AU-Harness scored every language with the English normaliser (its language bug); "
        "voxbench's wer uses each record's language",
    ),
    "bleu": MetricMapping(
        ("bleu",),
        "AU-Harness lower-cased and stripped punctuation before sacrebleu; voxbench scores the "
        "raw text with the target language's tokenizer",
    ),
    "meteor": MetricMapping(("meteor",)),
    "bertscore": MetricMapping(("bertscore",)),
    "comet": MetricMapping(
        ("comet",),
        "COMET scores the raw text (AU-Harness lower-cased it and stripped punctuation) with a "
        "model you bring: optional extra 'comet', weights in the local cache",
    ),
    "llm_judge_binary": MetricMapping(
        ("llm_judge",),
        "the judge now sees the question too, and a failed judgment is undecided, not 0",
    ),
    "llm_judge_detailed": MetricMapping(("llm_judge_detailed",)),
    "detailed_judge_prompt": MetricMapping(
        ("llm_judge_detailed",),
        "not a metric in AU-Harness (four of its tasks name it and fail there); read as the "
        "0–5 judge its name points at",
    ),
    "llm_judge_redteaming": MetricMapping(("llm_judge_refusal",)),
    "llm_judge_big_bench_audio": MetricMapping(
        ("llm_judge",), "a binary correct/incorrect judgment against the official answer"
    ),
    "llm_judge_callhome": MetricMapping(
        ("llm_judge_callhome",),
        "three 0–3 sub-scores (words, meaning, who said it) summed to 0–9; the judge sees the "
        "question too",
    ),
    "mt_bench_llm_judge": MetricMapping(
        ("mt_bench_llm_judge",),
        "the 1–10 rating of each scored reply; a reply the judge gives no [[rating]] is "
        "undecided (AU-Harness took the first number in the text, or 0)",
    ),
    "bfcl_match_score": MetricMapping(
        ("function_call_match",),
        "voxbench also checks scalar argument values, which AU-Harness never compared",
    ),
    "instruction_following": MetricMapping(("instruction_following",)),
    "sql_score": MetricMapping(
        ("sql_execution_match",), "execution match only (no exact-set-match component)"
    ),
    "gsm8k_exact_match": MetricMapping(
        ("numeric_match",), "numbers compared as numbers (AU-Harness compared strings: 18.0≠18)"
    ),
    "diarization_metrics": MetricMapping(
        ("wder", "cpwer"), "cpWER counts deletions (AU-Harness left them out)"
    ),
    "slot_f1": MetricMapping(("slot_f1",)),
    "joint_goal_accuracy": MetricMapping(
        ("joint_goal_accuracy",),
        "the reply's slots are read as slot_f1 reads them (JSON or SLURP brackets), not by "
        "AU-Harness's per-domain regexes over free text",
    ),
    "slot_accuracy": MetricMapping(
        ("slot_accuracy",),
        "the reply's slots are read as slot_f1 reads them (JSON or SLURP brackets), not by "
        "AU-Harness's per-domain regexes over free text",
    ),
}

LANGUAGE_NAMES = {
    "ar": "Arabic", "ca": "Catalan", "cy": "Welsh", "de": "German", "en": "English",
    "es": "Spanish", "et": "Estonian", "fa": "Persian", "fr": "French", "id": "Indonesian",
    "it": "Italian", "ja": "Japanese", "lv": "Latvian", "mn": "Mongolian", "nl": "Dutch",
    "pt": "Portuguese", "ru": "Russian", "sl": "Slovenian", "sv": "Swedish", "ta": "Tamil",
    "tr": "Turkish", "zh": "Chinese",
}  # fmt: skip
"""CoVoST 2's languages, for AU-Harness's ``{{source_language_name}}`` prompts."""

_JINJA = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass
class Converted:
    """One AU-Harness task: the ``TaskSpec`` mapping, or why there is none."""

    name: str
    file: Path
    family: str
    spec: dict[str, Any] | None
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def is_au_harness(data: Any) -> bool:
    """Whether a parsed YAML file is written in AU-Harness's task format (task or base)."""
    if not isinstance(data, dict):
        return False
    return bool(AU_ONLY_KEYS & set(data)) or isinstance(data.get("extends"), list)


def resolve(
    file: Path, chain: tuple[Path, ...] = (), read: set[Path] | None = None
) -> dict[str, Any]:
    """``file`` with its ``extends`` references merged under it (the file wins); every file
    read is added to ``read``."""
    file = file.resolve()
    if read is not None:
        read.add(file)
    if file in chain:
        loop = " → ".join(str(p) for p in [*chain, file])
        raise ConfigError(f"extends loops: {loop}", file=file, field="extends")
    data = read_yaml(file)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError("an AU-Harness task file must be a mapping of keys", file=file)
    data = dict(data)
    refs = data.pop("extends", None) or []
    if isinstance(refs, str):
        refs = [refs]
    merged: dict[str, Any] = {}
    for ref in refs:
        path, _, pointer = str(ref).partition("#")
        target = (file.parent / path).resolve() if path else file
        if not target.is_file():
            raise ConfigError(f"extends {ref!r}: no such file {target}", file=file, field="extends")
        base = resolve(target, (*chain, file), read)
        merged = _merge(merged, _pointer(base, pointer, file, str(ref)))
    return _merge(merged, data)


def _pointer(data: Any, pointer: str, file: Path, ref: str) -> dict[str, Any]:
    for part in [p for p in pointer.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(data, dict) or part not in data:
            raise ConfigError(f"extends {ref!r}: no {pointer!r} there", file=file, field="extends")
        data = data[part]
    if not isinstance(data, dict):
        raise ConfigError(f"extends {ref!r}: not a mapping", file=file, field="extends")
    return data


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def language_code(value: Any) -> str:
    """AU-Harness's ``language`` (``zh-CN``, ``en_accented``, ``en/zh``, ``english``) as a code."""
    text = str(value or "en").strip()
    text = text.split("/")[0].removesuffix("_accented")
    named = {v.lower(): k for k, v in LANGUAGE_NAMES.items()}
    if text.lower() in named:
        return named[text.lower()]
    if text.lower() == "cmn":
        return "zh"
    parts = text.split("-")
    return "-".join([parts[0].lower(), *parts[1:]])


def jinja_to_fields(text: str) -> str:
    """``{{ x }}`` (Jinja, rendered per record by AU-Harness) as voxbench's ``{x}``."""
    return _JINJA.sub(r"{\1}", text)


def convert(file: Path, root: Path, read: set[Path] | None = None) -> Converted | None:
    """The AU-Harness task in ``file`` (None: a base file, not a task); the files its
    ``extends`` chain read are added to ``read``."""
    data = resolve(file, read=read)
    name = data.get(TASK_KEY)
    if not name:
        return None
    name = str(name)
    rel = file.resolve().relative_to(root.resolve())
    family = rel.parts[0] if len(rel.parts) > 1 else "tasks"
    found = Converted(name, file, family, None)
    problem = name_problem(name)
    if problem is not None:
        found.reason = f"task_name {name!r}: {problem}"
        return found
    try:
        found.spec = _spec(data, found)
    except _CannotMap as exc:
        found.reason = str(exc)
    return found


class _CannotMap(ValueError):
    """Why an AU-Harness task has no voxbench equivalent."""


def _sibling_base(file: Path, data: dict[str, Any], found: Converted) -> dict[str, Any]:
    """A task without ``dataset_path`` whose folder's ``base.yaml`` has one, read over that
    base as its siblings are (AU-Harness's gigaspeech2 th/vi files extend ``../base.yaml``,
    skipping their folder's, and fail to load there)."""
    sibling = file.parent / "base.yaml"
    if data.get("dataset_path") or not sibling.is_file():
        return data
    base = resolve(sibling)
    if not base.get("dataset_path"):
        return data
    found.notes.append(
        f"no dataset_path in its extends chain (AU-Harness cannot load it): read over its "
        f"folder's base.yaml, as its siblings are ({base['dataset_path']})"
    )
    return _merge(base, data)


TASK_KEYS = frozenset(
    {"task_name", "dataset_path", "subset", "split", "language", "modality", "audio_column",
     "target_column", "instruction_column", "textual_input_column", "choices_column",
     "id_column", "context_column", "user_text_column", "source_language", "target_language",
     "accented", "user_prompt", "preprocessor", "postprocessor", "long_audio_processing_logic",
     "generation_kwargs", "metrics", "prompt"}
)  # fmt: skip
"""The task keys AU-Harness's code or README names (``extends`` is resolved before)."""


def _known_keys(data: dict[str, Any], found: Converted) -> dict[str, Any]:
    """Notes for the keys AU-Harness's README names but its code never reads, or no key at
    all; ``lange`` (the README's spelling of ``language``) is read as ``language``."""
    if "lange" in data and "language" not in data:
        data = {**data, "language": data["lange"]}
        found.notes.append("lange: the README's spelling of language, read as language")
    for key in sorted(set(data) - TASK_KEYS - {"lange"}):
        found.notes.append(f"{key}: not a task key AU-Harness reads, left out")
    if data.get("accented"):
        found.notes.append(
            "accented: AU-Harness chose tasks by it (filters.accented); voxbench tasks are "
            "chosen by name or group"
        )
    return data


def _spec(data: dict[str, Any], found: Converted) -> dict[str, Any]:
    data = _known_keys(_sibling_base(found.file, data, found), found)
    path = data.get("dataset_path")
    kind = str(data.get("preprocessor") or "GeneralPreprocessor")
    if not path:
        raise _CannotMap(
            "no dataset_path after its extends chain (AU-Harness fails to load it too)"
        )
    if not _HUB_ID.fullmatch(str(path)) or str(path).startswith("private_datasets/"):
        raise _CannotMap(
            f"dataset {path!r} is a local folder, not a Hub dataset "
            "(CallHome: LDC's licensed corpus, prepared by AU-Harness's own script)"
        )
    if str(data.get("modality") or "audio") == "text":
        raise _CannotMap(TEXT_ONLY)
    if kind == "MultiturnPreprocessor":
        raise _CannotMap(
            "multi-turn records with one audio clip per turn on the Hub: voxbench's multi-turn "
            "tasks read a local manifest — the registry's mtbench_audio reads one that "
            "`voxbench import mt-bench-audio` writes"
        )
    metrics = _metrics(data.get("metrics"), found)
    language = language_code(data.get("language"))
    columns: dict[str, Any] = {
        "id": None,
        "audio": str(data.get("audio_column") or "audio"),
        "reference": str(data.get("target_column") or "answer"),
        "language": None,
    }
    question = data.get("instruction_column") or data.get("textual_input_column")
    if question:
        columns["question"] = str(question)
    if data.get("choices_column"):
        columns["choices"] = str(data["choices_column"])
    spec: dict[str, Any] = {
        "description": f"AU-Harness task {found.name} ({kind}).",
        "dataset": _dataset(data),
        "language": language,
        "columns": columns,
        "answer": "text",
        "metrics": metrics,
        "long_audio": {
            "policy": "chunk" if data.get("long_audio_processing_logic") == "chunk" else "truncate",
            "max_seconds": AU_CHUNK_SECONDS,
        },
        "licence": "see the dataset card",
        "source_url": f"https://huggingface.co/datasets/{path}",
    }
    generation = _generation(data.get("generation_kwargs"), found)
    if generation:
        spec["generation"] = generation
    if "prompt" in data:
        found.notes.append("prompt: never read by AU-Harness (its task used user_prompt)")
    user = jinja_to_fields(str(data.get("user_prompt") or "")).strip()
    handler = _KINDS.get(kind)
    if handler is None:
        raise _CannotMap(f"preprocessor {kind}: not one AU-Harness has")
    handler(data, spec, user, found)
    return spec


def _dataset(data: dict[str, Any]) -> dict[str, Any]:
    dataset: dict[str, Any] = {"hub": str(data["dataset_path"])}
    if data.get("subset"):
        dataset["config"] = str(data["subset"])
    dataset["split"] = str(data.get("split") or "test")
    return dataset


def _metrics(value: Any, found: Converted) -> list[str]:
    names: list[str] = []
    for item in value or []:
        metric = str(item.get("metric") if isinstance(item, dict) else item)
        mapping = METRIC_NAMES.get(metric)
        if mapping is None:
            found.notes.append(f"metric {metric}: not an AU-Harness metric, left out")
            continue
        if mapping.note:
            found.notes.append(f"{metric} → {', '.join(mapping.names)}: {mapping.note}")
        names.extend(n for n in mapping.names if n not in names)
    if not names:
        raise _CannotMap("no metric voxbench has")
    return names


def _generation(value: Any, found: Converted) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in (value or {}).items():
        if key == "temperature" and isinstance(item, int | float):
            out["temperature"] = float(item)
        elif key in ("max_completion_tokens", "max_tokens", "max_gen_tokens") and isinstance(
            item, int
        ):
            out["max_tokens"] = item
        else:
            found.notes.append(
                f"generation_kwargs.{key}: voxbench sends temperature and max_tokens"
            )
    return out


def _joined(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def _general(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    instruction = data.get("instruction_column")
    parts = [user, f"{{{instruction}}}" if instruction else ""]
    if data.get("choices_column"):
        parts.append("Choices: {choices}")
    spec["prompt"] = {"user": _joined(*parts)}
    if user and instruction:
        found.notes.append(
            "the prompt is user_prompt, a new line, then the record's instruction "
            "(AU-Harness joined them with no separator)"
        )


def _covost2(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    source = language_code(data.get("source_language") or spec["language"])
    target = language_code(data.get("target_language") or "en")
    spec["language"] = source
    spec["target_language"] = target
    names = {
        "source_language_name": LANGUAGE_NAMES.get(source.split("-")[0], source),
        "target_language_name": LANGUAGE_NAMES.get(target.split("-")[0], target),
    }
    for key, value in names.items():
        user = user.replace("{" + key + "}", value)
    spec["prompt"] = {"user": user}


def _spoken_question(data: dict[str, Any], spec: dict[str, Any], user: str, _: Converted) -> None:
    spec["prompt"] = {"user": _joined(user, "Answer the question provided in the audio.")}


def _voicebench(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    _spoken_question(data, spec, user, found)
    spec["columns"]["question"] = "prompt"
    if data.get("subset") == "ifeval":
        spec["columns"]["id"] = "key"
        spec["columns"]["reference"] = "prompt"
    elif data.get("subset") == "advbench":
        spec["columns"]["reference"] = "prompt"


def _big_bench(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    _spoken_question(data, spec, user, found)
    spec["columns"]["audio"] = "audio"


def _bfcl(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    spec["columns"]["tools"] = "tools"
    spec["columns"]["id"] = "id"
    spec["answer"] = "function_call"
    spec["prompt"] = {
        "system": "You can call these functions (JSON schema):\n{tools}",
        "user": user or "Call the functions the spoken request needs.",
    }
    if not user:
        found.notes.append(
            "no_prompt: the tools are offered natively and listed in the system prompt"
        )


def _spider(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    spec["sql"] = {
        "database": "${SPIDER_DATABASE_DIR:-~/.cache/voxbench/spider/database}",
        "db_id_column": "db_id",
    }
    spec["prompt"] = {
        "system": "### Sqlite SQL tables, with their properties:\n{schema}",
        "user": _joined(user, "Answer the question spoken in the audio."),
    }
    found.notes.append("Spider's databases are a separate download: set SPIDER_DATABASE_DIR")


def _spokenwoz(data: dict[str, Any], spec: dict[str, Any], user: str, found: Converted) -> None:
    context = data.get("context_column") or "context"
    text = data.get("user_text_column") or "text"
    spec["columns"]["reference"] = "slots"
    spec["columns"]["question"] = str(text)
    if "bleu" in spec["metrics"]:
        spec["metrics"].remove("bleu")
        found.notes.append(
            "bleu (against the agent's reply) left out: the task's reference is the dialogue "
            "state; run a second task on agent_text for it"
        )
    spec["prompt"] = {
        "user": _joined(
            user,
            f"[Dialogue History]\n{{{context}}}",
            "Reply to the user's spoken turn, then give the dialogue state as one JSON object "
            'of slot → value on the last line (e.g. {"restaurant-area": "centre"}).',
        )
    }
    found.notes.append(
        "the reference is the slots column (the dialogue state), not the agent's reply; "
        "AU-Harness also put the user's transcript in the audio variant's prompt, voxbench "
        "does not"
    )


_KINDS = {
    "GeneralPreprocessor": _general,
    "Covost2Preprocessor": _covost2,
    "VoiceBenchPreprocessor": _voicebench,
    "BigBenchAudioPreprocessor": _big_bench,
    "BfclPreprocessor": _bfcl,
    "SpiderPreprocessor": _spider,
    "SpokenWozPreprocessor": _spokenwoz,
}
