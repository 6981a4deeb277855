"""A task run heard through perturbations (``voxbench tasks run --perturb``, issue 31).

``perturbed_plan`` gives every record of the plan an audio source that decodes the clip and
perturbs it (``voxbench.audio.perturb``) before the engine resamples, cuts and encodes it: the
model hears the perturbed clip, the cache key hashes the perturbed bytes (a perturbed run never
reads a clean run's answers), and the references and scoring stay the clean record's. Each clip
is seeded by the run seed and ``<task>/<record id>`` (a multi-turn record's turns by their
index too): every model of the run, every shard and a resumed run hear the same audio.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from voxbench.audio.wav import Audio
from voxbench.tasks.datasets.readers import AudioSource, Record, TurnAudio
from voxbench.tasks.plan import Plan

if TYPE_CHECKING:
    from voxbench.audio.perturb import Perturbation


@dataclass(frozen=True)
class PerturbedAudio:
    """A record's clip as a perturbed run's models hear it.

    It has no ``encoded`` (the engine's worker processes decode undecoded bytes): the clip is
    decoded and perturbed in the engine's preparation thread instead."""

    clean: AudioSource
    chain: Perturbation
    seed: int
    key: str

    @property
    def name(self) -> str:
        return self.clean.name

    def load(self) -> Audio:
        return self.chain.apply(self.clean.load(), self.seed, self.key)

    def duration(self) -> float:
        return self.clean.duration()


def perturbed_record(record: Record, chain: Perturbation, seed: int, task: str) -> Record:
    """``record`` with its clip (and each turn's clip) perturbed."""
    key = f"{task}/{record.id}"
    turns = tuple(
        replace(t, audio=PerturbedAudio(t.audio, chain, seed, f"{key}#{i}"))
        if t.audio is not None
        else t
        for i, t in enumerate(record.turns)
    )
    if turns:
        audio: AudioSource = TurnAudio(tuple(t.audio for t in turns if t.audio is not None))
    else:
        audio = PerturbedAudio(record.audio, chain, seed, key)
    return replace(record, audio=audio, turns=turns)


def perturbed_plan(plan: Plan, spec: str | None, seed: int) -> Plan:
    """The plan with every record heard through ``spec`` (the plan itself when there is none)."""
    if spec is None:
        return plan  # a clean run imports no perturbation (numpy tables built at import)
    from voxbench.audio.perturb import parse_perturbations

    chain = parse_perturbations(spec)
    if not chain:
        return plan
    done: dict[tuple[str, str], Record] = {}
    jobs = []
    for job in plan.jobs:
        records = []
        for r in job.records:
            found = done.get((job.task.name, r.id))
            if found is None:  # one object per record, as the engine shares payloads by id()
                found = done[(job.task.name, r.id)] = perturbed_record(
                    r, chain, seed, job.task.name
                )
            records.append(found)
        jobs.append(replace(job, records=records))
    return replace(plan, jobs=jobs)
