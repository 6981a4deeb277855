"""Static consistency checks of a benchmark's data (the oracle run is the dynamic one).

- every session id used by an expected call exists in the backend and the knowledge base;
- every golden answer satisfies its own must-mention facts and makes none of its
  must-not-claim claims (otherwise the oracle could not pass);
- every ``kb`` fact is stated in the knowledge base or in an earlier turn.
"""

from __future__ import annotations

import re

from voxbench.benchmarks.backend import BackendSpec
from voxbench.core.benchmark import Benchmark


def consistency_problems(benchmark: Benchmark) -> list[str]:
    """Readable problems; an empty list when the data is consistent."""
    problems: list[str] = []
    spec = BackendSpec.model_validate(benchmark.backend)
    kb = benchmark.knowledge_base
    earlier = ""
    for turn in benchmark.turns:
        where = f"turn {turn.id}"
        for call in (
            *turn.expect.required_calls,
            *turn.expect.allowed_calls,
            *turn.expect.forbidden_calls,
        ):
            for arg, value in call.args.items():
                if not (arg == "session_id" or arg.startswith("session_id")):
                    continue
                if spec.engine == "stateful" and str(value) not in spec.sessions:
                    problems.append(
                        f"{where}: {call.name}.{arg}={value!r} is not a session in backend.yaml"
                    )
                if not re.search(rf"\b{re.escape(str(value))}\b", kb):
                    problems.append(
                        f"{where}: {call.name}.{arg}={value!r} does not appear in the knowledge base"
                    )
        for fact in turn.expect.must_mention:
            if not fact.matches(turn.golden_text):
                problems.append(f"{where}: golden answer does not mention {fact.name!r}")
            if fact.kind == "kb" and not (fact.matches(kb) or fact.matches(earlier)):
                problems.append(
                    f"{where}: fact {fact.name!r} is neither in the knowledge base nor said in an earlier turn"
                )
        for claim in turn.expect.must_not_claim:
            if claim.matches(turn.golden_text):
                problems.append(f"{where}: golden answer makes the forbidden claim {claim.name!r}")
        earlier += "\n" + turn.text + "\n" + turn.golden_text
    return problems
