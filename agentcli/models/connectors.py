"""Connector strings -> models: built-ins, ``connectors.yml`` aliases and litellm model strings.

Resolution order: ``echo``; ``scripted`` / ``scripted:<file>``; ``python:<module>:<function>``;
an alias of the first ``connectors.yml`` found (the current folder, else the folder holding
the assistants root, else ``~/.config/agentcli/``); a ``provider/model`` string as it is.

``openai/*`` models, and any connector with an ``api_base`` whose provider speaks the OpenAI
protocol, are served by ``OpenAICompatModel`` (aiohttp, or the ``openai`` SDK with
``transport: sdk``); every other provider by litellm. Both modules
are imported only when such a connector is resolved. A missing API key is reported here,
before any call, naming the variable to set — never the value of a key.

For a replay (``replay_only``: the model answers from cassettes and is never called) what
only reaches the provider may be unset — the key, ``api_base`` and the call options; the
connector is built without it and refuses any call (``ReplayOnlyModel``). ``model`` and
``price`` must still resolve: they decide the provider, the model and the cost the results
show (a cassette is keyed by the connector's name and the request, so none of these picks
the recording).
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from agentcli.datafiles import YamlLines, line_of, read_yaml_lines
from agentcli.errors import ConfigError, PackageError
from agentcli.models.base import Model
from agentcli.models.offline import EchoModel, FunctionModel, load_function
from agentcli.models.pricing import parse_price
from agentcli.secrets import register_secret

__all__ = [
    "CONNECTORS_FILE",
    "KEY_VARIABLES",
    "ConnectorConfig",
    "connector_label",
    "alias_targets",
    "CONNECTORS_VARIABLE",
    "find_connectors_files",
    "is_offline",
    "load_connectors_file",
    "resolve_connector",
]

KEY_VARIABLES: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "azure": "AZURE_API_KEY",
    "cohere": "COHERE_API_KEY",
}
"""The conventional API-key variable of each provider; providers not listed need none."""

# These speak their own protocol even behind a custom api_base, so litellm serves them.
_OWN_PROTOCOL = frozenset(
    {"anthropic", "azure", "azure_ai", "bedrock", "cohere", "gemini", "ollama", "ollama_chat"}
    | {"vertex_ai", "huggingface", "sagemaker"}
)
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_ENV_REF = re.compile(r"\$ENV\.([A-Za-z_][A-Za-z0-9_]*)")
_SECRET = re.compile(r"sk-[A-Za-z0-9_\-]{8,}")
_FIELDS = ("model", "api_base", "api_key")
# The options that shape a replay's results (its cost), so a replay resolves them too.
_RESULT_OPTIONS = frozenset({"price"})
# The keys agentcli reads itself; every other key is a call option passed to the provider.
_KNOWN_KEYS = (*_FIELDS, "timeout", "retry", "max_response_bytes", "price", "transport", "verify")
# A key this close to a known one is its typo, not a provider option (`api_bse` would
# otherwise be sent as an option while the request, with the key, goes to the default
# endpoint); the real options (`api_version`, `max_retries`, `stream_timeout`) stay below it.
_TYPO_CUTOFF = 0.8
# Other tools' names for a known key: sent on as an option, the setting would be unset (an
# OpenAI-compatible request, with its key, would go to api.openai.com instead).
_OTHER_NAMES = {"base_url": "api_base"}  # the openai SDK's name
CONNECTORS_FILE = "connectors.yml"
CONNECTORS_VARIABLE = "AGENT_CONNECTORS"  # a connectors file to use instead of searching


@dataclass(slots=True)
class ConnectorConfig:
    """One connector alias; string values may hold ``$ENV.NAME`` until it is resolved."""

    name: str
    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    options: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        """``connector 'x' (file:line)`` for messages."""
        place = f" ({self.source}:{self.line})" if self.source else ""
        return f"connector {self.name!r}{place}"


def load_connectors_file(path: Path) -> dict[str, ConnectorConfig]:
    """Parse ``connectors.yml``: ``alias: {model, api_base?, api_key?, ...options}`` or ``alias: model``."""
    try:
        data, lines = read_yaml_lines(path)
    except PackageError as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}:{line_of(lines, ())}: must be a mapping of connector names")
    configs: dict[str, ConnectorConfig] = {}
    for name, value in data.items():
        name = str(name)
        line = line_of(lines, (name,))
        if isinstance(value, str):
            value = {"model": value}
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"{path}:{line}: {name}: must be a mapping with a `model`, or a model string"
            )
        if not isinstance(value.get("model"), str) or not value["model"].strip():
            raise ConfigError(
                f"{path}:{line}: {name}.model: missing; give a litellm model string like "
                "openai/gpt-4o-mini"
            )
        _refuse_typos(path, lines, name, value)
        for key in ("api_base", "api_key"):
            if value.get(key) is not None and not isinstance(value[key], str):
                raise ConfigError(
                    f"{path}:{line_of(lines, (name, key))}: {name}.{key}: must be a string"
                )
        configs[name] = ConnectorConfig(
            name=name,
            model=value["model"].strip(),
            api_base=value.get("api_base"),
            api_key=value.get("api_key"),
            options={str(k): v for k, v in value.items() if k not in _FIELDS},
            source=path,
            line=line,
        )
    return configs


def _refuse_typos(path: Path, lines: YamlLines, name: str, value: Mapping[Any, Any]) -> None:
    """A ``ConfigError`` at the first key that is a near miss of a known connector key, or
    another tool's name for one (``base_url``)."""
    for key in value:
        if str(key) in _KNOWN_KEYS:
            continue
        close = difflib.get_close_matches(str(key).lower(), _KNOWN_KEYS, n=1, cutoff=_TYPO_CUTOFF)
        if str(key).lower() in _OTHER_NAMES:
            close = [_OTHER_NAMES[str(key).lower()]]
        if close:
            raise ConfigError(
                f"{path}:{line_of(lines, (name, key))}: {name}.{key}: unknown connector key "
                f"(did you mean {close[0]!r}?)",
                hint=f"the keys agentcli reads are {', '.join(_KNOWN_KEYS)}; a key not close "
                "to one of them is passed to the provider as a call option",
            )


def find_connectors_files(
    cwd: Path | None = None,
    assistants_root: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Path]:
    """The ``connectors.yml`` files that exist, in search order (the first one is used);
    ``$AGENT_CONNECTORS`` (set by a project's ``connectors:``) names the one to use."""
    named = (os.environ if env is None else env).get(CONNECTORS_VARIABLE)
    if named:
        path = ((cwd or Path.cwd()) / Path(named).expanduser()).absolute()
        if not path.is_file():
            raise ConfigError(
                f"{CONNECTORS_VARIABLE} {named}: no such connectors file",
                hint="point it (or connectors: in agentcli.yml) at a connectors.yml",
            )
        return [path]
    candidates = [(cwd or Path.cwd()) / CONNECTORS_FILE]
    if assistants_root is not None:
        candidates.append(assistants_root.parent / CONNECTORS_FILE)
    candidates.append(Path.home() / ".config" / "agentcli" / CONNECTORS_FILE)
    found: list[Path] = []
    for path in candidates:
        if path.is_file() and all(path.resolve() != p.resolve() for p in found):
            found.append(path)
    return found


def connector_label(spec: str) -> str:
    """The connector as reports show it: the spec string, with anything key-like masked."""
    return _SECRET.sub("sk-***", spec.strip())


def resolve_connector(
    spec: str,
    *,
    package_dir: Path | None = None,
    cwd: Path | None = None,
    assistants_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    replay_only: bool = False,
) -> Model:
    """Turn a connector string into a ready model; configuration problems raise ``ConfigError``.
    ``replay_only``: the model will only be replayed, so an unset variable of what merely
    reaches the provider is no error (see the module's text)."""
    spec = spec.strip()
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    if not spec:
        raise ConfigError("no connector given", hint="use -c echo, -c scripted or a model name")
    if spec == "echo":
        return EchoModel()
    if spec == "scripted" or spec.startswith("scripted:"):
        from agentcli.models.scripted import ScriptedModel

        return ScriptedModel.from_file(_scripted_file(spec, package_dir, cwd))
    if spec.startswith("python:"):
        return _function_model(spec, package_dir)
    files = find_connectors_files(cwd, assistants_root, env)
    aliases = load_connectors_file(files[0]) if files else {}
    if spec in aliases:
        config = aliases[spec]
        target = _expand(config.model, "model", config, env)
        if is_offline(target):
            # a Yao app's connector ids (`openai.mock: scripted`) run offline
            return resolve_connector(
                target, package_dir=package_dir, cwd=cwd, assistants_root=assistants_root, env=env
            )
        return _build(config, env, replay_only)
    if "/" in spec:
        return _build(ConnectorConfig(name=spec, model=spec), env, replay_only)
    raise _unknown(spec, aliases, files, cwd, assistants_root)


def is_offline(spec: str) -> bool:
    """Whether ``spec`` names a built-in offline model (echo, scripted, python:)."""
    return spec in ("echo", "scripted") or spec.startswith(("scripted:", "python:"))


def alias_targets(
    cwd: Path | None = None, assistants_root: Path | None = None
) -> tuple[Path | None, dict[str, str]]:
    """The ``connectors.yml`` in use and what each of its aliases names (its ``model``)."""
    files = find_connectors_files(cwd, assistants_root)
    if not files:
        return None, {}
    return files[0], {name: c.model for name, c in load_connectors_file(files[0]).items()}


def _scripted_file(spec: str, package_dir: Path | None, cwd: Path) -> Path:
    name = spec.partition(":")[2].strip()
    if spec == "scripted" or not name:
        bases, name = [package_dir or cwd], "scripted.yml"
    else:
        bases = [base for base in (package_dir, cwd) if base is not None]
    tried: list[str] = []
    escaped = False
    for base in bases:
        root = base.resolve()
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            escaped = True
        elif path.is_file():
            return path
        else:
            tried.append(str(path))
    if escaped and not tried:
        raise ConfigError(
            f"connector {spec!r}: {name} is outside the package and the current folder",
            hint="keep scripted rule files inside the assistant package (no ../ or absolute paths)",
        )
    raise ConfigError(
        f"connector {spec!r}: rule file not found (looked for {', '.join(tried)})",
        hint="create it with a `rules:` list, or pick another connector with -c",
    )


def _function_model(spec: str, package_dir: Path | None) -> FunctionModel:
    parts = spec.split(":")
    if len(parts) != 3 or not parts[1].strip() or not parts[2].strip():
        raise ConfigError(
            f"connector {spec!r}: expected python:<module>:<function>, e.g. python:models.fake:reply"
        )
    if package_dir is None:
        raise ConfigError(
            f"connector {spec!r} needs an assistant package: the module is looked up in its src/"
        )
    function = load_function(package_dir / "src", parts[1].strip(), parts[2].strip())
    return FunctionModel(function, name=spec)


def _expand(value: Any, key: str, config: ConnectorConfig, env: Mapping[str, str]) -> Any:
    """Substitute ``$ENV.NAME`` in every string of ``value``; unset -> ``ConfigError``."""
    if isinstance(value, Mapping):
        return {k: _expand(v, f"{key}.{k}", config, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, key, config, env) for v in value]
    if not isinstance(value, str):
        return value

    def substitute(found: re.Match[str]) -> str:
        variable = found.group(1)
        if variable not in env:
            raise ConfigError(
                f"{config.where}: {key} uses $ENV.{variable}, which is not set",
                hint=f"export {variable}=... or edit {config.source or 'the connector'}",
            )
        return env[variable]

    return _ENV_REF.sub(substitute, value)


def _unset(value: Any, env: Mapping[str, str]) -> str | None:
    """The first ``$ENV.NAME`` in ``value`` (its strings, nested) that is not set."""
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list):
        return next((n for n in (_unset(v, env) for v in value) if n is not None), None)
    if isinstance(value, str):
        return next((n for n in _ENV_REF.findall(value) if n not in env), None)
    return None


class _Unreached:
    """Under a replay, what a connector's fields that only reach the provider leave unset
    (each left out rather than filled with a stand-in); outside one, nothing is tolerated."""

    def __init__(self, config: ConnectorConfig, env: Mapping[str, str], replay_only: bool):
        self.config, self.env, self.replay_only = config, env, replay_only
        self.missing: list[str] = []

    def expand(self, value: Any, key: str) -> tuple[bool, Any]:
        """``(True, value expanded)``, or ``(False, None)`` when a replay leaves it out."""
        variable = _unset(value, self.env) if self.replay_only else None
        if variable is None:
            return True, _expand(value, key, self.config, self.env)
        self.missing.append(f"{key} uses $ENV.{variable}, which is not set")
        return False, None

    def need(self, what: str) -> bool:
        """Whether a missing ``what`` (an API key) is an error now: not under a replay."""
        if self.replay_only:
            self.missing.append(what)
        return not self.replay_only


def _api_key(
    config: ConnectorConfig, provider: str, api_base: str | None, unreached: _Unreached
) -> str | None:
    """The key to send, or None when the endpoint needs none (or a replay has none); a
    missing key is an error."""
    env = unreached.env
    if config.api_key is not None and config.api_key.strip().lower() != "none":
        found, key = unreached.expand(config.api_key.strip(), "api_key")
        if not found:
            return None
        if not key:
            raise ConfigError(f"{config.where}: api_key is empty", hint=f"check {config.source}")
        register_secret(key)  # a key written into connectors.yml is redacted like env keys
        return str(key)
    if config.api_key is not None or provider not in KEY_VARIABLES:
        return None
    variable = KEY_VARIABLES[provider]
    if env.get(variable):
        return env[variable]
    if api_base and (urlparse(api_base).hostname or "") in _LOOPBACK:
        return None  # a local server may need no key; the variable is used when it is set
    if not unreached.need(f"{variable} is not set"):
        return None
    raise ConfigError(
        f"{config.where} needs an API key: {variable} is not set",
        hint=f"export {variable}=<your key>, or add `api_key: $ENV.{variable}` to the "
        f"connector in {CONNECTORS_FILE}",
    )


def _build(config: ConnectorConfig, env: Mapping[str, str], replay_only: bool = False) -> Model:
    """Construct the network model of a connector (its client module imported only now);
    under a replay, one that refuses calls when what reaches the provider is unset."""
    unreached = _Unreached(config, env, replay_only)
    model = _expand(config.model, "model", config, env)
    found, api_base = unreached.expand(config.api_base, "api_base")
    api_base = _checked_api_base(api_base, config)
    given_base = api_base is not None or not found  # an unset one still says "not OpenAI's"
    options: dict[str, Any] = {}
    for name, value in config.options.items():
        if name in _RESULT_OPTIONS:
            options[name] = _expand(value, f"options.{name}", config, env)
        else:
            found, value = unreached.expand(value, f"options.{name}")
            if found:
                options[name] = value
    provider = model.partition("/")[0] if "/" in model else ""
    openai_sdk = provider == "openai" or (given_base and provider not in _OWN_PROTOCOL)
    kwargs: dict[str, Any] = {
        "api_base": api_base,
        "api_key": _api_key(
            config, provider or ("openai" if openai_sdk else ""), api_base, unreached
        ),
    }
    built = _construct(config, model, options, kwargs, openai_sdk)
    if unreached.missing:
        from agentcli.models.replay_only import ReplayOnlyModel

        return ReplayOnlyModel(built, f"{config.where}: {'; '.join(unreached.missing)}")
    return built


def _construct(
    config: ConnectorConfig,
    model: str,
    options: dict[str, Any],
    kwargs: dict[str, Any],
    openai_sdk: bool,
) -> Model:
    """The client model itself, from the connector's resolved fields."""
    prefix, slash, bare = model.partition("/")
    provider = prefix if slash else ""
    if "timeout" in options:
        kwargs["timeout"] = _timeout(options.pop("timeout"), config)
    if "retry" in options:
        kwargs["retry"] = _retry_policy(options.pop("retry"), config)
    if "max_response_bytes" in options:
        kwargs["max_response_bytes"] = _max_bytes(options.pop("max_response_bytes"), config)
    if "price" in options:
        kwargs["price"] = parse_price(options.pop("price"), config.where)
    transport = options.pop("transport", None)
    verify = options.pop("verify", None)
    kwargs["extra"] = options
    if openai_sdk:
        from agentcli.models.openai_model import OpenAICompatModel

        if transport is not None:
            kwargs["transport"] = _transport(transport, config)
        if verify is not None:
            kwargs["verify"] = _verify(verify, config)
        return OpenAICompatModel(bare if slash else model, provider=provider or "openai", **kwargs)
    for option, value in (("transport", transport), ("verify", verify)):
        if value is not None:
            raise ConfigError(
                f"{config.where}: {option} applies to OpenAI-compatible connectors only",
                hint="remove it, or point the connector at an api_base",
            )
    from agentcli.models.litellm_model import LiteLLMModel

    return LiteLLMModel(model, **kwargs)


def _transport(value: Any, config: ConnectorConfig) -> str:
    """A connector's ``transport``, checked here where the file and line are known;
    ``http``, its former name, still means the default."""
    from agentcli.models.transport import TRANSPORTS

    if value == "http":
        return "aiohttp"
    if value in TRANSPORTS:
        return str(value)
    removed = " (it was removed; aiohttp replaces it)" if value == "httpx" else ""
    raise ConfigError(
        f"{config.where}: unknown transport {value!r}{removed}",
        hint=f"use one of {', '.join(TRANSPORTS)} (or leave it out: aiohttp)",
    )


_VERIFY_WARNED: set[str] = set()


def _verify(value: object, config: ConnectorConfig) -> bool:
    """A connector's ``verify``: true or false; false warns once that certificates go
    unchecked."""
    if not isinstance(value, bool):
        raise ConfigError(
            f"{config.where}: verify must be true or false, got {value!r}",
            hint="verify: false turns off checking the server's TLS certificate",
        )
    if not value and config.where not in _VERIFY_WARNED:
        _VERIFY_WARNED.add(config.where)
        print(
            f"warning: {config.where}: verify: false, the server's TLS certificate is not "
            "checked (anyone on the path can read the API key); set SSL_CERT_FILE to its CA "
            "bundle instead",
            file=sys.stderr,
        )
    return value


def _checked_api_base(value: str | None, config: ConnectorConfig) -> str | None:
    """The ``api_base`` trimmed, or a clear error before any call when it is no http(s)
    URL (``localhost:8000/v1`` without its scheme is the usual slip)."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        parts = urlparse(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # a bad port, or an unbalanced "[" ("Invalid IPv6 URL")
        parts, port_ok = urlparse(""), False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        hint = (
            f"write http://{value}"
            if "://" not in value
            else "write it like http://127.0.0.1:8000/v1"
        )
        raise ConfigError(f"{config.where}: api_base {value!r} is not an http(s) URL", hint=hint)
    if parts.username or parts.password:
        # Named without the URL: it holds a password. No client sends these as the key.
        raise ConfigError(
            f"{config.where}: api_base carries credentials (user:password@), which are not sent",
            hint="put the key in api_key (e.g. api_key: $ENV.MY_KEY) and drop it from the URL",
        )
    return value


def _retry_policy(value: Any, config: ConnectorConfig) -> Any:
    """``retry: 3`` (attempts) or ``retry: {max_attempts, base_delay, max_delay, jitter}``."""
    from agentcli.models.retry import RetryPolicy

    if isinstance(value, int) and not isinstance(value, bool):
        value = {"max_attempts": value}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{config.where}: retry must be a number of attempts or a mapping")
    try:
        return RetryPolicy(**value)
    except (TypeError, ConfigError) as exc:
        raise ConfigError(f"{config.where}: retry: {exc}") from None


def _max_bytes(value: Any, config: ConnectorConfig) -> int:
    """A connector's ``max_response_bytes``: a whole number of bytes > 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"{config.where}: max_response_bytes must be a whole number of bytes > 0, "
            f"got {value!r}",
            hint="e.g. max_response_bytes: 67108864 (64 MB, the default)",
        )
    return value


def _timeout(value: Any, config: ConnectorConfig) -> float:
    """A connector's ``timeout``: a finite number of seconds > 0 (YAML's .inf and .nan
    would make every wait on the model unbounded)."""
    from agentcli.models.retry import seconds

    if isinstance(value, str) or not seconds(value):
        raise ConfigError(
            f"{config.where}: timeout must be a number of seconds > 0 (and finite), got {value!r}"
        )
    return float(value)


def _unknown(
    spec: str,
    aliases: dict[str, ConnectorConfig],
    files: list[Path],
    cwd: Path,
    assistants_root: Path | None,
) -> ConfigError:
    close = difflib.get_close_matches(spec, [*aliases, "echo", "scripted"], n=1)
    message = f"unknown connector {spec!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    if aliases:
        names = sorted(aliases)
        more = f" and {len(names) - 12} more" if len(names) > 12 else ""
        message += f"; aliases in {files[0]}: {', '.join(names[:12])}{more}"
    else:
        looked = [cwd / CONNECTORS_FILE]
        if assistants_root is not None:
            looked.append(assistants_root.parent / CONNECTORS_FILE)
        looked.append(Path.home() / ".config" / "agentcli" / CONNECTORS_FILE)
        shown = dict.fromkeys(map(str, looked))  # the folder above the root may be the cwd
        message += f"; no aliases defined (looked for {', '.join(shown)})"
    return ConfigError(
        message,
        hint="use echo, scripted, scripted:<file>, python:<module>:<function>, an alias from "
        f"{CONNECTORS_FILE}, or a litellm model string like openai/gpt-4o-mini",
    )
