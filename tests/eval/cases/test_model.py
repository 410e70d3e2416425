"""Case files: loading .jsonl/.json/.yaml, every kind of mistake as file:line: message."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from agentcli.errors import CaseFileError
from agentcli.eval.cases.inputs import FileRef
from agentcli.eval.cases.load import load_cases
from agentcli.eval.cases.model import (
    Assertion,
    Case,
    CaseOptions,
    Checkpoint,
    Simulator,
    SimulatorOptions,
    input_text,
)
from agentcli.eval.cases.parse import parse_case


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root that is also the current directory (so files show as relative paths)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    return tmp_path


def write(project: Path, name: str, text: str) -> Path:
    """Write a case file under project/tests."""
    path = project / "tests" / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def jsonl(project: Path, *lines: object, name: str = "cases.jsonl") -> Path:
    """A .jsonl file; dict lines are JSON-encoded, strings written as-is."""
    text = "\n".join(
        json.dumps(x, ensure_ascii=False) if isinstance(x, dict) else str(x) for x in lines
    )
    return write(project, name, text + "\n")


def load_problems(path: Path, project: Path) -> list[str]:
    """The problems load_cases raises for ``path``."""
    with pytest.raises(CaseFileError) as info:
        load_cases(path, project_root=project)
    return info.value.problems


# --- loading --------------------------------------------------------------------------------


def test_jsonl_skips_blank_and_comment_lines(project):
    path = jsonl(
        project,
        "// greeting cases",
        {"id": "greet", "input": "Hello", "assert": {"type": "contains", "value": "Hi"}},
        "",
        "   // indented comment",
        {"id": "zh", "input": "你好", "assert": [{"type": "regex", "value": "(?i)hi"}, "is_json"]},
    )
    cases = load_cases(path, project_root=project)
    assert [c.id for c in cases] == ["greet", "zh"]
    assert [str(c.source) for c in cases] == ["tests/cases.jsonl:2", "tests/cases.jsonl:5"]
    assert cases[0].assert_ == [Assertion(type="contains", value="Hi")]
    assert cases[0].messages == [{"role": "user", "content": "Hello"}]
    assert cases[1].assert_ == [Assertion(type="regex", value="(?i)hi"), Assertion(type="is_json")]


def test_every_field_is_parsed(project):
    (project / "tests" / "img.png").write_bytes(b"png")
    case = {
        "id": "full",
        "input": {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": "file://img.png"},
            ],
        },
        "assert": [{"type": "json_path", "path": "a", "value": 1, "message": "m", "negate": True}],
        "expected": {"a": 1},
        "user": "u1",
        "team": "t1",
        "metadata": {"scenario": "filter"},
        "options": {
            "connector": "gpt",
            "mode": "task",
            "metadata": {"k": "v"},
            "skip": {"history": True},
        },
        "skip": True,
        "timeout": "2m",
        "before": "env_test.Before",
        "after": "env_test.After",
        "simulator": {
            "use": "tests.simulator-agent",
            "options": {"metadata": {"persona": "p"}, "connector": "c"},
        },
        "checkpoints": [
            {"id": "greeting", "assert": {"type": "regex", "value": "(?i)hello"}},
            {
                "id": "size",
                "description": "asks size",
                "after": ["greeting"],
                "required": False,
                "assert": [{"type": "contains", "value": "size"}],
            },
        ],
        "max_turns": 7,
    }
    [loaded] = load_cases(jsonl(project, case), project_root=project)
    assert loaded == Case(
        id="full",
        input=case["input"],
        assert_=[Assertion(type="json_path", value=1, path="a", message="m", negate=True)],
        expected={"a": 1},
        user="u1",
        team="t1",
        metadata={"scenario": "filter"},
        options=CaseOptions(
            connector="gpt", mode="task", metadata={"k": "v"}, skip={"history": True}
        ),
        skip=True,
        timeout=120.0,
        before="env_test.Before",
        after="env_test.After",
        simulator=Simulator(
            use="tests.simulator-agent",
            options=SimulatorOptions(metadata={"persona": "p"}, connector="c"),
        ),
        checkpoints=[
            Checkpoint(id="greeting", assert_=[Assertion(type="regex", value="(?i)hello")]),
            Checkpoint(
                id="size",
                assert_=[Assertion(type="contains", value="size")],
                description="asks size",
                after=["greeting"],
                required=False,
            ),
        ],
        max_turns=7,
        source=loaded.source,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    FileRef("image", project / "tests" / "img.png"),
                ],
            }
        ],
    )
    assert loaded.is_dynamic
    assert input_text(loaded) == "look"


def test_to_dict_round_trips_through_parse_case(project):
    case = {
        "id": "rt",
        "input": [{"role": "user", "content": "hi"}],
        "assert": [
            {"type": "contains", "value": "x"},
            {"type": "agent", "use": "agents:v", "value": "c", "options": {"connector": "x"}},
        ],
        "metadata": {"a": 1},
        "options": {"connector": "c"},
        "timeout": 30,
        "simulator": {"use": "sim"},
        "checkpoints": [
            {"id": "a", "assert": {"type": "contains", "value": "a"}, "required": False}
        ],
        "max_turns": 3,
    }
    [loaded] = load_cases(jsonl(project, case), project_root=project)
    data = loaded.to_dict()
    assert list(data) == [
        "id",
        "input",
        "assert",
        "metadata",
        "options",
        "timeout",
        "simulator",
        "checkpoints",
        "max_turns",
    ]
    again = parse_case(
        data, source_file=project / "tests" / "cases.jsonl", line=1, project_root=project
    )
    assert again == loaded


def test_json_array_items_keep_their_line_numbers(project):
    path = write(
        project,
        "cases.json",
        """
        [
          {"id": "a", "input": "one"},

          {
            "id": "b",
            "input": "two"
          },
          {"id": "c", "input": "three"}
        ]
        """,
    )
    cases = load_cases(path, project_root=project)
    assert [(c.id, c.source.line) for c in cases] == [("a", 2), ("b", 4), ("c", 8)]


def test_json_single_object(project):
    path = project / "tests" / "one.json"
    path.write_text('\n\n{"id": "solo", "input": "hi"}\n')
    [case] = load_cases(path, project_root=project)
    assert case.id == "solo" and case.source.line == 3


def test_yaml_list_with_line_numbers(project):
    path = write(
        project,
        "cases.yaml",
        """
        # cases
        - id: greet
          input: Hello
          assert:
            type: contains
            value: Hi
        - id: multi
          input:
            - role: user
              content: 你好
          timeout: 1500ms
        """,
    )
    cases = load_cases(path, project_root=project)
    assert [(c.id, c.source.line) for c in cases] == [("greet", 2), ("multi", 7)]
    assert cases[1].timeout == 1.5
    assert input_text(cases[1]) == "你好"


def test_yml_single_mapping(project):
    path = write(project, "one.yml", "id: solo\ninput: hi\n")
    assert [c.id for c in load_cases(path, project_root=project)] == ["solo"]


def test_large_jsonl_file_loads(project):
    lines = [
        {"id": f"T{i}", "input": f"q{i}", "assert": {"type": "contains", "value": "x"}}
        for i in range(3000)
    ]
    cases = load_cases(jsonl(project, *lines), project_root=project)
    assert len(cases) == 3000 and cases[-1].source.line == 3000


# --- mistakes -------------------------------------------------------------------------------


def test_every_mistake_is_reported_with_file_and_line(project):
    path = jsonl(
        project,
        {"id": "ok", "input": "fine"},
        '{"id": "bad json", "input": }',
        '["not", "an", "object"]',
        {"input": "no id"},
        {"id": "ok", "input": "duplicate"},
        {"id": "typo", "input": "x", "asserts": {"type": "contains", "value": "a"}},
        {"id": "nested typo", "input": "x", "assert": {"type": "contains", "vaule": "a"}},
        {
            "id": "unknown type",
            "input": "x",
            "assert": [{"type": "contains", "value": "a"}, {"type": "contain", "value": "b"}],
        },
        {"id": "bad regex", "input": "x", "assert": {"type": "regex", "value": "(?i)(unclosed"}},
        {"id": "timeout", "input": "x", "timeout": "5 minutes"},
        {"id": "no input"},
        {"id": "wrong types", "input": 5, "skip": "yes", "max_turns": 0},
    )
    assert load_problems(path, project) == [
        "tests/cases.jsonl:2: invalid JSON at column 29: Expecting value",
        "tests/cases.jsonl:3: a case must be an object, got a list",
        'tests/cases.jsonl:4: missing required field "id"',
        'tests/cases.jsonl:5: duplicate id "ok" (first defined at line 1)',
        'tests/cases.jsonl:6: unknown field "asserts" (did you mean "assert"?)',
        'tests/cases.jsonl:7: assert: unknown field "vaule" (did you mean "value"?)',
        'tests/cases.jsonl:8: assert[1]: unknown assertion type "contain" (did you mean "contains"?)',
        'tests/cases.jsonl:9: assert: invalid regex "(?i)(unclosed": missing ), unterminated subpattern at position 4',
        'tests/cases.jsonl:10: timeout: invalid duration "5 minutes": use seconds or a number with a unit, e.g. 30s, 2m, 1h, 1500ms',
        'tests/cases.jsonl:11: missing required field "input"',
        "tests/cases.jsonl:12: input: must be a string or an object or a list, got a number",
        "tests/cases.jsonl:12: skip: must be true or false, got a string",
        "tests/cases.jsonl:12: max_turns: must be at least 1",
    ]


def test_unknown_field_without_a_close_match(project):
    path = jsonl(project, {"id": "a", "input": "x", "zzz": 1})
    assert load_problems(path, project) == ['tests/cases.jsonl:1: unknown field "zzz"']


def test_missing_values_and_wrong_assertion_shapes(project):
    path = jsonl(
        project,
        {"id": "a", "input": "x", "assert": [{"type": "contains"}, {"value": "no type"}, 7]},
        {"id": "b", "input": "x", "assert": {"type": "agent", "use": "judge", "value": "c"}},
        {"id": "c", "input": "x", "assert": {"type": "json_path", "value": 1}},
    )
    assert load_problems(path, project) == [
        'tests/cases.jsonl:1: assert[1]: missing required field "type"',
        "tests/cases.jsonl:1: assert[2]: must be an object or a string, got a number",
        'tests/cases.jsonl:2: assert: agent assertion "use" must be "agents:<validator id>" '
        "(or left out)",
        'tests/cases.jsonl:3: assert: json_path needs a "path" such as "$.intent" or "items[0].name"',
    ]


def test_pretty_printed_jsonl_gets_a_hint(project):
    path = write(project, "pretty.jsonl", '{\n  "id": "T1",\n  "input": "x"\n}\n')
    problems = load_problems(path, project)
    assert problems[0] == (
        "tests/pretty.jsonl:1: invalid JSON at column 2: Expecting property name enclosed "
        "in double quotes (a .jsonl case must fit on one line)"
    )


def test_invalid_json_file_reports_line_and_column(project):
    path = write(
        project, "bad.json", '[\n  {"id": "a", "input": "x"},\n  {"id": "b" "input": "y"}\n]\n'
    )
    assert load_problems(path, project) == [
        "tests/bad.json:3: invalid JSON at column 14: Expecting ',' delimiter"
    ]


def test_json_scalar_document(project):
    path = write(project, "scalar.json", "42\n")
    assert load_problems(path, project) == [
        "tests/scalar.json:1: expected an array of cases or one case object"
    ]


def test_invalid_yaml_reports_its_line(project):
    path = write(project, "bad.yaml", "- id: a\n  input: x\n- id: b\n  input: [unclosed\n")
    [problem] = load_problems(path, project)
    assert problem.startswith("tests/bad.yaml:5: invalid YAML: ")


def test_yaml_unsafe_tag_is_a_problem_not_a_crash(project):
    path = write(
        project, "tags.yaml", "- id: a\n  input: x\n- !!python/object:os.system\n  id: b\n"
    )
    [problem] = load_problems(path, project)
    assert problem.startswith("tests/tags.yaml:3: invalid YAML: could not determine a constructor")


def test_yaml_items_problems_use_item_lines(project):
    path = write(project, "cases.yaml", "- id: a\n  input: x\n- id: b\n  inputs: y\n")
    assert load_problems(path, project) == [
        'tests/cases.yaml:3: unknown field "inputs" (did you mean "input"?)'
    ]


def test_yao_generator_field_names_get_suggestions(project):
    path = jsonl(project, {"id": "a", "input": "x", "assertions": [{"type": "is_json"}]})
    assert load_problems(path, project) == [
        'tests/cases.jsonl:1: unknown field "assertions" (did you mean "assert"?)'
    ]


def test_checkpoint_mistakes(project):
    path = jsonl(
        project,
        {
            "id": "dyn",
            "input": "hi",
            "checkpoints": [
                {"id": "greeting", "assert": {"type": "contains", "value": "hi"}},
                {
                    "id": "size",
                    "after": ["greting"],
                    "assert": {"type": "contains", "value": "size"},
                },
                {"id": "size", "assert": {"type": "contains", "value": "again"}},
                {"id": "loop", "after": ["loop"], "assert": {"type": "contains", "value": "x"}},
            ],
        },
        {
            "id": "cycle",
            "input": "hi",
            "checkpoints": [
                {"id": "a", "after": ["b"], "assert": {"type": "contains", "value": "a"}},
                {"id": "b", "after": ["a"], "assert": {"type": "contains", "value": "b"}},
            ],
        },
        {"id": "no checkpoints", "input": "hi", "simulator": {"use": "sim"}},
        {
            "id": "bad assert",
            "input": "hi",
            "checkpoints": [{"id": "a", "assert": {"type": "regex", "value": "["}}],
        },
        {"id": "no assert", "input": "hi", "checkpoints": [{"id": "a"}]},
    )
    assert load_problems(path, project) == [
        'tests/cases.jsonl:1: checkpoints[1].after: unknown checkpoint "greting" (did you mean "greeting"?)',
        'tests/cases.jsonl:1: checkpoints[2].id: duplicate checkpoint id "size"',
        "tests/cases.jsonl:1: checkpoints[3].after: a checkpoint cannot wait for itself",
        "tests/cases.jsonl:2: checkpoints: dependency cycle a -> b -> a",
        'tests/cases.jsonl:3: simulator: a dynamic case needs "checkpoints"',
        'tests/cases.jsonl:4: checkpoints[0].assert: invalid regex "[": unterminated character set at position 0',
        'tests/cases.jsonl:5: checkpoints[0]: missing required field "assert"',
    ]


def test_dynamic_case_may_omit_input(project):
    case = {"id": "dyn", "checkpoints": [{"id": "a", "assert": {"type": "contains", "value": "a"}}]}
    [loaded] = load_cases(jsonl(project, case), project_root=project)
    assert loaded.input is None and loaded.messages == [] and loaded.is_dynamic
    assert loaded.simulator is None  # the runner falls back to --simulator
    assert input_text(loaded) == ""


def test_file_url_escapes_are_load_errors(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.png"
    outside.write_bytes(b"x")
    (project / "tests" / "link.png").symlink_to(outside)
    path = jsonl(
        project,
        {
            "id": "dotdot",
            "input": {"content": [{"type": "image", "source": "file://../../secret.png"}]},
        },
        {"id": "link", "input": {"content": [{"type": "image", "source": "file://link.png"}]}},
    )
    root = project.resolve()
    assert load_problems(path, project) == [
        f'tests/cases.jsonl:1: input.content[0]: "file://../../secret.png" is outside the project root {root}',
        f'tests/cases.jsonl:2: input.content[0]: "file://link.png" is outside the project root {root}',
    ]


def test_hook_references_must_name_file_and_function(project):
    path = jsonl(project, {"id": "a", "input": "x", "before": "Before", "after": "env_test.After"})
    assert load_problems(path, project) == [
        'tests/cases.jsonl:1: before: hook reference must be "<file>.<Func>", got "Before"'
    ]


def test_options_and_simulator_reject_unknown_fields(project):
    path = jsonl(
        project,
        {"id": "a", "input": "x", "options": {"conector": "gpt"}},
        {
            "id": "b",
            "input": "x",
            "simulator": {"uses": "sim"},
            "checkpoints": [{"id": "c", "assert": "is_json"}],
        },
    )
    assert load_problems(path, project) == [
        'tests/cases.jsonl:1: options: unknown field "conector" (did you mean "connector"?)',
        'tests/cases.jsonl:2: simulator: unknown field "uses" (did you mean "use"?)',
    ]


def test_empty_and_missing_and_unsupported_files(project):
    assert load_problems(write(project, "empty.jsonl", "// nothing\n\n"), project) == [
        "tests/empty.jsonl: no cases found"
    ]
    assert load_problems(project / "tests" / "nope.jsonl", project) == [
        "tests/nope.jsonl: file not found"
    ]
    assert load_problems(write(project, "cases.csv", "id,input\n"), project) == [
        "tests/cases.csv: unsupported case file type; use .jsonl, .json or .yaml"
    ]


def test_not_utf8(project):
    path = project / "tests" / "latin.jsonl"
    path.write_bytes(b'{"id": "a", "input": "caf\xe9"}\n')
    [problem] = load_problems(path, project)
    assert problem.startswith("tests/latin.jsonl:1: not UTF-8 text")


def test_file_outside_cwd_is_shown_absolute(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a"}\n')
    assert load_problems(path, tmp_path) == [f'{path}:1: missing required field "input"']


def test_problem_list_is_capped(project):
    path = jsonl(project, *[{"id": f"T{i}"} for i in range(150)])
    problems = load_problems(path, project)
    assert len(problems) == 101
    assert problems[-1] == "... and 50 more problems"


def test_parse_case_for_generated_cases(project):
    case = parse_case(
        {"id": "gen-1", "input": "hi", "assert": [{"type": "contains", "value": "hi"}]},
        source_file=project / "tests" / "generated.jsonl",
        line=3,
        project_root=project,
    )
    assert str(case.source) == "tests/generated.jsonl:3"
    with pytest.raises(CaseFileError) as info:
        parse_case(
            {"id": "gen-2", "input": "hi", "category": "edge"},
            source_file="gen",
            line=2,
            project_root=project,
        )
    assert info.value.problems == ['gen:2: unknown field "category"']


# --- helpers --------------------------------------------------------------------------------


def test_effective_assertions_uses_expected_only_without_assert():
    case = Case(id="a", input="x", expected={"a": 1})
    assert case.effective_assertions() == [Assertion(type="equals", value={"a": 1})]
    with_assert = Case(id="b", input="x", expected={"a": 1}, assert_=[Assertion(type="is_json")])
    assert with_assert.effective_assertions() == [Assertion(type="is_json")]
    assert Case(id="c", input="x").effective_assertions() == []


def test_input_text_forms(project):
    cases = load_cases(
        jsonl(
            project,
            {"id": "s", "input": "plain"},
            {"id": "m", "input": {"role": "user", "content": "one message"}},
            {
                "id": "l",
                "input": [
                    {"role": "user", "content": "first"},
                    {"role": "assistant", "content": "ok"},
                    {"role": "user", "content": "last"},
                ],
            },
            {
                "id": "p",
                "input": {
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
                },
            },
        ),
        project_root=project,
    )
    assert [input_text(c) for c in cases] == ["plain", "one message", "last", "a\nb"]
