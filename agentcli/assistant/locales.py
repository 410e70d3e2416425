"""Locales of an assistant package: ``locales/<code>.yml`` and ``{{ key }}`` templating.

Locale files are flattened to dotted keys (``chat.prompts.0``). Codes are normalised to
lowercase with ``-`` (``zh_CN`` -> ``zh-cn``); a regional file also serves its language
(``zh-cn.yml`` answers for ``zh`` when there is no ``zh.yml``; the first such file by name).

A key is looked up in: the exact code, its language, ``en-us``, ``en``; else the key itself
is the text. Only text containing ``{{`` is a template. Templates are parsed by Jinja2's
sandboxed environment and must consist of plain ``{{ key.path }}`` placeholders (``.0`` and
``['k']`` segments allowed): anything else (filters, calls, operators, literals, ``{% %}``
blocks, ``_private`` segments, ``self``) is a PackageError, so package strings can never run
code or loop. Keys that are not valid Jinja names (``my-key``) cannot be referenced, and a
message value is not itself rendered again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentcli.assistant.package import AssistantPackage, read_yaml
from agentcli.errors import PackageError
from agentcli.sandbox import environment, render

__all__ = ["Locales", "flatten", "load_locales", "localize_package", "normalize_locale"]

_FALLBACKS = ("en-us", "en")


def normalize_locale(code: str) -> str:
    """``zh_CN`` -> ``zh-cn``."""
    return code.strip().replace("_", "-").lower()


def _scalar(value: Any) -> str:
    """A YAML leaf as text (``true``/``false`` for booleans, ``""`` for null)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """Nested mappings and lists as ``{"a.b.0": "text"}``."""
    flat: dict[str, str] = {}
    if isinstance(data, dict):
        items = ((str(key), value) for key, value in data.items())
    elif isinstance(data, list):
        items = ((str(index), value) for index, value in enumerate(data))
    else:
        if prefix:
            flat[prefix] = _scalar(data)
        return flat
    for key, value in items:
        flat.update(flatten(value, f"{prefix}.{key}" if prefix else key))
    return flat


class _Key:
    """A key path inside a template; attribute and item access extend it, ``str`` looks it up."""

    __slots__ = ("_locale", "_locales", "_path")

    def __init__(self, locales: Locales, locale: str | None, path: str) -> None:
        self._locales = locales
        self._locale = locale
        self._path = path

    def __getitem__(self, segment: Any) -> _Key:
        return _Key(self._locales, self._locale, f"{self._path}.{segment}")

    def __str__(self) -> str:
        return self._locales.lookup(self._path, self._locale)


def _key_path(node: Any) -> str | None:
    """The dotted key of a ``{{ }}`` expression, or None if it is not a plain key path."""
    from jinja2 import nodes

    if isinstance(node, nodes.Name):
        # ``self`` is Jinja's reference to the template object itself.
        ok = node.ctx == "load" and node.name != "self" and not node.name.startswith("_")
        return node.name if ok else None
    if isinstance(node, nodes.Getattr):
        base, segment = _key_path(node.node), node.attr
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        value = node.arg.value
        if isinstance(value, bool) or not isinstance(value, int | str):
            return None
        base, segment = _key_path(node.node), str(value)
    else:
        return None
    if base is None or not segment or segment.startswith("_"):
        return None
    return f"{base}.{segment}"


@lru_cache(maxsize=1024)
def _compile(text: str) -> tuple[Any, tuple[str, ...]]:
    """Parse and check a template once; returns (template, top-level names).

    Raises ``ValueError`` with a reason for anything that is not text and key placeholders.
    """
    from jinja2 import TemplateSyntaxError, nodes

    env = environment()
    try:
        tree = env.parse(text)
    except TemplateSyntaxError as exc:
        raise ValueError(f"template syntax error on line {exc.lineno}: {exc.message}") from None
    names: list[str] = []
    for statement in tree.body:
        if not isinstance(statement, nodes.Output):
            raise ValueError(
                f"only {{{{ key }}}} placeholders are allowed, not {{% {type(statement).__name__.lower()} %}}"
            )
        for expression in statement.nodes:
            if isinstance(expression, nodes.TemplateData):
                continue
            path = _key_path(expression)
            if path is None:
                raise ValueError("only {{ key }} or {{ key.path }} placeholders are allowed")
            names.append(path.split(".", 1)[0])
    return env.from_string(tree), tuple(dict.fromkeys(names))


@dataclass(slots=True)
class Locales:
    """Flattened messages per normalised locale code, with fallback lookup and rendering."""

    messages: dict[str, dict[str, str]] = field(default_factory=dict)
    source: Path | None = None

    def chain(self, locale: str | None) -> list[str]:
        """The codes consulted for ``locale``, in order, limited to those present."""
        codes: list[str] = []
        if locale:
            code = normalize_locale(locale)
            codes += [code, code.split("-", 1)[0]]
        codes += _FALLBACKS
        return [c for c in dict.fromkeys(codes) if c in self.messages]

    def lookup(self, key: str, locale: str | None) -> str:
        """The text of ``key`` in ``locale`` (exact, language, en-us, en), else ``key`` itself."""
        for code in self.chain(locale):
            text = self.messages[code].get(key)
            if text is not None:
                return text
        return key

    def render(self, text: str, locale: str | None, *, key: str | None = None) -> str:
        """Replace ``{{ key }}`` placeholders in ``text``; ``key`` names the field in errors."""
        # Only text with a placeholder is a template: a stray "{%" or "{#" in plain prose
        # stays prose.
        if "{{" not in text:
            return text
        from jinja2 import TemplateError

        where = f" in '{key}'" if key else ""
        try:
            template, names = _compile(text)
            return render(template, {name: _Key(self, locale, name) for name in names})
        except (ValueError, TemplateError) as exc:
            raise PackageError(
                f"invalid template{where}: {exc}",
                path=str(self.source) if self.source else None,
                hint="write {{ key }} where key is a dotted path in locales/<code>.yml",
            ) from None


def locale_files(package: AssistantPackage) -> list[Path]:
    """The package's ``locales/*.yml`` (and ``.yaml``) files, sorted."""
    folder = package.path / "locales"
    if not folder.is_dir():
        return []
    return [
        file
        for file in sorted(folder.iterdir())
        if file.suffix in (".yml", ".yaml") and not file.name.startswith(".")
    ]


def _read_locale(file: Path) -> dict[str, Any]:
    """One locale file's mapping (``{}`` when empty)."""
    data = read_yaml(file)
    if data is not None and not isinstance(data, dict):
        raise PackageError(
            "a locale file must be a YAML mapping of keys to texts", path=str(file), line=1
        )
    return data or {}


def locale_file_problems(package: AssistantPackage) -> list[PackageError]:
    """The problem of each locale file that cannot be read (``agent list --check``)."""
    found = []
    for file in locale_files(package):
        try:
            _read_locale(file)
        except PackageError as error:
            found.append(error)
    return found


def load_locales(package: AssistantPackage) -> Locales:
    """The package's ``locales/*.yml`` files, flattened and keyed by normalised code."""
    messages: dict[str, dict[str, str]] = {}
    for file in locale_files(package):
        code = normalize_locale(file.stem)
        messages.setdefault(code, {}).update(flatten(_read_locale(file)))
    for code in sorted(messages):
        language = code.split("-", 1)[0]
        messages.setdefault(language, messages[code])
    return Locales(messages=messages, source=package.file)


def localize_package(
    package: AssistantPackage, locale: str | None, *, locales: Locales | None = None
) -> AssistantPackage:
    """A copy of ``package`` with name, description and placeholder rendered for ``locale``."""
    placeholder = package.placeholder or {}
    texts = [package.name, package.description, *placeholder.values()]
    if not any("{{" in str(text) for text in texts):
        return package
    locales = locales if locales is not None else load_locales(package)
    localized = dict(placeholder)
    for name in ("title", "description"):
        if isinstance(placeholder.get(name), str):
            localized[name] = locales.render(placeholder[name], locale, key=f"placeholder.{name}")
    if isinstance(placeholder.get("prompts"), list):
        localized["prompts"] = [
            locales.render(text, locale, key=f"placeholder.prompts.{index}")
            for index, text in enumerate(placeholder["prompts"])
        ]
    return dataclasses.replace(
        package,
        name=locales.render(package.name, locale, key="name"),
        description=locales.render(package.description, locale, key="description"),
        placeholder=localized if package.placeholder is not None else None,
    )
