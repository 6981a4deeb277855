"""The ``local`` provider: offline targets that need no key (oracle, baseline)."""

from __future__ import annotations

from voxbench.core.errors import ConfigError
from voxbench.core.session import Session
from voxbench.targets.baseline import make_baseline
from voxbench.targets.oracle import make_oracle
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider

_LOCAL_MODELS = {
    "oracle": make_oracle,
    "baseline": make_baseline,
}


def _local(context: TargetContext) -> Session:
    factory = _LOCAL_MODELS.get(context.model)
    if factory is None:
        raise ConfigError(
            f"unknown local target {context.model!r}",
            field="target",
            expected="local/" + " or local/".join(_LOCAL_MODELS),
        )
    return factory(context.benchmark)


register_provider(
    TargetProvider(
        name="local",
        factory=_local,
        description="Offline targets: the oracle (golden answers) and the no-LLM baseline",
        kind="local",
        default_model="oracle",
        models=tuple(_LOCAL_MODELS),
    ),
    aliases={"oracle": "local/oracle", "baseline": "local/baseline"},
)
