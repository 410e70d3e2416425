"""The hostile corpus of issue 13: case files, results files and package files that people,
tools and adversaries produce, each a named entry that ``test_corpus.py`` runs through the
real CLI (load + run, every writer, report / extract / merge / --resume).

Size: 344 entries (191 case files, 61 results files, 92 packages; ``test_corpus_size``
keeps it >= 100 and of every kind), each run through 2 to 12 commands:

- **cases** — case files (.jsonl .json .yaml .yml) run by ``agent eval`` with every writer:
  catastrophic regexes (regex assertions, ``tool_result``/``tool_called`` ``regex:``,
  checkpoints, ``--run``); YAML alias bombs and duplicate keys; deep nesting; NUL bytes,
  300-byte names, FIFOs, links out of the project and huge files behind ``file://``; lone
  surrogates and control characters in ids, inputs and metadata; huge strings; a wrong type
  in every field of a case and of an assertion; invalid UTF-8, BOMs, UTF-16, empty and
  truncated files; hooks that raise, print (forged ``--json`` events), exit or sleep (the
  harness interrupts those); tools whose results cannot be written; ``-o`` onto the case
  file, onto a file that is not a results file, under a regular file, onto /dev/full.
- **results** — results files fed to ``agent report`` (every format), ``extract``,
  ``merge`` and ``eval --resume``: torn lines, a missing header or summary, a wrong type in
  every field of the header, a result, its trace and the summary; surrogates, deep nesting,
  huge values, duplicate and path-like ids, Yao's single-JSON shape gone wrong.
- **package** — assistant packages run by ``agent list --check`` and ``agent eval``:
  package.yao (JSONC) with a wrong type in every field, deep nesting, bad encodings;
  ``$ENV.UNSET`` in ``.mcp.yao`` ``command``/``arguments``; tool servers that do not start;
  missing and broken prompts, presets and locales; Jinja multiplication and loop bombs and
  catastrophic regexes in scripted rules; Create/Next hooks and python: models that raise,
  print, exit, sleep or return what cannot be written.

Every entry names the issue-13 item it probes (``item``; 0 = general robustness); where the
issue says an input must be refused (exit 2, naming the file and line, the variable, the
output), the entry's ``refuse`` says what the refusal must name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.test_results_files import HEADER, RESULTS, STABILITY, SUMMARY

from .project import REDOS_TEXT, STANDARD_CASES, Content, Fifo, Lazy, Link, Sparse

__all__ = ["ENTRIES", "Entry"]

WRITERS = (".jsonl", ".json", ".md", ".html", ".xml")
REDOS = "(a+)+$"


@dataclass(frozen=True, slots=True)
class Entry:
    """One hostile input and how to run it."""

    name: str
    kind: str  # "cases" | "results" | "package"
    item: int  # the issue-13 item it probes; 0 = general robustness
    why: str
    files: dict[str, Content]
    args: tuple[str, ...] = ()  # extra `agent eval` options
    writers: tuple[str, ...] = WRITERS  # one `agent eval -o out<suffix>` per writer
    output: str | None = None  # the -o path instead of out<suffix> (one run)
    protect: tuple[str, ...] = ()  # files no command may change
    interrupt_after: float | None = None  # SIGINT the run after this many seconds
    refuse: tuple[str, ...] = ()  # agent eval must refuse (exit 2), naming each of these
    cases_file: str = field(default="")  # set in __post_init__

    def __post_init__(self) -> None:
        if not self.cases_file:
            found = [f for f in self.files if f.startswith("cases.")]
            object.__setattr__(self, "cases_file", found[0] if found else "cases.jsonl")


def jsonl(*cases: Any) -> str:
    """A .jsonl case file (surrogates kept as JSON escapes, as a tool would write them)."""
    return "\n".join(json.dumps(c) for c in cases) + "\n"


def case(case_id: str = "c", text: str = "hello", **fields: Any) -> dict[str, Any]:
    """A case that loads and passes unless ``fields`` say otherwise."""
    return {"id": case_id, "input": text, **fields}


def nested(depth: int, leaf: Any = 1) -> Any:
    """``[[[...leaf...]]]`` ``depth`` deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def deep_text(depth: int) -> str:
    """The JSON text of ``depth`` nested arrays (too deep for a recursive parser)."""
    return "[" * depth + "]" * depth


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A YAML mapping ``bomb:`` whose aliases expand to ``width**levels`` leaves."""
    lines = ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"  l{level}: &l{level} [{refs}]")
    return "\n".join(lines)


# A wrong value of every JSON type and then some: what hand edits and buggy tools write.
# (Lone surrogates and catastrophic patterns have entries of their own: here they would
# hide every other problem behind theirs.)
WRONG = [
    None, True, False, 0, -1, 1e308, 10**30, "", "x", "\x00\x1b[2J",
    [], [1, "a"], {}, {"x": {"y": None}}, "{{ 7 * 7 }}", "$ENV.HOSTILE_UNSET",
]  # fmt: skip


def _case_entries() -> Iterator[Entry]:
    """Case files: every item class of issue 13 that a case file can carry."""
    c = "cases.jsonl"
    redos_case = case("redos", REDOS_TEXT, **{"assert": {"type": "regex", "value": REDOS}})
    yield Entry("regex-assert-catastrophic", "cases", 1, "(a+)+$ against a+! in a regex assertion",
                {c: jsonl(redos_case)})  # fmt: skip
    yield Entry("regex-assert-catastrophic-parallel", "cases", 1,
                "a catastrophic case beside passing ones under --parallel 2: the passed ones must be written",
                {c: jsonl(case("ok1"), redos_case, case("ok2"))}, args=("--parallel", "2"))  # fmt: skip
    yield Entry("regex-negated-catastrophic", "cases", 1, "a negated catastrophic regex assertion",
                {c: jsonl(case("neg", REDOS_TEXT, **{"assert": {"type": "regex", "value": REDOS, "negate": True}}))})  # fmt: skip
    yield Entry("regex-tool-result-catastrophic", "cases", 1, "tool_result `regex:` with backtracking",
                {c: jsonl(case("tr", "echo-tool " + REDOS_TEXT, **{"assert": {"type": "tool_result", "value": {"tool": "echo", "result": "regex:" + REDOS}}}))})  # fmt: skip
    yield Entry("regex-tool-called-args-catastrophic", "cases", 1, "tool_called argument `regex:` with backtracking",
                {c: jsonl(case("tc", "echo-tool " + REDOS_TEXT, **{"assert": {"type": "tool_called", "value": {"name": "echo", "arguments": {"text": "regex:" + REDOS}}}}))})  # fmt: skip
    yield Entry("regex-checkpoint-catastrophic", "cases", 1, "a dynamic case whose checkpoint regex backtracks",
                {c: jsonl({"id": "dyn", "input": REDOS_TEXT, "simulator": {"use": "simuser"}, "max_turns": 2,
                           "checkpoints": [{"id": "cp", "assert": {"type": "regex", "value": REDOS}}]})})  # fmt: skip
    yield Entry("regex-run-filter-catastrophic", "cases", 1, "--run (a+)+$ over ids made to backtrack",
                {c: jsonl(case(REDOS_TEXT), case("b" + REDOS_TEXT))}, args=("--run", REDOS))  # fmt: skip
    yield Entry("regex-json-path-value", "cases", 1, "json_path whose value is a catastrophic `regex:` string",
                {c: jsonl(case("jp", "json", **{"assert": {"type": "json_path", "path": "$.city", "value": "regex:" + REDOS}}))})  # fmt: skip

    bomb_yaml = "- id: bomb\n  input: hello\n  metadata:\n    bomb:\n" + alias_bomb().replace(
        "\n  ", "\n      "
    ).replace("  l0", "      l0", 1)
    yield Entry("yaml-alias-bomb-metadata", "cases", 4, "billion laughs in a case's metadata",
                {"cases.yaml": bomb_yaml}, refuse=("cases.yaml:",))  # fmt: skip
    yield Entry("yaml-alias-bomb-expected", "cases", 4, "billion laughs in `expected` (.yml)",
                {"cases.yml": "- id: bomb\n  input: hello\n  expected:\n" + alias_bomb().replace("  l", "    l")}, refuse=("cases.yml:",))  # fmt: skip
    yield Entry("yaml-alias-bomb-assert-value", "cases", 4, "billion laughs in an equals assertion's value",
                {"cases.yaml": "- id: bomb\n  input: hello\n  assert:\n    type: equals\n    value:\n" + alias_bomb().replace("  l", "      l")}, refuse=("cases.yaml:",))  # fmt: skip
    wide = "- &a {id: a, input: hello, metadata: {k: [" + ", ".join(["1"] * 50) + "]}}\n" + "".join(
        f"- {{id: w{i}, input: hello, metadata: {{x: &m{i} [*m{i - 1}, *m{i - 1}]}}}}\n".replace("*m-1, *m-1", "1, 1")
        for i in range(40))  # fmt: skip
    yield Entry("yaml-alias-doubling-chain", "cases", 4, "aliases doubling across 40 cases (2**40 leaves)",
                {"cases.yaml": wide}, refuse=("cases.yaml:",))  # fmt: skip
    yield Entry("yaml-duplicate-keys", "cases", 10, "the same key twice in a YAML case (silently last-wins)",
                {"cases.yaml": "- id: first\n  id: second\n  input: hello\n"}, refuse=("cases.yaml:",))  # fmt: skip
    yield Entry("yaml-duplicate-keys-nested", "cases", 10, "a duplicate key inside an assertion",
                {"cases.yml": "- id: d\n  input: hello\n  assert:\n    type: contains\n    value: echo\n    value: nope\n"}, refuse=("cases.yml:",))  # fmt: skip
    yield Entry("yaml-deep-nesting", "cases", 10, "100k nested flow sequences in YAML",
                {"cases.yaml": "- id: deep\n  input: hello\n  metadata: {x: " + "[" * 100_000 + "]" * 100_000 + "}\n"}, refuse=("cases.yaml:",))  # fmt: skip
    yield Entry("yaml-python-tag", "cases", 0, "a !!python/object tag the safe loader must refuse",
                {"cases.yaml": "- id: t\n  input: !!python/object/apply:os.system ['echo pwned']\n"})  # fmt: skip
    yield Entry("yaml-multiple-documents", "cases", 0, "two YAML documents in one case file",
                {"cases.yaml": "- id: a\n  input: hi\n---\n- id: b\n  input: hi\n"})  # fmt: skip
    yield Entry("yaml-scalar-root", "cases", 0, "a YAML case file that is one string",
                {"cases.yml": "just some text\n"})  # fmt: skip
    yield Entry("yaml-control-characters", "cases", 9, "control characters YAML refuses",
                {"cases.yaml": b"- id: c\x07\n  input: \x1b[31mred\x08\n"})  # fmt: skip
    yield Entry("yaml-surrogate-escape", "cases", 9, "a lone surrogate written as a YAML escape",
                {"cases.yaml": '- id: "s\\ud800"\n  input: "\\udfff"\n'})  # fmt: skip

    yield Entry("json-deep-nesting", "cases", 10, "`[` x 100k as a .json case file",
                {"cases.json": deep_text(100_000)}, refuse=("cases.json:1",))  # fmt: skip
    yield Entry("jsonl-deep-nesting-metadata", "cases", 10, "100k nested arrays in a .jsonl case's metadata",
                {c: '{"id": "deep", "input": "hi", "metadata": {"x": ' + deep_text(100_000) + "}}\n"}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("jsonl-nesting-just-loadable", "cases", 10, "metadata 900 deep: loads, then every writer must cope",
                {c: '{"id": "d900", "input": "hi", "metadata": {"x": ' + deep_text(900) + "}}\n"})  # fmt: skip
    yield Entry("jsonl-deep-expected", "cases", 10, "`expected` 900 deep: compared, then written",
                {c: jsonl(case("e900", expected=nested(900)))})  # fmt: skip
    yield Entry("jsonl-huge-int", "cases", 0, "a 5000-digit integer (past Python's int-string limit)",
                {c: '{"id": "n", "input": "hi", "metadata": {"n": ' + "9" * 5000 + "}}\n"})  # fmt: skip
    yield Entry("jsonl-nan-and-infinity", "cases", 0, "NaN / Infinity / -Infinity in a case",
                {c: '{"id": "n", "input": "hi", "expected": NaN, "metadata": {"i": Infinity, "j": -Infinity}}\n'})  # fmt: skip

    def part(source: str) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image", "source": source}],
        }

    yield Entry("file-nul-byte", "cases", 10, "a NUL byte in a file:// source",
                {c: jsonl(case("nul", part("file://img\x00.png")))}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-name-300-bytes", "cases", 10, "a file:// name of 300 bytes",
                {c: jsonl(case("long", part("file://" + "a" * 300 + ".png")))}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-path-too-long", "cases", 10, "a file:// path past PATH_MAX",
                {c: jsonl(case("deep", part("file://" + "a/" * 3000 + "x.png")))}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-fifo", "cases", 10, "file:// naming a FIFO (an open that never returns)",
                {c: jsonl(case("fifo", part("file://pipe.png"))), "pipe.png": Fifo()}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-link-out-of-project", "cases", 10, "file:// through a link to /etc/passwd",
                {c: jsonl(case("link", part("file://passwd.png"))), "passwd.png": Link("/etc/passwd")}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-link-loop", "cases", 10, "file:// through a symlink loop",
                {c: jsonl(case("loop", part("file://loop.png"))), "loop.png": Link("loop.png")}, refuse=("cases.jsonl:1",))  # fmt: skip
    yield Entry("file-directory", "cases", 10, "file:// naming a directory",
                {c: jsonl(case("dir", part("file://assistants")))})  # fmt: skip
    yield Entry("file-huge-sparse", "cases", 0, "file:// naming a 1 GiB file",
                {c: jsonl(case("big", part("file://big.png"))), "big.png": Sparse(1024**3)}, writers=(".jsonl",))  # fmt: skip
    yield Entry("file-percent-nul", "cases", 10, "a %00 and a surrogate in a file:// source",
                {c: jsonl(case("pct", part("file://img%00.png")), case("sur", part("file://\ud800.png")))}, refuse=("cases.jsonl:",))  # fmt: skip
    yield Entry("file-audio-and-file-parts", "cases", 10, "audio and file parts with NUL and overlong names",
                {c: jsonl(case("a", {"role": "user", "content": [{"type": "audio", "source": "file://a\x00.wav"}]}),
                          case("f", {"role": "user", "content": [{"type": "file", "source": "file://" + "é" * 200}]}))}, refuse=("cases.jsonl:1", "cases.jsonl:2"))  # fmt: skip

    for where, fields in [
        ("id", {"id": "lone-\ud800"}),
        ("input", {"input": "hi \udfff there"}),
        ("metadata", {"metadata": {"\ud800key": "\udbff"}}),
        ("expected", {"expected": "\ud800"}),
        ("assert", {"assert": {"type": "contains", "value": "\ud800"}}),
    ]:
        yield Entry(f"surrogate-in-{where}", "cases", 9, f"a lone surrogate (valid JSON) in the {where}",
                    {c: jsonl({**case("s"), **fields}, case("after"))})  # fmt: skip
    yield Entry("surrogate-everywhere-parallel", "cases", 9, "surrogates in id, input, metadata under --parallel 3",
                {c: jsonl(*(case(f"s{i}\ud800", f"\udc00{i}", metadata={"m": "\ud800"}) for i in range(6)))},
                args=("--parallel", "3"))  # fmt: skip
    yield Entry("control-chars-in-ids", "cases", 9, "NUL, ESC, CR, LF, bidi and BEL in ids and inputs",
                {c: jsonl(*(case(f"id{s}x", f"in{s}put") for s in ["\x00", "\x1b[2J\x1b[H", "\r", "\n", "\u202e", "\x07", "\x7f"]))})  # fmt: skip
    yield Entry("path-like-ids", "cases", 0, "ids that are paths, reserved names and dots",
                {c: jsonl(*(case(i) for i in ["../../../../tmp/hostile-escape", "/etc/x", "CON", ".", "..", "a/b\\c", "~root"]))})  # fmt: skip
    yield Entry("id-300-bytes", "cases", 0, "an id of 300 bytes (a file name too long for extract)",
                {c: jsonl(case("é" * 150), case("x" * 300))})  # fmt: skip
    yield Entry("huge-input-string", "cases", 0, "an input of 2 MB",
                {c: Lazy(lambda: jsonl(case("big", "x" * 2_000_000)))}, writers=(".jsonl", ".json", ".html"))  # fmt: skip
    yield Entry("huge-metadata", "cases", 0, "metadata with 50k keys",
                {c: Lazy(lambda: jsonl(case("meta", metadata={f"k{i}": i for i in range(50_000)})))}, writers=(".jsonl", ".json"))  # fmt: skip
    yield Entry("many-cases", "cases", 0, "1,000 cases in one file",
                {c: jsonl(*(case(f"c{i}") for i in range(1000)))}, writers=(".jsonl", ".json", ".xml"))  # fmt: skip
    yield Entry("duplicate-ids", "cases", 0, "the same id twice",
                {c: jsonl(case("same"), case("same"))})  # fmt: skip
    yield Entry("duplicate-json-keys", "cases", 0, "a duplicate key in a JSON case",
                {c: '{"id": "a", "id": "b", "input": "hi"}\n'})  # fmt: skip

    yield Entry("empty-file", "cases", 0, "an empty .jsonl", {c: ""})
    yield Entry("empty-json", "cases", 0, "an empty .json", {"cases.json": ""})
    yield Entry("empty-yaml", "cases", 0, "an empty .yaml", {"cases.yaml": ""})
    yield Entry(
        "only-comments", "cases", 0, "blank and // lines only", {c: "// nothing\n\n   \n// here\n"}
    )
    yield Entry(
        "bom", "cases", 0, "a UTF-8 BOM before the first case", {c: "\ufeff" + jsonl(case())}
    )
    yield Entry("bom-twice", "cases", 0, "a BOM on every line", {c: "".join("\ufeff" + json.dumps(case(f"b{i}")) + "\n" for i in range(2))})  # fmt: skip
    yield Entry(
        "utf16", "cases", 0, "a case file saved as UTF-16", {c: jsonl(case()).encode("utf-16")}
    )
    yield Entry("invalid-utf8", "cases", 0, "bytes that are not UTF-8 inside a string",
                {c: b'{"id": "x", "input": "caf\xe9 \xff\xfe"}\n'})  # fmt: skip
    yield Entry("invalid-utf8-yaml", "cases", 0, "bytes that are not UTF-8 in YAML", {"cases.yaml": b"- id: \xc3\x28\n  input: hi\n"})  # fmt: skip
    yield Entry("nul-bytes-in-file", "cases", 0, "raw NUL bytes between cases", {c: jsonl(case()) + "\x00\x00\n" + jsonl(case("d"))})  # fmt: skip
    yield Entry(
        "truncated-jsonl",
        "cases",
        0,
        "a case cut mid-line",
        {c: jsonl(case("a")) + '{"id": "b", "inp'},
    )
    yield Entry("truncated-json", "cases", 0, "a JSON array cut mid-item", {"cases.json": json.dumps([case("a"), case("b")])[:-12]})  # fmt: skip
    yield Entry("truncated-yaml", "cases", 0, "a YAML list cut inside a quoted string", {"cases.yaml": '- id: a\n  input: "hel'})  # fmt: skip
    yield Entry("crlf-and-cr", "cases", 0, "CRLF and bare CR line ends", {c: jsonl(case("a")).replace("\n", "\r\n") + json.dumps(case("b")) + "\r"})  # fmt: skip
    yield Entry(
        "json-scalar-root", "cases", 0, "a .json case file that is a number", {"cases.json": "42"}
    )
    yield Entry("json-array-of-scalars", "cases", 0, "an array of strings and nulls", {"cases.json": '["a", null, 1, [], true]'})  # fmt: skip
    yield Entry("jsonl-non-objects", "cases", 0, "lines that are arrays, strings and null", {c: '[1]\n"x"\nnull\n42\n'})  # fmt: skip
    yield Entry("one-line-garbage", "cases", 0, "a 10 MB line of garbage", {c: Lazy(lambda: "{" + "x" * 10_000_000 + "\n")}, writers=(".jsonl",))  # fmt: skip

    fields: dict[str, Any] = {
        "id": "id", "name": "name", "description": "description", "input": "input", "assert": "assert",
        "user": "user", "team": "team", "metadata": "metadata", "options": "options", "skip": "skip",
        "timeout": "timeout", "before": "before", "after": "after", "simulator": "simulator",
        "checkpoints": "checkpoints", "max_turns": "max_turns", "expected": "expected",
    }  # fmt: skip
    for name in fields:
        yield Entry(f"case-field-{name}-wrong-types", "cases", 0, f"every wrong type in the case field `{name}`",
                    {c: jsonl(*({**case(f"w{i}"), name: v} for i, v in enumerate(WRONG)))})  # fmt: skip
    for sub in ["connector", "mode", "metadata", "skip"]:
        yield Entry(f"case-options-{sub}-wrong-types", "cases", 0, f"every wrong type in options.{sub}",
                    {c: jsonl(*(case(f"w{i}", options={sub: v}) for i, v in enumerate(WRONG)))})  # fmt: skip
    for sub in ["use", "options"]:
        yield Entry(f"case-simulator-{sub}-wrong-types", "cases", 0, f"every wrong type in simulator.{sub}",
                    {c: jsonl(*(case(f"w{i}", simulator={sub: v}, checkpoints=[{"id": "a", "assert": "is_json"}]) for i, v in enumerate(WRONG)))})  # fmt: skip
    for sub in ["id", "assert", "after", "required", "description"]:
        yield Entry(f"case-checkpoint-{sub}-wrong-types", "cases", 0, f"every wrong type in checkpoints[].{sub}",
                    {c: jsonl(*(case(f"w{i}", simulator={"use": "simuser"}, max_turns=1,
                                     checkpoints=[{"id": "a", "assert": {"type": "contains", "value": "a"}, sub: v}]) for i, v in enumerate(WRONG)))})  # fmt: skip
    for key in ["type", "value", "path", "script", "use", "options", "message", "negate"]:
        yield Entry(f"assert-key-{key}-wrong-types", "cases", 0, f"every wrong type in an assertion's `{key}`",
                    {c: jsonl(*(case(f"w{i}", **{"assert": {"type": "contains", "value": "echo", key: v}}) for i, v in enumerate(WRONG)))})  # fmt: skip
    for kind in ["contains", "not_contains", "icontains", "contains_any", "contains_all", "starts_with", "regex",
                 "equals", "json_path", "type", "is_json", "tool_called", "tool_result", "agent", "script",
                 "latency", "cost", "tokens"]:  # fmt: skip
        # One file per assertion type; each wrong value on its own line so every problem is listed.
        yield Entry(f"assert-{kind}-wrong-values", "cases", 0, f"every wrong value for a `{kind}` assertion",
                    {c: jsonl(*(case(f"w{i}", **{"assert": {"type": kind, "value": v, "path": "$.a", "use": "agents:simuser", "script": "env_test.Before"}}) for i, v in enumerate(WRONG)))})  # fmt: skip
        # The same values one at a time, run: whatever loads must be evaluated and written.
        yield Entry(f"assert-{kind}-odd-values-run", "cases", 0, f"odd but loadable `{kind}` values, run and written",
                    {c: jsonl(*(case(f"o{i}", "json", **{"assert": {"type": kind, "value": v}}) for i, v in enumerate([0, "", [], {}, 1e308, "x" * 100_000])))},
                    writers=(".jsonl", ".json"))  # fmt: skip

    for ref, item, why in [
        ("BeforeRaise", 0, "a Before hook that raises"),
        ("BeforeExit", 0, "a Before hook that calls sys.exit(3)"),
        ("BeforeExitNone", 0, "a Before hook that raises a bare SystemExit"),
        ("BeforePrintForged", 12, "a Before hook that prints a forged test_result event"),
        ("BeforePrintPartial", 12, "a Before hook that writes half a line to stdout"),
        ("BeforePrintSurrogate", 9, "a Before hook that prints a lone surrogate"),
        ("BeforeSubprocessPrints", 12, "a Before hook whose child process writes to fd 1"),
        ("BeforePrintHuge", 12, "a Before hook that prints 5 MB to stdout and to stderr"),
        ("BeforeUnserializable", 0, "a Before hook returning objects JSON cannot write"),
        ("BeforeRecursive", 0, "a Before hook returning a dict that contains itself"),
        ("AfterRaise", 0, "an After hook that raises"),
        ("AfterExit", 0, "an After hook that calls sys.exit(0)"),
        ("AfterMutates", 6, "an After hook that rewrites the result it is shown"),
    ]:
        field_name = "before" if ref.startswith("Before") else "after"
        yield Entry(f"hook-{ref}", "cases", item, why,
                    {c: jsonl(case("first"), case("hooked", **{field_name: f"env_test.{ref}"}), case("last"))},
                    writers=(".jsonl", ".json"))  # fmt: skip
    for ref, item, why in [
        ("BeforeAllPrint", 12, "a BeforeAll hook that prints a forged event"),
        ("BeforeAllExit", 0, "a BeforeAll hook that calls sys.exit(5)"),
        ("BeforeAllMutates", 6, "a BeforeAll hook that empties the case list it is shown"),
        ("AfterAllRaise", 0, "an AfterAll hook that raises"),
        ("AfterAllExit", 6, "an AfterAll hook that calls sys.exit(6) after every result"),
        ("AfterAllPrint", 12, "an AfterAll hook that prints a forged event"),
    ]:
        flag = "--before-all" if ref.startswith("BeforeAll") else "--after-all"
        yield Entry(f"hook-{ref}", "cases", item, why, {c: jsonl(case("a"), case("b"))},
                    args=(flag, f"env_test.{ref}"), writers=(".jsonl", ".json"))  # fmt: skip
    for ref, flag in [("BeforeSleep", "before"), ("AfterSleep", "after"), ("BeforeAllSleep", "--before-all"),
                      ("AfterAllSleep", "--after-all")]:  # fmt: skip
        cases = jsonl(
            case("done"),
            case("hooked", **({flag: f"env_test.{ref}"} if not flag.startswith("-") else {})),
        )
        args = (flag, f"env_test.{ref}") if flag.startswith("-") else ()
        yield Entry(f"hook-{ref}-interrupted", "cases", 3, f"SIGINT while {ref} blocks in time.sleep(60)",
                    {c: cases}, args=args, writers=(".jsonl",), interrupt_after=1.5)  # fmt: skip
    yield Entry("tool-sleep-interrupted", "cases", 3, "SIGINT while a sync tool blocks in time.sleep(60)",
                {c: jsonl(case("done"), case("blocked", "tool sleep"))}, writers=(".jsonl",), interrupt_after=1.5)  # fmt: skip
    yield Entry("tool-sleep-timeout", "cases", 3, "a sync tool blocking past --timeout 1s",
                {c: jsonl(case("blocked", "tool sleep"), case("after"))}, args=("--timeout", "1s"), writers=(".jsonl",))  # fmt: skip

    for tool, item in [("recursive", 9), ("bytes", 9), ("hugeint", 9), ("nan", 9), ("object", 9), ("surrogate", 9),
                       ("huge", 5), ("print", 12), ("exit", 0), ("raise", 0)]:  # fmt: skip
        yield Entry(f"tool-returns-{tool}", "cases", item, f"a process tool that does `{tool}`",
                    {c: jsonl(case("before"), case(tool, f"tool {tool}"), case("after"))},
                    writers=(".jsonl", ".json", ".html") if tool != "huge" else (".jsonl",))  # fmt: skip

    notes = "# My notes\n\nNot a results file.\n"
    yield Entry("output-is-the-case-file", "cases", 7, "-o naming the case file being read",
                {c: jsonl(case("a"), case("b"))}, output=c, refuse=(c,))  # fmt: skip
    yield Entry("output-is-a-link-to-the-case-file", "cases", 7, "-o naming a link to the case file",
                {c: jsonl(case("a")), "out.jsonl": Link(c)}, output="out.jsonl", refuse=("out.jsonl",))  # fmt: skip
    yield Entry("output-over-a-non-results-file", "cases", 7, "-o onto an existing file that is not a results file",
                {c: jsonl(case("a")), "notes.md": notes}, output="notes.md", protect=("notes.md",), refuse=("notes.md",))  # fmt: skip
    yield Entry("output-over-a-foreign-jsonl", "cases", 7, "-o onto a .jsonl that is someone's data",
                {c: jsonl(case("a")), "data.jsonl": '{"user": 1}\n{"user": 2}\n'}, output="data.jsonl", protect=("data.jsonl",), refuse=("data.jsonl",))  # fmt: skip
    for suffix in WRITERS:
        yield Entry(f"output-under-a-file{suffix}", "cases", 8, f"-o blocker/out{suffix} where blocker is a file",
                    {c: jsonl(case("a")), "blocker": "a file\n"}, output=f"blocker/out{suffix}", refuse=("blocker",))  # fmt: skip
        yield Entry(f"output-disk-full{suffix}", "cases", 8, f"-o full{suffix}, a link to /dev/full (every write fails: no space)",
                    {c: jsonl(case("a"), case("b")), f"full{suffix}": Link("/dev/full")}, output=f"full{suffix}")  # fmt: skip
    yield Entry("output-is-a-directory", "cases", 8, "-o naming an existing directory",
                {c: jsonl(case("a")), "outdir.jsonl/keep": ""}, output="outdir.jsonl", refuse=("outdir.jsonl",))  # fmt: skip
    yield Entry("output-unknown-extension", "cases", 8, "-o with an extension no writer has",
                {c: jsonl(case("a"))}, output="out.docx", refuse=("out.docx",))  # fmt: skip


RESULT = {"type": "result", **RESULTS[0]}
FIELDS_OF_RESULT = [
    "id", "status", "input", "output", "expected", "duration_ms", "error", "assertions", "trace",
    "metadata", "attempts", "run", "turns", "checkpoints", "logs",
]  # fmt: skip
FIELDS_OF_TRACE = ["completion", "tool_calls", "next", "usage", "retries"]
FIELDS_OF_TOOL_CALL = ["id", "server", "tool", "arguments", "result", "error"]


def lines(*records: Any, raw_tail: str = "") -> str:
    """A results JSON Lines file of ``records`` (and a raw, possibly torn, last line)."""
    return "\n".join(json.dumps(r) for r in records) + "\n" + raw_tail


def standard(*results: dict[str, Any]) -> str:
    """Header, ``results``, the stability line and the summary."""
    return lines(HEADER, *results, STABILITY, SUMMARY)


def with_trace(record: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``record`` whose ``trace[key]`` is ``value``."""
    return {**record, "trace": {**record["trace"], key: value}}


def _result_entries() -> Iterator[Entry]:
    """Results files: read back by report, extract, merge and --resume."""
    r = "results.jsonl"
    good = standard(*({"type": "result", **x} for x in RESULTS))
    yield Entry("results-valid-control", "results", 0, "the undamaged seed (a control)", {r: good})
    yield Entry(
        "results-torn-last-line",
        "results",
        6,
        "a run killed mid-write",
        {r: good.rstrip("\n")[:-25]},
    )
    yield Entry("results-torn-middle-line", "results", 6, "a damaged line in the middle",
                {r: lines(HEADER, RESULT, raw_tail="") + '{"type": "result", "id": "x", "sta\n' + json.dumps(SUMMARY)})  # fmt: skip
    yield Entry(
        "results-no-header",
        "results",
        0,
        "results and a summary, no header",
        {r: lines(RESULT, SUMMARY)},
    )
    yield Entry(
        "results-header-only", "results", 6, "a run that wrote only its header", {r: lines(HEADER)}
    )
    yield Entry("results-summary-only", "results", 0, "only a summary line", {r: lines(SUMMARY)})
    yield Entry(
        "results-no-summary",
        "results",
        6,
        "an interrupted run: no summary",
        {r: lines(HEADER, RESULT)},
    )
    yield Entry("results-empty", "results", 0, "an empty results file", {r: ""})
    yield Entry("results-whitespace", "results", 0, "blank lines only", {r: "\n \n\t\n"})
    yield Entry("results-bom", "results", 0, "a BOM before the header", {r: "\ufeff" + good})
    yield Entry("results-invalid-utf8", "results", 9, "a byte that is not UTF-8 in a result",
                {r: good.replace('"hi"', '"h\udcffi"', 1).encode("utf-8", "surrogateescape")})  # fmt: skip
    yield Entry(
        "results-utf16", "results", 0, "a results file saved as UTF-16", {r: good.encode("utf-16")}
    )
    yield Entry(
        "results-nul-bytes",
        "results",
        0,
        "NUL bytes inside and between lines",
        {r: good.replace("\n", "\n\x00", 2)},
    )
    yield Entry("results-crlf", "results", 0, "CRLF line ends", {r: good.replace("\n", "\r\n")})
    yield Entry("results-unknown-line-types", "results", 0, "lines typed null, a list, a number, unknown",
                {r: lines(HEADER, {"type": None}, {"type": ["result"]}, {"type": 5}, {"type": "nope"}, RESULT, SUMMARY)})  # fmt: skip
    yield Entry("results-non-object-lines", "results", 0, "lines that are arrays, strings, numbers",
                {r: lines(HEADER, [1], "x", 3, None, RESULT, SUMMARY)})  # fmt: skip
    yield Entry(
        "results-duplicate-ids", "results", 0, "the same id twice", {r: standard(RESULT, RESULT)}
    )
    yield Entry("results-missing-id", "results", 6, "results without an id",
                {r: standard({k: v for k, v in RESULT.items() if k != "id"}, {"type": "result", "status": "passed"})})  # fmt: skip
    yield Entry("results-surrogates", "results", 9, "lone surrogates in id, input, output, error, metadata",
                {r: standard({**RESULT, "id": "s\ud800", "input": "\udfff", "output": {"\ud800": "\udbff"},
                              "error": "\ud800", "metadata": {"k": "\udc00"}})})  # fmt: skip
    yield Entry("results-control-chars", "results", 9, "NUL, ESC, CR and bidi in ids and outputs",
                {r: standard(*({**RESULT, "id": f"c{s}{i}", "output": f"o{s}", "error": s} for i, s in enumerate(["\x00", "\x1b[2J", "\r\n", "\u202e", "\x07"])))})  # fmt: skip
    yield Entry("results-path-like-ids", "results", 0, "ids that would escape the extract folder",
                {r: standard(*({**RESULT, "id": i} for i in ["../../../../tmp/hostile-escape", "/etc/hostile", "..", ".", "CON", "a\x00b", "é" * 200, "x" * 300, ""]))})  # fmt: skip
    yield Entry("results-deep-output", "results", 10, "an output nested 100k deep",
                {r: lines(HEADER) + '{"type": "result", "id": "deep", "status": "passed", "output": ' + deep_text(100_000) + "}\n" + json.dumps(SUMMARY)})  # fmt: skip
    yield Entry("results-nesting-just-readable", "results", 10, "an output and metadata nested 900 deep",
                {r: standard({**RESULT, "output": nested(900), "metadata": {"m": nested(900)}})})  # fmt: skip
    yield Entry("results-huge-int", "results", 0, "a 5000-digit duration (past the int-string limit)",
                {r: lines(HEADER) + '{"type": "result", "id": "n", "status": "passed", "duration_ms": ' + "9" * 5000 + "}\n" + json.dumps(SUMMARY)})  # fmt: skip
    yield Entry("results-nan-infinity", "results", 0, "NaN and Infinity in durations, costs and the pass rate",
                {r: lines(HEADER) + '{"type": "result", "id": "n", "status": "passed", "duration_ms": NaN, "trace": {"usage": {"cost": Infinity}}}\n'
                    + json.dumps({**SUMMARY, "pass_rate": float("nan"), "duration_ms": float("inf")})})  # fmt: skip
    yield Entry(
        "results-huge-output",
        "results",
        0,
        "a 2 MB output",
        {r: Lazy(lambda: standard({**RESULT, "output": "x" * 2_000_000}))},
    )
    yield Entry("results-many", "results", 0, "3,000 results", {r: Lazy(lambda: standard(*({"type": "result", "id": f"r{i}", "status": "passed", "duration_ms": 1} for i in range(3000))))})  # fmt: skip
    yield Entry("results-statuses-unknown", "results", 0, "statuses unknown, empty, numeric, a list",
                {r: standard(*({**RESULT, "id": f"s{i}", "status": s} for i, s in enumerate(["PASSED", "", 5, ["passed"], None, {"x": 1}])))})  # fmt: skip
    thirds = [FIELDS_OF_RESULT[i::3] for i in range(3)]
    for n, names in enumerate(thirds, 1):
        yield Entry(f"results-fields-wrong-types-{n}", "results", 0, f"every wrong type in the result fields {', '.join(names)}",
                    {r: standard(*({**RESULT, "id": f"{k}-{i}", k: v} for k in names for i, v in enumerate(WRONG)))})  # fmt: skip
    yield Entry("results-trace-wrong-types", "results", 0, "every wrong type in every trace field, and as the trace",
                {r: standard(*(with_trace({**RESULT, "id": f"{k}-{i}"}, k, v) for k in FIELDS_OF_TRACE for i, v in enumerate(WRONG)),
                             *({**RESULT, "id": f"trace-{i}", "trace": v} for i, v in enumerate(WRONG)))})  # fmt: skip
    call = RESULT["trace"]["tool_calls"][0]
    yield Entry("results-tool-call-wrong-types", "results", 0, "every wrong type in every tool-call field, and as the call",
                {r: standard(*(with_trace({**RESULT, "id": f"{k}-{i}"}, "tool_calls", [{**call, k: v}]) for k in FIELDS_OF_TOOL_CALL for i, v in enumerate(WRONG)),
                             *(with_trace({**RESULT, "id": f"call-{i}"}, "tool_calls", [v]) for i, v in enumerate(WRONG)))})  # fmt: skip
    check = RESULT["assertions"][0]
    yield Entry("results-assertion-wrong-types", "results", 0, "every wrong type in every assertion field, and as the assertion",
                {r: standard(*({**RESULT, "id": f"{k}-{i}", "assertions": [{**check, k: v}]} for k in ["type", "passed", "message", "value", "expected", "actual", "verdict"] for i, v in enumerate(WRONG)),
                             *({**RESULT, "id": f"assertion-{i}", "assertions": [v]} for i, v in enumerate(WRONG)))})  # fmt: skip
    dynamic = {"type": "result", **RESULTS[1]}
    turn, point = dynamic["turns"][0], dynamic["checkpoints"][0]
    yield Entry("results-turn-wrong-types", "results", 0, "every wrong type in every field of a dynamic case's turns",
                {r: standard(*({**dynamic, "id": f"{k}-{i}", "turns": [{**turn, k: v}]} for k in turn for i, v in enumerate(WRONG)),
                             *({**dynamic, "id": f"turn-{i}", "turns": [v]} for i, v in enumerate(WRONG)))})  # fmt: skip
    yield Entry("results-checkpoint-wrong-types", "results", 0, "every wrong type in every field of a dynamic case's checkpoints",
                {r: standard(*({**dynamic, "id": f"{k}-{i}", "checkpoints": [{**point, k: v}]} for k in point for i, v in enumerate(WRONG)),
                             *({**dynamic, "id": f"checkpoint-{i}", "checkpoints": [v]} for i, v in enumerate(WRONG)))})  # fmt: skip
    yield Entry("results-stability-wrong-types", "results", 0, "every wrong type in every field of stability lines",
                {r: lines(HEADER, {"type": "result", **RESULTS[2]}, *({**STABILITY, k: v} for k in STABILITY if k != "type" for v in WRONG), SUMMARY)})  # fmt: skip
    for kind, v in [
        ("null", None),
        ("string", "x"),
        ("list", [1]),
        ("object", {"a": {}}),
        ("negative", -1),
        ("deep", nested(500)),
    ]:
        yield Entry(f"results-summary-all-{kind}", "results", 0, f"every summary field {kind}",
                    {r: lines(HEADER, RESULT, {**dict.fromkeys(SUMMARY, v), "type": "summary"})})  # fmt: skip
        environment = dict.fromkeys(["user_id", "team_id", "locale", "chat_id", "metadata"], v)
        metadata = dict.fromkeys(
            ["started_at", "completed_at", "version", "input_file", "options"], v
        )
        yield Entry(f"results-header-all-{kind}", "results", 0, f"every header field {kind}",
                    {r: lines({"type": "header", "environment": environment, "metadata": metadata}, RESULT, SUMMARY)})  # fmt: skip
    yield Entry("results-header-sections-wrong", "results", 0, "the header's environment and metadata as a string and a list",
                {r: lines({"type": "header", "environment": "x", "metadata": [1]}, RESULT, SUMMARY)})  # fmt: skip

    doc = {"summary": SUMMARY, "environment": HEADER["environment"], "results": RESULTS,
           "stability_results": [STABILITY], "metadata": HEADER["metadata"]}  # fmt: skip
    j = "results.json"
    yield Entry(
        "report-json-valid-control",
        "results",
        0,
        "a single-JSON report (a control)",
        {j: json.dumps(doc)},
    )
    for key, v in [("results", {"a": 1}), ("results", "x"), ("summary", [1]), ("stability_results", 5),
                   ("results", [1, "x", None, {"id": 5}]), ("environment", "x"), ("metadata", [None])]:  # fmt: skip
        yield Entry(f"report-json-{key}-{type(v).__name__}", "results", 0, f"a JSON report whose {key} is {type(v).__name__}",
                    {j: json.dumps({**doc, key: v})})  # fmt: skip
    yield Entry(
        "report-json-top-level-array",
        "results",
        0,
        "a JSON report that is an array",
        {j: json.dumps([doc])},
    )
    yield Entry(
        "report-json-scalar", "results", 0, "a JSON 'report' that is a string", {j: '"results"'}
    )
    yield Entry(
        "report-json-deep",
        "results",
        10,
        "a JSON report nested 100k deep",
        {j: '{"results": ' + deep_text(100_000) + "}"},
    )


def _package_entries() -> Iterator[Entry]:
    """Packages: package.yao, tool servers, prompts, locales, rules, hooks, python: models."""
    p = "assistants/hostile/"
    cases = {"cases.jsonl": STANDARD_CASES}
    yao = p + "package.yao"

    def pkg(name: str, item: int, why: str, files: dict[str, Content], **kwargs: Any) -> Entry:
        return Entry(
            name,
            "package",
            item,
            why,
            {**cases, **files},
            writers=kwargs.pop("writers", (".jsonl", ".json")),
            **kwargs,
        )

    yield pkg("package-control", 0, "the undamaged package (a control)", {})
    yield pkg(
        "package-yao-garbage",
        0,
        "package.yao that is not JSON",
        {yao: "{name: Hostile, connector: [scripted"},
    )
    yield pkg("package-yao-empty", 0, "an empty package.yao", {yao: ""})
    yield pkg("package-yao-bom-comments-commas", 0, "BOM, comments and trailing commas (valid JSONC)",
              {yao: '\ufeff// c\n{"name": "Hostile", /* x */ "connector": "scripted",}\n'})  # fmt: skip
    yield pkg("package-yao-invalid-utf8", 0, "package.yao with bytes that are not UTF-8", {yao: b'{"name": "Ho\xffstile", "connector": "scripted"}'})  # fmt: skip
    yield pkg(
        "package-yao-nul",
        0,
        "a NUL byte in package.yao",
        {yao: '{"name": "Ho\x00stile", "connector": "scripted"}'},
    )
    yield pkg("package-yao-utf16", 0, "package.yao saved as UTF-16", {yao: '{"name": "Hostile", "connector": "scripted"}'.encode("utf-16")})  # fmt: skip
    yield pkg("package-yao-deep", 10, "package.yao nested 100k deep", {yao: '{"name": "H", "connector": "scripted", "options": ' + deep_text(100_000) + "}"})  # fmt: skip
    yield pkg("package-yao-array", 0, "package.yao that is an array", {yao: "[1, 2]"})
    yield pkg("package-yao-surrogate-name", 9, "a lone surrogate in the package name",
              {yao: '{"name": "Ho\\ud800stile", "description": "\\udfff", "connector": "scripted"}'})  # fmt: skip
    yield pkg("package-yao-huge-name", 0, "a 5 MB package name", {yao: Lazy(lambda: json.dumps({"name": "H" * 5_000_000, "connector": "scripted"}))})  # fmt: skip
    yield pkg("package-yao-unset-env-connector", 0, "$ENV.HOSTILE_UNSET as the connector",
              {yao: '{"name": "Hostile", "connector": "$ENV.HOSTILE_UNSET"}'})  # fmt: skip
    yield pkg("package-yao-jinja-bomb", 5, "a Jinja multiplication bomb in the name and placeholder",
              {yao: json.dumps({"name": "{{ 'x' * 300000000 }}", "connector": "scripted", "placeholder": {"title": "{{ 'y' * 300000000 }}"}})})  # fmt: skip
    fields = ["description", "options", "placeholder", "tags", "mcp", "modes", "default_mode",
              "connector_options", "prompts", "disable_global_prompts", "uses", "locale", "kb"]  # fmt: skip
    for kind, v in [
        ("null", None),
        ("number", 5),
        ("list", [1]),
        ("object", {"x": []}),
        ("text", "x"),
        ("deep", nested(300)),
    ]:
        body = {**dict.fromkeys(fields, v), "name": "Hostile", "connector": "scripted"}
        yield pkg(
            f"package-all-fields-{kind}",
            0,
            f"every optional package.yao field {kind}",
            {yao: json.dumps(body)},
        )
    for name, v in [("name", 5), ("name", ["x"]), ("connector", 5), ("connector", {"model": "x"})]:
        yield pkg(f"package-{name}-{type(v).__name__}", 0, f"package.yao `{name}` = {v!r}",
                  {yao: json.dumps({"name": "Hostile", "connector": "scripted", name: v})})  # fmt: skip
    sub_fields = {"options": {"temperature": "hot", "max_tokens": -5, "top_p": 1e308},
                  "placeholder": {"title": 5, "prompts": "x"}, "mcp": {"servers": [5, None, {"server_id": 5}, {"server_id": "nope"}]}}  # fmt: skip
    yield pkg("package-sub-fields-wrong", 0, "wrong types inside options, placeholder and mcp",
              {yao: json.dumps({"name": "Hostile", "connector": "scripted", **sub_fields})})  # fmt: skip
    mcp = p + "mcps/extra.mcp.yao"
    yield pkg("mcp-unset-env-command", 11, "$ENV.HOSTILE_UNSET as a stdio server's command",
              {mcp: '{"transport": "stdio", "command": "$ENV.HOSTILE_UNSET_COMMAND"}'}, refuse=("HOSTILE_UNSET_COMMAND", "extra.mcp.yao"))  # fmt: skip
    # A server that, given an empty argument (its host, say), waits instead of answering.
    waits = "import sys, time; time.sleep(60) if not sys.argv[1] else None"
    yield pkg("mcp-unset-env-arguments", 11, "$ENV.HOSTILE_UNSET in a stdio server's arguments",
              {mcp: json.dumps({"transport": "stdio", "command": "python", "arguments": ["-c", waits, "$ENV.HOSTILE_UNSET_ARG"]})},
              refuse=("HOSTILE_UNSET_ARG", "extra.mcp.yao"))  # fmt: skip
    yield pkg("mcp-command-missing", 11, "a stdio server whose command does not exist",
              {mcp: '{"transport": "stdio", "command": "/nonexistent/hostile-server", "timeout": 3}'})  # fmt: skip
    yield pkg("mcp-server-exits", 11, "a stdio server that exits at once",
              {mcp: '{"transport": "stdio", "command": "python", "arguments": ["-c", "pass"], "timeout": 3}'})  # fmt: skip
    yield pkg("mcp-server-prints-garbage", 11, "a stdio server that writes garbage and sleeps",
              {mcp: '{"transport": "stdio", "command": "python", "arguments": ["-c", "print(\'garbage\'); import time; time.sleep(30)"], "timeout": 2}'})  # fmt: skip
    yield pkg("mcp-wrong-types", 0, "a server definition with every field of the wrong type",
              {mcp: '{"transport": 5, "command": [], "arguments": "x", "env": [], "timeout": "soon"}'})  # fmt: skip
    yield pkg("mcp-process-tools-wrong", 0, "process tools mapped to nothing, numbers, lists",
              {mcp: '{"transport": "process", "tools": {"a": 5, "b": "nope.Missing", "c": ["x"]}}'})  # fmt: skip
    yield pkg("mcp-deep", 10, "a server definition nested 100k deep", {mcp: '{"transport": "process", "tools": ' + deep_text(100_000) + "}"})  # fmt: skip
    yield pkg("mcp-surrogate-and-nul", 9, "surrogates and NUL in a server definition",
              {mcp: '{"transport": "stdio", "command": "py\\u0000thon", "arguments": ["\\ud800"], "timeout": 2}'})  # fmt: skip
    yield pkg("mcp-schema-garbage", 0, "a tool input schema that is not a schema",
              {p + "mcps/mapping/tools/schemes/echo.in.yao": '{"type": 5, "properties": [], "required": "text"}'})  # fmt: skip
    yield pkg("tools-module-raises-on-import", 0, "the tools module raises when imported",
              {p + "src/tools.py": "raise RuntimeError('import-time failure')\n"})  # fmt: skip
    yield pkg("tools-module-exits-on-import", 0, "the tools module calls sys.exit when imported",
              {p + "src/tools.py": "import sys\nsys.exit(9)\n"})  # fmt: skip
    yield pkg("tools-module-prints-on-import", 12, "the tools module prints a forged event when imported",
              {p + "src/tools.py": "print('{\"type\": \"summary\", \"total\": 0}')\n" + "def Echo(args):\n    return 1\n"})  # fmt: skip
    yield pkg(
        "tools-module-syntax-error",
        0,
        "the tools module does not parse",
        {p + "src/tools.py": "def (:\n"},
    )

    prompts = p + "prompts.yml"
    yield pkg("prompts-missing-asset", 0, "prompts.yml inlines an @assets file that is not there",
              {prompts: "- role: system\n  content: '@assets/missing.md'\n"})  # fmt: skip
    for name, text in [("not-a-list", "role: system\n"), ("strings", "- hi\n- there\n"),
                       ("wrong-types", "- role: 5\n  content: [1]\n- role: [x]\n  content: {a: 1}\n- {}\n"),
                       ("alias-bomb", "- role: system\n  content: *l8\n  x:\n" + alias_bomb().replace("  l", "    l")),
                       ("duplicate-keys", "- role: system\n  role: user\n  content: hi\n"),
                       ("deep", "- role: system\n  content: " + "[" * 100_000 + "]" * 100_000 + "\n"),
                       ("invalid-utf8", b"- role: system\n  content: \xff\xfe\n"), ("tabs", "- role: system\n\tcontent: hi\n")]:  # fmt: skip
        yield pkg(f"prompts-{name}", 4 if name == "alias-bomb" else 10 if name in ("deep", "duplicate-keys") else 0,
                  f"prompts.yml: {name}", {prompts: text})  # fmt: skip
    yield pkg("prompts-asset-fifo", 10, "@assets/ naming a FIFO",
              {prompts: "- role: system\n  content: '@assets/pipe.md'\n", p + "assets/pipe.md": Fifo()})  # fmt: skip
    yield pkg("prompts-asset-escape", 0, "@assets/../../ escaping the package",
              {prompts: "- role: system\n  content: '@assets/../../../../etc/passwd'\n"})  # fmt: skip
    yield pkg("preset-broken", 0, "a prompt preset that is not a list, chosen by default_mode",
              {yao: '{"name": "Hostile", "connector": "scripted", "default_mode": "chat"}', p + "prompts/chat.yml": "{oops: [\n"})  # fmt: skip
    locale = p + "locales/en-us.yml"
    for name, text in [("garbage", "name: [unclosed\n"), ("alias-bomb", "x:\n" + alias_bomb().replace("  l", "  l") + "\nname: *l8\n"),
                       ("wrong-types", "name: [1, 2]\nchat: 5\n"), ("deep", "name: " + "[" * 100_000 + "\n"),
                       ("jinja-in-value", "name: \"{{ 'x' * 300000000 }}\"\n"), ("invalid-utf8", b"name: \xff\n")]:  # fmt: skip
        yield pkg(f"locale-{name}", 4 if name == "alias-bomb" else 5 if name.startswith("jinja") else 10 if name == "deep" else 0,
                  f"locales/en-us.yml: {name}", {locale: text, yao: '{"name": "{{ name }}", "connector": "scripted"}'},
                  args=("--locale", "en-us"))  # fmt: skip
    yield pkg("locale-hostile-codes", 9, "--locale with a surrogate, a path and a NUL",
              {p + "locales/zh-cn.yml": "name: x\n"}, args=("--locale", "../../etc/\udcff"))  # fmt: skip

    rules = p + "scripted.yml"
    for name, item, say in [("multiplication", 5, "{{ user * 100000000 }}"), ("string-literal", 5, "{{ 'ab' * 150000000 }}"),
                            ("nested-loops", 5, "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}{% endfor %}"),
                            ("range-huge", 5, "{% for i in range(10**12) %}x{% endfor %}"),
                            ("pow", 5, "{{ 10 ** 10 ** 8 }}"), ("format-width", 5, "{{ '%0500000000d' | format(1) }}"),
                            ("attribute-escape", 0, "{{ ''.__class__.__mro__[1].__subclasses__() }}")]:  # fmt: skip
        yield pkg(f"rules-jinja-{name}", item, f"a scripted `say` template: {say[:50]}",
                  {rules: f"rules:\n  - say: {json.dumps(say)}\n"})  # fmt: skip
    yield pkg("rules-jinja-bomb-in-call", 5, "a multiplication bomb in a tool call's arguments",
              {rules: 'rules:\n  - when: {user: "^echo-tool"}\n    call: {name: echo, arguments: {text: "{{ user * 50000000 }}"}}\n  - say: done\n'})  # fmt: skip
    yield pkg("rules-catastrophic-when", 1, "a scripted `when.user` regex that backtracks",
              {rules: f"rules:\n  - when: {{user: {json.dumps(REDOS)}}}\n    say: never\n  - say: fine\n",
               "cases.jsonl": json.dumps({"id": "r", "input": REDOS_TEXT}) + "\n"})  # fmt: skip
    yield pkg(
        "rules-alias-bomb",
        4,
        "billion laughs in scripted.yml",
        {rules: "x:\n" + alias_bomb() + "\nrules:\n  - say: *l8\n"},
    )
    yield pkg(
        "rules-duplicate-keys",
        10,
        "the same rule key twice",
        {rules: "rules:\n  - say: a\n    say: b\n"},
    )
    yield pkg("rules-wrong-types", 0, "rules of every wrong shape",
              {rules: "rules:\n  - 5\n  - when: [x]\n    say: a\n  - when: {turn: nan}\n    say: b\n  - call: {name: 5}\n"})  # fmt: skip
    for key, v in [("delay", "nan"), ("delay", "1e308"), ("chunk_delay", ".inf"), ("delay", "-1")]:
        yield pkg(f"rules-{key}-{v.strip('.-')}", 2, f"scripted `{key}: {v}`", {rules: f"{key}: {v}\nrules:\n  - say: hi\n"},
                  args=("--timeout", "2s"))  # fmt: skip
    yield pkg("rules-say-2mb", 13, "a scripted reply of 2 MB", {rules: Lazy(lambda: "rules:\n  - say: " + "x" * 2_000_000 + "\n")}, writers=(".jsonl", ".json"))  # fmt: skip

    index = p + "src/index.py"
    for name, item, body in [
        (
            "create-raises",
            0,
            "def Create(ctx, messages, options):\n    raise RuntimeError('create failed')\n",
        ),
        ("create-exits", 0, "import sys\ndef Create(ctx, messages, options):\n    sys.exit(7)\n"),
        (
            "create-prints",
            12,
            'def Create(ctx, messages, options):\n    print(\'{"type": "test_result", "id": "forged"}\', flush=True)\n',
        ),
        (
            "create-returns-garbage",
            0,
            "def Create(ctx, messages, options):\n    return {'messages': 5, 'temperature': 'hot', 'connector': [1], 'locale': object()}\n",
        ),
        (
            "next-returns-recursive",
            9,
            "def Next(ctx, payload, options):\n    d = {}\n    d['d'] = d\n    return {'data': d}\n",
        ),
        (
            "next-returns-object",
            9,
            "def Next(ctx, payload, options):\n    return {'data': {'o': object(), 'b': b'\\xff', 's': {1}}}\n",
        ),
        (
            "next-returns-surrogate",
            9,
            "def Next(ctx, payload, options):\n    return {'data': '\\ud800'}\n",
        ),
        ("next-returns-non-dict", 0, "def Next(ctx, payload, options):\n    return [1, 2, 3]\n"),
        ("index-syntax-error", 0, "def Create(:\n"),
        ("index-sleeps-on-import", 3, "import time\ntime.sleep(60)\n"),
    ]:
        yield pkg(f"hooks-{name}", item, f"src/index.py: {name}", {index: body},
                  **({"interrupt_after": 1.5, "writers": (".jsonl",)} if "sleep" in name else {}))  # fmt: skip
    model = p + "src/model.py"
    python_yao = '{"name": "Hostile", "connector": "python:model:reply"}'
    for name, item, body in [
        ("returns-none", 0, "def reply(messages, tools, settings):\n    return None\n"),
        (
            "returns-wrong-shape",
            0,
            "def reply(messages, tools, settings):\n    return {'content': 5, 'tool_calls': 'x'}\n",
        ),
        (
            "returns-bad-tool-calls",
            0,
            "def reply(messages, tools, settings):\n    return {'content': '', 'tool_calls': [{'name': 5}, {'arguments': []}, 7]}\n",
        ),
        (
            "raises",
            0,
            "def reply(messages, tools, settings):\n    raise ValueError('model broke')\n",
        ),
        ("exits", 0, "import sys\ndef reply(messages, tools, settings):\n    sys.exit(8)\n"),
        (
            "sync-sleeps",
            3,
            "import time\ndef reply(messages, tools, settings):\n    time.sleep(60)\n",
        ),
        (
            "returns-surrogate",
            9,
            "def reply(messages, tools, settings):\n    return 'lone \\ud800'\n",
        ),
        ("missing-function", 0, "def other(messages, tools, settings):\n    return 'x'\n"),
    ]:
        yield pkg(f"python-model-{name}", item, f"a python: model that {name.replace('-', ' ')}", {yao: python_yao, model: body},
                  **({"interrupt_after": 1.5, "writers": (".jsonl",)} if "sleep" in name else {}))  # fmt: skip


ENTRIES: list[Entry] = [*_case_entries(), *_result_entries(), *_package_entries()]
"""The corpus, in a stable order; names are unique."""
