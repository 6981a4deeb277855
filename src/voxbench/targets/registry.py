"""Targets: ``provider/model`` names → factories of ``Session``, a view of the one registry.

Each target provider registers a ``TargetProvider``; it lands in ``providers.registry``
under the ``target`` role (``realtime`` for speech-to-speech sockets), beside whatever else
the same provider does there (text completion, ASR, TTS). A target name is parsed by
``core.names`` (``provider:model`` is accepted too); a bare name is looked up in the alias
table (``oracle`` → ``local/oracle``) or is a provider with a default model. ``--service`` /
``--target`` may also be a class path (``mypkg.adapters:MySession``, ``myagent:Agent``,
``mypkg.adapters.MySession``) for a user's own adapter: a ``Session`` subclass built with the
same ``TargetContext`` (or with no argument, when its constructor takes none). A
``module:Class`` whose module part is a registered provider or alias is that provider's
model instead.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.session import Session, TargetInfo
from voxbench.providers import registry as one_registry
from voxbench.providers.registry import Capability, EnvVars, Provider, Role
from voxbench.targets.pipelines import route_target

TARGET_ROLES = (Role.TARGET, Role.REALTIME)


@dataclass(frozen=True)
class TargetContext:
    """What a target factory gets: the model, the benchmark being run, and user options."""

    model: str
    benchmark: Benchmark | None = None
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


SessionFactory = Callable[[TargetContext], Session]


@dataclass(frozen=True)
class TargetProvider:
    """A provider of targets."""

    name: str
    factory: SessionFactory
    description: str
    kind: str
    """``local``, ``text``, ``realtime`` or ``cascade``."""
    env_vars: tuple[str, ...] = ()
    """Every variable named by ``env`` (all of them, unless ``env`` says otherwise)."""
    default_model: str | None = None
    models: tuple[str, ...] = ()
    """Known model names, for listings (any name is accepted)."""
    env: EnvVars | None = None
    """Which of ``env_vars`` are all needed and which one of is enough."""
    options: frozenset[str] | None = None
    """The target option keys (``-o KEY=VALUE``, ``target_options``) this provider reads.
    When declared, any other key is refused; when None, only keys no built-in target reads
    (``KNOWN_TARGET_OPTIONS``) are refused."""

    @property
    def requirement(self) -> EnvVars:
        """``env``, or all of ``env_vars``."""
        return self.env if self.env is not None else EnvVars(all_of=self.env_vars)


BUILTIN_PROVIDER_MODULES: tuple[str, ...] = (
    "voxbench.targets.local",
    "voxbench.targets.cascade",
    "voxbench.targets.openai_chat",
    "voxbench.targets.anthropic",
    "voxbench.targets.gemini",
    "voxbench.targets.bedrock",
    "voxbench.targets.realtime.providers",
    "voxbench.targets.agent.providers",
)
"""Modules that register the built-in target providers on import. They must not import
optional SDKs at module level: an SDK is imported when its provider's factory runs."""

ENTRY_POINT_GROUP = "voxbench.targets"

KNOWN_TARGET_OPTIONS = frozenset(
    {
        # routing and the audio-mode cascade around a text target
        "pipeline", "stt", "tts", "voice", "stt_base_url", "tts_base_url",
        # connection plumbing shared by the HTTP and websocket sessions
        "api_key", "api_version", "timeout", "connect_timeout", "region",
        # chat and completion requests (passed through to the provider's body)
        "temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens",
        "max_output_tokens", "seed", "reasoning_effort", "parallel_tool_calls", "tool_choice",
        "service_tier", "thinking", "thinking_config", "metadata", "extra_body", "stream",
        "include_usage",
        # realtime sessions
        "turn_detection", "output", "input_transcription", "transcript_grace",
        "automatic_activity_detection", "input_sample_rate", "output_sample_rate", "text_input",
        "resumption_handle", "renew_after", "endpointing_sensitivity",
        # agent targets (voxbench agent protocol, Twilio Media Streams, Pipecat bots)
        "turn_end_silence", "tool_timeout", "playback",
    }
)  # fmt: skip
"""Every option key some built-in target reads (a test keeps this list true to the code).
A provider that declares no ``options`` is checked against it: a key here may be ignored by
that provider, but a key outside it is certainly a mistake."""

_LOADED = False


def register_provider(provider: TargetProvider, aliases: dict[str, str] | None = None) -> None:
    """Add a target provider (and optional bare-name aliases for its targets)."""
    role = Role.REALTIME if provider.kind == "realtime" else Role.TARGET
    capability = Capability(
        provider.factory,
        description=provider.description,
        kind=provider.kind,
        default_model=provider.default_model,
        models=provider.models,
        options=provider.options,
    )
    one_registry.register(
        Provider(
            name=provider.name,
            description=provider.description,
            env=provider.requirement,
            roles={role: capability},
        ),
        aliases=aliases,
    )


def _ensure_loaded() -> None:
    # Providers register on import; importing them lazily keeps ``import voxbench`` light
    # and lets a provider's optional SDK be missing until it is chosen.
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    one_registry.ensure_loaded()
    for module in BUILTIN_PROVIDER_MODULES:
        importlib.import_module(module)
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def _view(provider: Provider) -> TargetProvider:
    role = next(r for r in TARGET_ROLES if r in provider.roles)
    capability = provider.roles[role]
    return TargetProvider(
        name=provider.name,
        factory=capability.factory,
        description=capability.description or provider.description,
        kind=capability.kind,
        env_vars=provider.env.names,
        default_model=capability.default_model,
        models=capability.models,
        env=provider.env,
        options=capability.options,
    )


def providers() -> list[TargetProvider]:
    """Every registered target provider, sorted by name."""
    _ensure_loaded()
    return [_view(p) for p in one_registry.providers_for(*TARGET_ROLES)]


def aliases() -> dict[str, str]:
    """Bare names and what they stand for."""
    _ensure_loaded()
    return one_registry.aliases()


def _resolve(name: str) -> tuple[TargetProvider, str]:
    _ensure_loaded()
    try:
        provider, parsed = one_registry.resolve_name(
            name, *TARGET_ROLES, field="target", allow_bare=True
        )
    except ConfigError:
        known = ", ".join(sorted([p.name for p in providers()] + list(aliases())))
        raise ConfigError(
            f"unknown target {name!r}",
            field="target",
            expected=f"provider/model with a provider among: {known}",
        ) from None
    return _view(provider), parsed.model


def resolve_target(
    name: str,
    *,
    benchmark: Benchmark | None = None,
    base_url: str | None = None,
    options: dict[str, Any] | None = None,
) -> Callable[[], Session]:
    """A zero-argument factory that opens a fresh ``Session`` of target ``name``.

    The runner calls it again to reconnect or resume, so each call must give a new session.
    """
    options = dict(options or {})
    name = route_target(name, options)  # openai/gpt-realtime → openai-realtime/gpt-realtime
    if _is_class_path(name):
        context = TargetContext(model=name, benchmark=benchmark, base_url=base_url, options=options)
        return _class_factory(name, context)
    provider, model = _resolve(name)
    context = TargetContext(model=model, benchmark=benchmark, base_url=base_url, options=options)
    return lambda: provider.factory(context)


def check_target_options(name: str, options: dict[str, Any]) -> None:
    """Refuse target option keys the target ``name`` does not read (a misspelt option)."""
    routed = route_target(name, dict(options))
    if _is_class_path(routed):
        return  # a user's own Session class: its options are its own business
    provider, model = _resolve(routed)
    accepted = provider.options if provider.options is not None else KNOWN_TARGET_OPTIONS
    unknown = sorted(set(options) - accepted)
    if unknown:
        target = f"{provider.name}/{model}" if model else provider.name
        raise ConfigError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"for target {target}",
            field=f"target_options.{unknown[0]}",
            expected=", ".join(sorted(accepted)) or "no options",
        )


def canonical_name(name: str) -> str:
    """The ``provider/model`` spelling of a target name."""
    if _is_class_path(name):
        return name
    provider, model = _resolve(name)
    return f"{provider.name}/{model}" if model else provider.name


def target_provider(name: str) -> str:
    """The provider part of a target name (``cascade`` for ``cascade/openai/gpt-4o-mini``): the
    key of per-provider limits; a class-path plug-in is its own provider."""
    if _is_class_path(name):
        return name
    return _resolve(name)[0].name


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE_COLON_CLASS = re.compile(rf"({_IDENTIFIER}(?:\.{_IDENTIFIER})*):({_IDENTIFIER})")
_DOTTED_CLASS = re.compile(rf"({_IDENTIFIER}(?:\.{_IDENTIFIER})+)\.({_IDENTIFIER})")
CLASS_PATH_FORM = "module:Class or package.module:Class, with the module on the Python path"


def _class_path_parts(name: str) -> tuple[str, str] | None:
    """``(module, class)`` when ``name`` is a class path, else None.

    Never a ``provider/model`` name, whose model part may hold dots and colons
    (``bedrock/anthropic.claude-…-v1:0``, ``ollama/x:3b``); ``provider:model`` (the alias
    spelling) wins over ``module:Class`` when the module part names a provider or alias."""
    if "/" in name:
        return None
    if match := _MODULE_COLON_CLASS.fullmatch(name):
        module = match.group(1)
        if "." not in module and module in _known_names():
            return None
        return module, match.group(2)
    if match := _DOTTED_CLASS.fullmatch(name):
        return match.group(1), match.group(2)
    return None


def _known_names() -> set[str]:
    _ensure_loaded()
    return {p.name for p in one_registry.providers_for(*TARGET_ROLES)} | set(aliases())


def _is_class_path(name: str) -> bool:
    return _class_path_parts(name) is not None


def _import_class(path: str) -> type[Session]:
    """The ``Session`` subclass at ``path``, or a ``ConfigError`` saying what is wrong."""
    parts = _class_path_parts(path)
    assert parts is not None
    module_name, attr = parts
    try:
        module = _import_user_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            known = ", ".join(sorted(_known_names()))
            raise ConfigError(
                f"cannot import target class {path!r}: no module named {exc.name!r}",
                field="target",
                expected=f"{CLASS_PATH_FORM} (PYTHONPATH or an installed package), "
                f"or provider/model with a provider among: {known}",
            ) from None
        raise _import_failed(path, exc) from exc
    except Exception as exc:  # the user's module failed while importing: say where
        raise _import_failed(path, exc) from exc
    cls = getattr(module, attr, None)
    if cls is None:
        raise ConfigError(
            f"module {module_name!r} has no {attr!r}",
            field="target",
            expected=f"a Session class defined in {module_name}",
        )
    if not (isinstance(cls, type) and issubclass(cls, Session)):
        what = f"the class {cls.__name__}" if isinstance(cls, type) else type(cls).__name__
        raise ConfigError(
            f"{path!r} is {what}, not a voxbench Session",
            field="target",
            expected="a subclass of voxbench.core.session.Session "
            "(voxbench.targets.inprocess.InProcessSession for an agent written in Python)",
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise ConfigError(
            f"{path!r} does not implement {missing}",
            field="target",
            expected="a Session class that implements every abstract method",
        )
    return cls


def _import_user_module(module_name: str) -> Any:
    """Import a user's module; failing that, from the working directory too.

    ``python -m voxbench`` puts the working directory on ``sys.path``, the installed
    ``voxbench`` command does not (its own folder comes first instead), so ``-t agent:Agent``
    next to ``agent.py`` found nothing. The directory is appended, never prepended: an
    installed module of the same name still wins."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.partition(".")[0]
        cwd = os.getcwd()
        if exc.name != top or cwd in sys.path or "" in sys.path:
            raise
        if not (Path(cwd, top).is_dir() or Path(cwd, f"{top}.py").is_file()):
            raise
        sys.path.append(cwd)
        importlib.invalidate_caches()
        return importlib.import_module(module_name)


def _import_failed(path: str, exc: Exception) -> ConfigError:
    return ConfigError(
        f"importing target class {path!r} failed: {type(exc).__name__}: {exc}",
        field="target",
    )


def _constructor_args(cls: type[Session], path: str, context: TargetContext) -> tuple[Any, ...]:
    """``(context,)`` or ``()``: what ``cls``'s constructor takes."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # a constructor Python cannot describe: trust the docs
        return (context,)
    for args in ((context,), ()):
        try:
            signature.bind(*args)
        except TypeError:
            continue
        return args
    raise ConfigError(
        f"the constructor of {path!r} takes {signature}; voxbench builds a target with one "
        "argument, its TargetContext",
        field="target",
        expected="__init__(self, context: voxbench.targets.registry.TargetContext), "
        "or a constructor without arguments",
    )


def _class_factory(path: str, context: TargetContext) -> Callable[[], Session]:
    """A factory of sessions of the class at ``path``, checked now rather than mid-run."""
    cls = _import_class(path)
    args = _constructor_args(cls, path, context)

    def build() -> Session:
        try:
            session = cls(*args)
        except Exception as exc:  # the user's constructor: name it, never a bare traceback
            raise ConfigError(
                f"building target {path!r} failed: {type(exc).__name__}: {exc}",
                field="target",
            ) from exc
        info = getattr(session, "info", None)
        if info is None:  # not said: a text target named by its class path
            session.info = TargetInfo(name=path)
        elif not isinstance(info, TargetInfo):
            raise ConfigError(
                f"{path!r} set self.info to a {type(info).__name__}",
                field="target",
                expected="a voxbench.core.session.TargetInfo (InProcessSession sets it for you)",
            )
        return session

    return build
