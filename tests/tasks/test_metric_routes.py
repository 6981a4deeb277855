"""Our numbers by an independent route: WER against plain jiwer with the normaliser the README
names (applied here, by the test), BLEU and chrF against the sacrebleu command line on files
written here, function_call_match against verdicts written out by hand."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import jiwer
import pytest
from whisper_normalizer.english import EnglishTextNormalizer

from voxbench.metrics.registry import METRICS, ScoringContext

# -- WER ---------------------------------------------------------------------------------------

# (language, reference, prediction): punctuation, numbers said and written, contractions,
# accents, case; no clock times, round brackets, "cannot"/"okay" or "50 %" (the README's rules
# voxbench adds to Whisper's normaliser), so Whisper's English normaliser alone is the route.
WER_CASES = [
    (
        "en",
        "The quick brown fox jumps over the lazy dog.",
        "the quick brown fox jumped over a lazy dog",
    ),
    ("en", "It's twenty-five dollars, isn't it?", "It is $25, is not it"),
    ("en", "Mr. Smith lives at 42 Baker Street.", "mister smith lives at forty two baker street"),
    ("en", "I'd like two hundred and fifty grams, please!", "I would like 250 grams please"),
    (
        "en",
        "We colour the centre in November 2023.",
        "we color the center in november twenty twenty three",
    ),
    ("en", "Hello, world", "hello world world"),
    ("fr", "Où est la gare, s'il vous plaît ?", "ou est la gare s'il vous plait"),
    ("fr", "L'été dernier, nous étions 3 amis.", "l'été dernier nous étions trois amis"),
    ("de", "Die Straße ist sehr lang.", "die strasse ist so lang"),
    ("de", "Ich habe 2 Äpfel gegessen!", "Ich habe zwei Äpfel gegessen"),
    ("zh", "我爱北京天安门。", "我爱北京天安门"),
    ("zh", "今天天气很好，我们去公园吧！", "今天天气很好我们去公园"),
]


def _basic(text: str) -> str:
    """The README's normaliser of languages other than English: lower-case, punctuation and
    symbols out, accents kept."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(text.split())


def _ours(metric: str, cases: list[tuple[str, str, str]], target: str | None = None) -> float:
    stats = [
        METRICS[metric].score(
            pred, ScoringContext(reference=ref, language=lang, target_language=target or lang,
                                 answer="text"),
        )
        for lang, ref, pred in cases
    ]  # fmt: skip
    return METRICS[metric].pool(stats, None)["value"]


@pytest.mark.parametrize("language", ["en", "fr", "de", "zh"])
def test_wer_equals_plain_jiwer_with_the_documented_normaliser(language: str) -> None:
    cases = [c for c in WER_CASES if c[0] == language]
    if language == "en":
        english = EnglishTextNormalizer()
        refs = [english(r) for _, r, _ in cases]
        hyps = [english(p) for _, _, p in cases]
        expected = jiwer.wer(refs, hyps)
    elif language == "zh":  # written without spaces: characters
        refs = [_basic(r).replace(" ", "") for _, r, _ in cases]
        hyps = [_basic(p).replace(" ", "") for _, _, p in cases]
        expected = jiwer.cer(refs, hyps)
    else:
        expected = jiwer.wer([_basic(r) for _, r, _ in cases], [_basic(p) for _, _, p in cases])
    assert expected > 0  # the cases do hold errors
    assert _ours("wer", cases) == round(100 * expected, 2)


def test_cer_equals_plain_jiwer_cer() -> None:
    cases = [c for c in WER_CASES if c[0] in ("fr", "de")]
    expected = jiwer.cer([_basic(r) for _, r, _ in cases], [_basic(p) for _, _, p in cases])
    assert _ours("cer", cases) == round(100 * expected, 2)


# -- BLEU and chrF -----------------------------------------------------------------------------

TRANSLATIONS = {
    "de": [
        ("Das Haus ist klein.", "Das Haus ist klein."),
        ("Ich habe 3 Katzen und 2 Hunde.", "Ich habe drei Katzen und 2 Hunde."),
        ("Wo ist der Bahnhof?", "Wo befindet sich der Bahnhof?"),
        ("Er kam um 8 Uhr nach Hause, müde und hungrig.", "Er kam müde und hungrig um 8 Uhr heim."),
        ("Die Preise stiegen um 12,5 %.", "Die Preise sind um 12,5 % gestiegen."),
    ],
    "zh": [
        ("我们明天去北京。", "我们明天去北京。"),
        ("他有三个孩子，都在上学。", "他有3个孩子，都在上学。"),
        ("这本书很有意思！", "这本书非常有趣！"),
        ("会议在下午两点开始。", "会议下午2点开始。"),
    ],
    "ja": [
        ("今日はいい天気ですね。", "今日はいい天気です。"),
        ("駅はどこですか？", "駅はどちらですか？"),
        ("私は毎朝7時に起きます。", "私は毎朝七時に起きます。"),
    ],
}
TOKENIZER = {"de": "13a", "zh": "zh", "ja": "char"}


def _sacrebleu_cli(tmp_path: Path, refs: list[str], hyps: list[str], tok: str) -> dict[str, float]:
    (tmp_path / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    (tmp_path / "hyp.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "sacrebleu", str(tmp_path / "ref.txt"), "-i",
         str(tmp_path / "hyp.txt"), "-m", "bleu", "chrf", "-tok", tok, "-w", "2"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    scores = json.loads(done.stdout)
    assert f"tok:{tok}" in scores[0]["signature"]
    return {"bleu": scores[0]["score"], "chrf": scores[1]["score"]}


@pytest.mark.parametrize("language", sorted(TRANSLATIONS))
def test_bleu_and_chrf_equal_the_sacrebleu_command_line(tmp_path: Path, language: str) -> None:
    pairs = TRANSLATIONS[language]
    cli = _sacrebleu_cli(
        tmp_path, [r for r, _ in pairs], [h for _, h in pairs], TOKENIZER[language]
    )
    cases = [("en", ref, hyp) for ref, hyp in pairs]
    for metric in ("bleu", "chrf"):
        assert _ours(metric, cases, target=language) == cli[metric], metric
    assert 0 < cli["bleu"] < 100


# -- function_call_match -----------------------------------------------------------------------

SCHEMAS = {
    "set_alarm": {
        "type": "object",
        "properties": {"hour": {"type": "integer"}, "label": {"type": "string"}},
    },
    "invite": {
        "type": "object",
        "properties": {
            "people": {"type": "array", "uniqueItems": True},
            "room": {"type": "string"},
        },
    },
}
EXPECTED = [
    {"name": "set_alarm", "arguments": {"hour": 7, "label": "Gym"}},
    [
        {"name": "set_alarm", "arguments": {"hour": 7}},
        {"name": "invite", "arguments": {"people": ["Ann", "Bo"], "room": "A1"}},
    ],
]
# (reference index, reply, verdict written out by hand, why)
CALL_CASES = [
    (0, '{"name": "set_alarm", "arguments": {"hour": 7, "label": "Gym"}}', 1, "exact"),
    (0, 'Sure! {"name": "set_alarm", "arguments": {"hour": 7, "label": " g-ym. "}}', 1,
     "case, spaces and ,./-_*^ in a string (BFCL's standardize_string)"),
    (0, '{"name": "set_alarm", "arguments": {"hour": "7", "label": "Gym"}}', 0,
     "a number as a string is no integer (BFCL's type check)"),
    (0, '{"name": "set_alarm", "arguments": {"hour": 7.0, "label": "Gym"}}', 0,
     "7.0 is no integer (BFCL's type check)"),
    (0, '{"name": "set_alarm", "arguments": {"hour": 8, "label": "Gym"}}', 0, "a wrong value"),
    (0, '{"name": "set_alarm", "arguments": {"hour": 7}}', 0, "a missing argument"),
    (0, '{"name": "set_alarm", "arguments": {"hour": 7, "label": "Gym", "snooze": true}}', 0,
     "an extra argument"),
    (0, '{"name": "set_timer", "arguments": {"hour": 7, "label": "Gym"}}', 0, "a wrong name"),
    (0, "I would set an alarm for seven.", 0, "no call at all"),
    (1, '[{"name": "invite", "arguments": {"people": ["Bo", "Ann"], "room": "a1"}}, '
        '{"name": "set_alarm", "arguments": {"hour": 7}}]', 1,
     "calls in another order, a set in another order"),
    (1, '{"tool_calls": [{"function": {"name": "set_alarm", "arguments": "{\\"hour\\": 7}"}}, '
        '{"function": {"name": "invite", "arguments": "{\\"people\\": [\\"Ann\\", \\"Bo\\"], '
        '\\"room\\": \\"A1\\"}"}}]}', 1, "the OpenAI tool_calls shape"),
    (1, '[{"name": "set_alarm", "arguments": {"hour": 7}}]', 0, "one call of two"),
    (1, '[{"name": "set_alarm", "arguments": {"hour": 7}}, '
        '{"name": "invite", "arguments": {"people": ["Ann"], "room": "A1"}}]', 0,
     "a set missing a member"),
]  # fmt: skip


def test_function_call_match_equals_hand_written_verdicts() -> None:
    stats = []
    for ref_index, reply, verdict, why in CALL_CASES:
        context = ScoringContext(
            reference=json.dumps(EXPECTED[ref_index]),
            language="en",
            target_language="en",
            answer="function_call",
            tool_schemas={k: v for k, v in SCHEMAS.items()},
        )
        got = METRICS["function_call_match"].score(reply, context)
        assert got["correct"] == verdict, why
        stats.append(got)
    pooled = METRICS["function_call_match"].pool(stats, None)
    expected = [v for _, _, v, _ in CALL_CASES]
    assert pooled["value"] == round(100 * sum(expected) / len(expected), 2)
    assert pooled["n"] == len(CALL_CASES)
    assert pooled["parsed"] == round(100 * 12 / 13, 2)  # only the prose reply has no call
