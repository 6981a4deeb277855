"""AU-Harness names → voxbench names: tasks, task groups (its folders) and metrics.

The table says what *would* correspond; the importer (``importers.au_harness``) keeps a task name
only when it exists in the live registry at import time, so entries may name tasks that a
registry does not hold (yet). Task names follow the registry's rule: lowercase, dataset then
split or language (``fleurs_asr_fr_fr``, ``covost2_zh_cn_en``, ``meld_emotion``).
AU-Harness's task names are its YAMLs' ``task_name`` values (ServiceNow/AU-Harness ``tasks/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voxbench.tasks.au_harness import METRIC_NAMES, TEXT_ONLY

# AU-Harness task name → voxbench candidates (the first one in the registry wins).
TASKS: dict[str, tuple[str, ...]] = {
    "librispeech_test_clean": ("librispeech_test_clean",),
    "librispeech_test_other": ("librispeech_test_other",),
    "tedlium3_test": ("tedlium3_test",),
    "tedlium3_long_form": ("tedlium3_long_form",),
    "gigaspeech_test": ("gigaspeech_test",),
    "spgispeech_test": ("spgispeech_test",),
    "peoples_speech_test": ("peoples_speech_test",),
    "aishell_1_test": ("aishell_1_test",),
    "ami_ihm": ("ami_ihm",),
    "ami_sdm": ("ami_sdm",),
    "earnings21": ("earnings21",),
    "earnings22": ("earnings22",),
    "seame_dev_man": ("seame_dev_man",),
    "seame_dev_sge": ("seame_dev_sge",),
    "meld_emotion_test": ("meld_emotion",),
    "meld_sentiment_test": ("meld_sentiment",),
    "iemocap_emotion_recognition": ("iemocap_emotion",),
    "iemocap_gender_recognition": ("iemocap_gender",),
    "voxceleb_gender_test": ("voxceleb_gender",),
    "voxceleb_accent_test": ("voxceleb_accent",),
    "mmau_mini": ("mmau_mini",),
    "SLURP-intent": ("slurp_intent",),
    "slue_p2_sqa5_test": ("slue_sqa5",),
    "spoken_squad_test": ("spoken_squad",),
    "public_sg_speech_qa_test": ("public_sg_speech_qa",),
    "openbookqa": ("voicebench_openbookqa",),
    "big_bench_audio_audio_query": ("big_bench_audio",),
    "gsm8k_audio": ("gsm8k_speech",),
    "voicebench_ifeval_audio": ("voicebench_ifeval",),
    "spider_audio": ("spider_audio",),
    "advbench": ("voicebench_advbench",),
    "spokenwoz_audio": ("spokenwoz",),
    "asvspoof": ("asvspoof2017",),
    "mtbench_audio": ("mtbench_audio",),
}

NO_EQUIVALENT: dict[str, str] = {
    "big_bench_audio_text_query": TEXT_ONLY,
    "gsm8k_text": TEXT_ONLY,
    "voicebench_ifeval_text": TEXT_ONLY,
    "spider_text": TEXT_ONLY,
    "mtbench_text": TEXT_ONLY,
    "spokenwoz_text": TEXT_ONLY,
}

CV_RELEASE = (
    "Common Voice 17 stands in for AU-Harness's Common Voice 15: a later release of the same "
    "language, so its records differ"
)


# AU-Harness's dataset folders (groups there) → the voxbench task names they stand for.
SUBGROUPS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern)
    for name, pattern in {
        "librispeech": r"librispeech_test_(clean|other)",
        "covost2": r"covost2_[a-z_]+",
        "fleurs": r"fleurs_asr_[a-z0-9_]+",
        "common_voice_15": r"common_voice_1[57]_[a-z_]+",
        "voxpopuli": r"voxpopuli_[a-z_]+",
        "librispeech_multilingual": r"mls_[a-z]+",
        "ami": r"ami_(ihm|sdm)",
        "gigaspeech2": r"gigaspeech2_[a-z]+",
        "mnsc": r"mnsc_asr_[a-z0-9_]+",
        "mnsc_sds": r"mnsc_sds_part[0-9]+",
        "mnsc_sqa": r"mnsc_sqa_part[0-9]+",
        "mmsu": r"voicebench_mmsu_[a-z_]+",
        "sd-qa": r"voicebench_sd_qa_[a-z_]+",
        "big_bench_audio": r"big_bench_audio",
        "spokenwoz": r"spokenwoz",
        "mtbench": r"mtbench_[a-z0-9_]+",
        "music_understanding": r"mu_chomusic",
        "scene_understanding": r"(audiocaps|audiocaps_qa|clotho_aqa|wavcaps|wavcaps_qa)",
        "spoofing": r"asvspoof2017",
    }.items()
}


@dataclass(frozen=True)
class NamePattern:
    """A family of AU-Harness names: its regex, our names (best first), and a caveat."""

    regex: re.Pattern[str]
    templates: tuple[str, ...]
    notes: tuple[str, ...] = ()
    """A caveat per template (empty: none), said when that template's task is the one found."""


# Families of names, by pattern. A template may use each group's slug ({lang}) or its first
# subtag ({lang_base}: "zh-CN" → "zh").
PATTERNS: tuple[NamePattern, ...] = (
    NamePattern(re.compile(r"fleurs_(?P<lang>[a-z]+(?:_[a-z0-9]+)+)"), ("fleurs_asr_{lang}",)),
    NamePattern(
        re.compile(r"covost2_(?P<src>[A-Za-z]+(?:-[A-Za-z]+)?)_(?P<tgt>[A-Za-z]+(?:-[A-Za-z]+)?)"),
        ("covost2_{src}_{tgt}", "covost2_{src_base}_{tgt_base}"),
    ),
    NamePattern(
        re.compile(r"common_voice_15_(?P<lang>[A-Za-z]+(?:-[A-Za-z]+)?)"),
        ("common_voice_15_{lang}", "common_voice_17_{lang}", "common_voice_17_{lang_base}"),
        ("", CV_RELEASE, CV_RELEASE),
    ),
    NamePattern(re.compile(r"voxpopuli_(?P<lang>[a-z_]+)"), ("voxpopuli_{lang}",)),
    NamePattern(re.compile(r"librispeech_multilingual_(?P<lang>[a-z]+)"), ("mls_{lang}",)),
    NamePattern(re.compile(r"gigaspeech2_(?P<lang>[a-z]+)_test"), ("gigaspeech2_{lang}",)),
    NamePattern(re.compile(r"callhome_asr_(?P<lang>[a-z]+)"), ("callhome_asr_{lang}",)),
    NamePattern(
        re.compile(r"callhome_diarization_(?P<lang>[a-z]+)"), ("callhome_diarization_{lang}",)
    ),
    NamePattern(re.compile(r"mnsc_(?P<rest>[a-z0-9_]+)_test"), ("mnsc_{rest}",)),
    NamePattern(re.compile(r"sd-qa_(?P<accent>[a-z_]+)_audio"), ("voicebench_sd_qa_{accent}",)),
    NamePattern(re.compile(r"mmsu_(?P<domain>[a-z_]+)"), ("voicebench_mmsu_{domain}",)),
    # BFCL: both the tools-in-the-prompt and the native-tools variants are one task here
    # (voxbench offers the tools natively and renders them where a prompt says {tools}).
    NamePattern(
        re.compile(r"bfcl_audio_(?P<kind>[a-z_]+?)(?:_no_prompt)?"), ("bfcl_{kind}_audio",)
    ),
    NamePattern(re.compile(r"bfcl_text_[a-z_]+|sd-qa_[a-z_]+_text"), ()),
    NamePattern(re.compile(r"(?P<name>[a-z0-9_]+)_test"), ("{name}",)),
)

# AU-Harness task folders usable as groups → voxbench groups (registry folders).
GROUPS: dict[str, tuple[str, ...]] = {
    "tasks": ("all",),
    "speech_recognition": ("asr", "long_form_asr", "code_switching_asr"),
    "asr": ("asr",),
    "long_form_asr": ("long_form_asr",),
    "code_switching_asr": ("code_switching_asr",),
    "paralinguistics": ("paralinguistics", "language_id", "diarisation"),
    "emotion_recognition": ("emotion",),
    "gender_recognition": ("gender",),
    "accent_recognition": ("accent",),
    "speaker_diarization": ("diarisation",),
    "callhome_diarization": ("diarisation",),
    "spoken_language_understanding": (
        "spoken_qa",
        "sqqa",
        "spoken_dialogue",
        "intent",
        "slot_filling",
        "summarisation",
        "translation",
    ),
    "intent_classification": ("intent",),
    "speech_qa": ("spoken_qa",),
    "sqqa": ("sqqa",),
    "spoken_dialogue": ("spoken_dialogue",),
    "music_understanding": ("music_understanding",),
    "scene_understanding": ("scene_understanding",),
    "audio_understanding": ("music_understanding", "scene_understanding"),
    "spoofing": ("spoofing",),
    "spoken_dialogue_summarization": ("summarisation",),
    "translation": ("translation",),
    "spoken_language_reasoning": ("function_calling", "instruction_following", "math", "sql"),
    "bfcl": ("function_calling",),
    "bfcl_audio": ("function_calling",),
    "bfcl_audio_no_prompt": ("function_calling",),
    "gsm8k": ("math",),
    "ifeval": ("instruction_following",),
    "speech_to_sql": ("sql",),
    "safety_and_security": ("safety", "spoofing"),
    "safety": ("safety",),
}


METRICS = METRIC_NAMES
"""AU-Harness metric → voxbench metrics (``tasks.au_harness``, shared with its task reader)."""


def task_candidates(name: str) -> tuple[str, ...]:
    """The voxbench task names that may correspond to AU-Harness task ``name``, best first."""
    return tuple(candidate for candidate, _ in task_candidates_noted(name))


def task_candidates_noted(name: str) -> tuple[tuple[str, str], ...]:
    """``task_candidates`` with each one's caveat ("" when none)."""
    if name in TASKS:
        return tuple((t, "") for t in TASKS[name])
    if name in NO_EQUIVALENT:
        return ()
    for pattern in PATTERNS:
        match = pattern.regex.fullmatch(name)
        if match is not None:
            fields: dict[str, str] = {}
            for key, value in match.groupdict().items():
                fields[key] = _slug(value)
                fields[f"{key}_base"] = _slug(value.split("-")[0])
            notes = pattern.notes or ("",) * len(pattern.templates)
            found = [(t.format(**fields), n) for t, n in zip(pattern.templates, notes, strict=True)]
            unique: dict[str, str] = {}
            for candidate, note in found:
                unique.setdefault(candidate, note)
            return tuple(unique.items())
    return ((_slug(name), ""),)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
