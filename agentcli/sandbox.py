"""The one sandboxed Jinja2 environment of package templates (scripted rules, locales).

Jinja2's ``SandboxedEnvironment`` stops templates from reaching Python internals, but not
from building huge values: ``{{ user * 100000000 }}`` makes hundreds of MB before anything
is written. Here every way a template grows text is bounded by :data:`MAX_OUTPUT`
characters (16,000,000), checked *before* the value is built where the size is known in
advance (``*``, ``**``, ``%`` widths, ``join``, ``replace``, ``center``/``ljust``-style
padding) and on every intermediate result (operators, ``~``, calls, filters, namespace
attributes). :func:`render` streams a template and stops once its output passes the bound.
Breaking a bound raises jinja2's ``SecurityError`` (a ``TemplateError``); callers name the
template. ``range`` is capped by Jinja2 itself (100,000 items), but loops nest: two loops
over ``range(99999)`` with an empty body write nothing and run for hours on the thread that
renders, where no ``--timeout`` reaches. So every ``for`` iterates through a counter, and a
render whose loops run past :data:`RENDER_TIMEOUT` (2 s) stops with ``SecurityError`` too.

Jinja2 is imported on first use: it is slow to load.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from functools import cache, wraps
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jinja2 itself is imported on first use
    from jinja2 import Template, nodes
    from jinja2.compiler import Frame
    from jinja2.sandbox import SandboxedEnvironment

__all__ = ["MAX_OUTPUT", "RENDER_TIMEOUT", "environment", "render", "size_checked"]

MAX_OUTPUT = 16_000_000  # characters a template (or any value inside it) may grow to: room
# to echo a long input (a 1 MB case input is fair), none to build hundreds of MB

RENDER_TIMEOUT = 2.0  # seconds the loops of one render may run: honest templates need ms
_CLOCK_EVERY = 4096  # loop steps between looks at the clock (a look costs ~0.1 µs)


class _LoopBudget:
    """The loop steps of one render, and when they must end by."""

    __slots__ = ("deadline", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.deadline = time.monotonic() + RENDER_TIMEOUT


# The render under way (None outside render(): a loop then starts a budget of its own)
_BUDGET: ContextVar[_LoopBudget | None] = ContextVar("agentcli_template_budget", default=None)


def bounded_loop(iterable: Iterable[Any]) -> Iterator[Any]:
    """The items of a template's ``for``, counted against the render's time budget."""
    budget = _BUDGET.get() or _LoopBudget()
    for item in iterable:
        budget.steps += 1
        if not budget.steps % _CLOCK_EVERY and time.monotonic() > budget.deadline:
            from jinja2.exceptions import SecurityError

            raise SecurityError(
                f"the template's loops ran for longer than {RENDER_TIMEOUT:g}s "
                f"({budget.steps:,} steps): loop over less"
            )
        yield item


_PERCENT_WIDTH = re.compile(r"%[#0\- +]*(\d*)(?:\.(\d*))?")
_BRACE_WIDTH = re.compile(r"\{[^{}]*?:[^{}]*?(\d+)[^{}]*\}")
_WIDTH_FROM_ARGUMENT = re.compile(r"%[#0\- +]*\*|%[#0\- +]*\d*\.\*|\{[^{}]*:[^{}]*\{")
_PADDING = frozenset(("center", "ljust", "rjust", "zfill", "expandtabs"))


def _too_large(what: str, size: int, verb: str = "would be") -> Exception:
    from jinja2.exceptions import SecurityError

    return SecurityError(
        f"{what} {verb} {size:,} characters, over the template limit of {MAX_OUTPUT:,}"
    )


def _size(value: Any, budget: int = MAX_OUTPUT + 1) -> int:
    """The characters ``value`` stands for (strings, and containers of them), up to ``budget``."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, Mapping):
        items: Any = (part for pair in value.items() for part in pair)
    elif isinstance(value, list | tuple | set | frozenset):
        items = value
    else:
        return 1
    total = 0
    for item in items:
        total += _size(item, budget - total) + 1
        if total >= budget:
            break
    return total


def size_checked(value: Any, what: str = "a template value") -> Any:
    """``value`` unchanged, or SecurityError when it stands for more than MAX_OUTPUT characters."""
    size = _size(value)
    if size > MAX_OUTPUT:
        raise _too_large(what, size)
    return value


def _check_format(template: str, what: str, arguments: Any = ()) -> None:
    """Refuse ``%``/``{}`` format strings whose field widths (written, or taken from an
    argument: ``%*s``, ``{:{}}``) pass the bound."""
    if _WIDTH_FROM_ARGUMENT.search(template):
        values = arguments.values() if isinstance(arguments, Mapping) else arguments
        values = values if isinstance(values, list | tuple) else list(values)
        for value in values:
            if isinstance(value, int) and value > MAX_OUTPUT:
                raise _too_large(what, value)
    for found in (*_PERCENT_WIDTH.finditer(template), *_BRACE_WIDTH.finditer(template)):
        for digits in found.groups():
            if digits and (len(digits) > 7 or int(digits) > MAX_OUTPUT):
                raise _too_large(what, int(digits[:20]))


def _check_join(separator: Any, items: Any) -> list[Any] | tuple[Any, ...]:
    """``items`` as a list (a generator is read once, here: the join then takes the list),
    refused as soon as joining them with ``separator`` would pass the bound."""
    if isinstance(items, list | tuple):
        listed = items
        size = _size(items) + _size(separator) * max(len(items) - 1, 0)
    else:
        listed, size, gap = [], 0, _size(separator)
        for item in items:
            size += _size(item) + (gap if listed else 0)
            listed.append(item)
            if size > MAX_OUTPUT:
                break  # no need to read the rest to refuse it
    if size > MAX_OUTPUT:
        raise _too_large("join", size)
    return listed


def _check_replace(text: Any, old: Any, new: Any, count: Any = None) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        hits = text.count(old) if old else len(text) + 1
        if isinstance(count, int) and count >= 0:
            hits = min(hits, count)
        size = len(text) + hits * (len(new) - len(old))
        if size > MAX_OUTPUT:
            raise _too_large("replace", size)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``, ``**`` and ``%`` whose result is known to pass the bound."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(times, int) and not isinstance(seq, int | float):
                size = _size(seq) * max(times, 0)
                if size > MAX_OUTPUT:
                    raise _too_large("repetition", size)
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
        digits = right * abs(left).bit_length() * 30103 // 100000  # log10(2) ~ 0.30103
        if digits > MAX_OUTPUT:
            raise _too_large("power", digits)
    elif operator == "%" and isinstance(left, str):
        _check_format(left, "formatting", right if isinstance(right, tuple | Mapping) else (right,))


def _check_call(function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse the calls of string methods whose result is known to pass the bound; the
    arguments to call with (a join's items read into a list)."""
    function = getattr(function, "__wrapped__", function)  # the sandbox wraps str.format
    owner, name = getattr(function, "__self__", None), getattr(function, "__name__", "")
    if not isinstance(owner, str):
        return args
    if name in _PADDING:
        for width in (*args, *kwargs.values()):
            if isinstance(width, int) and width > MAX_OUTPUT:
                raise _too_large(name, width)
    elif name == "join" and args:
        args = (_check_join(owner, args[0]), *args[1:])
    elif name == "replace" and len(args) >= 2:
        _check_replace(owner, *args[:3])
    elif name == "format":
        _check_format(owner, name, (*args, *kwargs.values()))
    elif name == "format_map" and args:
        _check_format(owner, name, args[0])
    return args


def _guarded_filter(name: str, function: Any) -> Any:
    """A filter checked before (for the growing ones) and after it runs."""

    @wraps(function)  # keeps jinja's pass_context/pass_eval_context markers
    def guarded(*args: Any, **kwargs: Any) -> Any:
        values = [a for a in args if not _is_context(a)]
        if name == "join" and values:
            separator = values[1] if len(values) > 1 else kwargs.get("d", "")
            first = next(i for i, a in enumerate(args) if not _is_context(a))
            # the filter joins the items the check read (a generator is read only once)
            args = (*args[:first], _check_join(separator, values[0]), *args[first + 1 :])
        elif name == "replace" and len(values) >= 3:
            _check_replace(*values[:4])
        elif name == "format" and values:
            _check_format(str(values[0]), "format", (*values[1:], *kwargs.values()))
        elif name in ("center", "indent") and len(values) >= 2:
            _check_padding(name, values[0], values[1])
        return size_checked(function(*args, **kwargs), f"the {name} filter")

    return guarded


def _is_context(value: Any) -> bool:
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

    return isinstance(value, Context | EvalContext)


def _check_padding(name: str, text: Any, width: Any) -> None:
    if isinstance(width, str):  # indent("  ") indents by that string
        width = len(width) * (str(text).count("\n") + 1)
    elif isinstance(width, int) and name == "indent":
        width *= str(text).count("\n") + 1
    if isinstance(width, int) and width > MAX_OUTPUT:
        raise _too_large(name, width)


@cache
def environment() -> SandboxedEnvironment:
    """The shared bounded sandbox (autoescape off, trailing newlines kept)."""
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import SandboxedEnvironment
    from jinja2.utils import Namespace

    class BoundedCodeGenerator(CodeGenerator):
        """Routes ``a ~ b`` (not an interceptable operator) through the size check, and
        every loop's items through the time budget."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.loop_iterables: set[int] = set()  # ids of the for-nodes' iterables

        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
            self.write("environment.size_checked(")
            super().visit_Concat(node, frame)
            self.write(")")

        def visit_For(self, node: nodes.For, frame: Frame) -> None:
            self.loop_iterables.add(id(node.iter))
            super().visit_For(node, frame)

        def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
            # Jinja allows no node types of our own: a loop's iterable is wrapped as written
            if id(node) not in self.loop_iterables:
                return super().visit(node, *args, **kwargs)
            self.write("environment.bounded_loop(")
            super().visit(node, *args, **kwargs)
            self.write(")")
            return None

    class BoundedNamespace(Namespace):
        """``namespace()`` whose attributes, set in a loop, cannot grow past the bound."""

        def __setitem__(self, name: str, value: Any) -> None:
            super().__setitem__(name, size_checked(value, f"namespace attribute {name}"))

    class BoundedSandbox(SandboxedEnvironment):
        code_generator_class = BoundedCodeGenerator
        intercepted_binops = frozenset(("*", "+", "%", "**"))

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return size_checked(super().call_binop(context, operator, left, right))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            for value in (*args, *kwargs.values()):  # macro arguments included
                size_checked(value, "a call argument")
            args = _check_call(__obj, args, kwargs)
            return size_checked(super().call(__context, __obj, *args, **kwargs), "a call result")

    env = BoundedSandbox(autoescape=False, keep_trailing_newline=True)
    env.size_checked = size_checked  # type: ignore[attr-defined]  # for BoundedCodeGenerator
    env.bounded_loop = bounded_loop  # type: ignore[attr-defined]  # for BoundedCodeGenerator
    env.globals["namespace"] = BoundedNamespace
    env.filters = {name: _guarded_filter(name, f) for name, f in env.filters.items()}
    return env


def render(template: Template, variables: Mapping[str, Any]) -> str:
    """``template`` rendered, stopping with SecurityError once the output passes the bound
    or its loops run past RENDER_TIMEOUT."""
    parts: list[str] = []
    written = 0
    token = _BUDGET.set(_LoopBudget())
    try:
        for part in template.generate(variables):
            written += len(part)
            if written > MAX_OUTPUT:
                raise _too_large("the output", written, verb="reached")
            parts.append(part)
    finally:
        _BUDGET.reset(token)
    return "".join(parts)
