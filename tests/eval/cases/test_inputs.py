"""Case inputs: message forms, multimodal parts, file:// confinement, lazy encoding."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from agentcli.errors import CaseFileError
from agentcli.eval.cases.inputs import FileRef, build_messages, messages_text, normalize_input

PNG = b"\x89PNG\r\n\x1a\nfake-image-bytes"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with tests/ and fixtures/ folders holding media files."""
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    (tmp_path / "tests" / "fixtures" / "receipt.png").write_bytes(PNG)
    (tmp_path / "tests" / "fixtures" / "hello.wav").write_bytes(b"RIFFwav")
    (tmp_path / "tests" / "fixtures" / "report.pdf").write_bytes(b"%PDF-1.4")
    return tmp_path


def normalize(value, project: Path):
    """normalize_input with the case file living in project/tests."""
    return normalize_input(value, base_dir=project / "tests", project_root=project)


def problems(value, project: Path) -> list[str]:
    """The problems normalize_input reports for ``value``."""
    with pytest.raises(CaseFileError) as info:
        normalize(value, project)
    return info.value.problems


def test_string_becomes_one_user_message(project):
    assert normalize("Hello 你好", project) == [{"role": "user", "content": "Hello 你好"}]


def test_message_object_and_default_role(project):
    assert normalize({"content": "hi"}, project) == [{"role": "user", "content": "hi"}]
    assert normalize({"role": "system", "content": "be brief"}, project) == [
        {"role": "system", "content": "be brief"}
    ]


def test_message_list_with_tool_calls(project):
    messages = normalize(
        [
            {"role": "user", "content": "Submit $5"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "submit", "arguments": {"amount": 5}}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
            {"role": "user", "content": "thanks"},
        ],
        project,
    )
    assert messages[1] == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "submit", "arguments": '{"amount": 5}'},
            }
        ],
    }
    assert messages[2]["tool_call_id"] == "c1"
    assert messages_text(messages) == "thanks"


def test_multimodal_parts_resolve_files_relative_to_the_case_file(project):
    [message] = normalize(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Analyze this receipt"},
                {"type": "image", "source": "file://fixtures/receipt.png"},
                {"type": "image", "source": "https://example.com/a.jpg", "detail": "low"},
                {"type": "audio", "source": "file://fixtures/hello.wav"},
                {"type": "file", "source": "file://fixtures/report.pdf", "name": "Q1.pdf"},
                "plain string part",
            ],
        },
        project,
    )
    parts = message["content"]
    assert parts[0] == {"type": "text", "text": "Analyze this receipt"}
    assert parts[1] == FileRef("image", project / "tests/fixtures/receipt.png")
    assert parts[2] == {
        "type": "image_url",
        "image_url": {"url": "https://example.com/a.jpg", "detail": "low"},
    }
    assert parts[3] == FileRef("audio", project / "tests/fixtures/hello.wav")
    assert parts[4] == FileRef("file", project / "tests/fixtures/report.pdf", name="Q1.pdf")
    assert parts[5] == {"type": "text", "text": "plain string part"}


def test_build_messages_encodes_files_at_send_time(project):
    messages = normalize(
        {
            "content": [
                {"type": "image", "source": "file://fixtures/receipt.png"},
                {"type": "audio", "source": "file://fixtures/hello.wav"},
                {"type": "file", "source": "file://fixtures/report.pdf"},
            ]
        },
        project,
    )
    # Changing the file after loading shows the bytes are read only when building.
    (project / "tests/fixtures/receipt.png").write_bytes(PNG + b"-v2")
    image, audio, document = build_messages(messages)[0]["content"]
    encoded = base64.b64encode(PNG + b"-v2").decode()
    assert image == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{encoded}", "detail": "auto"},
    }
    assert audio == {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(b"RIFFwav").decode(), "format": "wav"},
    }
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    assert document == {
        "type": "file",
        "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{pdf}"},
    }
    assert isinstance(messages[0]["content"][0], FileRef)  # the loaded case is unchanged


def test_build_messages_reports_a_file_deleted_after_loading(project):
    messages = normalize(
        {"content": [{"type": "image", "source": "file://fixtures/receipt.png"}]}, project
    )
    (project / "tests/fixtures/receipt.png").unlink()
    with pytest.raises(CaseFileError, match="cannot read image"):
        build_messages(messages)


def test_absolute_file_url_inside_the_project(project):
    path = project / "tests/fixtures/receipt.png"
    [message] = normalize({"content": [{"type": "image", "source": f"file://{path}"}]}, project)
    assert message["content"][0].path == path


def test_dotdot_escape_is_refused(project):
    (project.parent / "secret.png").write_bytes(PNG)
    found = problems({"content": [{"type": "image", "source": "file://../../secret.png"}]}, project)
    assert found == [
        f'input.content[0]: "file://../../secret.png" is outside the project root {project.resolve()}'
    ]


def test_absolute_escape_is_refused(project):
    found = problems({"content": [{"type": "file", "source": "file:///etc/hostname"}]}, project)
    assert found[0].startswith(
        'input.content[0]: "file:///etc/hostname" is outside the project root'
    )


def test_symlink_escape_is_refused(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.png"
    outside.write_bytes(PNG)
    (project / "tests" / "fixtures" / "link.png").symlink_to(outside)
    found = problems(
        {"content": [{"type": "image", "source": "file://fixtures/link.png"}]}, project
    )
    assert len(found) == 1 and "is outside the project root" in found[0]


def test_missing_file(project):
    found = problems(
        [{"content": [{"type": "image", "source": "file://fixtures/nope.png"}]}], project
    )
    assert found == [
        f'input[0].content[0]: "file://fixtures/nope.png": file not found '
        f"({(project / 'tests/fixtures/nope.png').resolve()})"
    ]


def test_every_input_problem_is_reported(project):
    found = problems(
        [
            {"role": "robot", "content": "x"},
            {"role": "user"},
            {"role": "user", "contnet": "typo"},
            "not a message",
            {"content": [{"type": "video", "source": "x"}, {"type": "image"}, {"type": "text"}]},
            {
                "content": [
                    {"type": "audio", "source": "https://x/a.wav"},
                    {"type": "file", "url": "u"},
                ]
            },
            {"content": 42},
        ],
        project,
    )
    assert found == [
        'input[0].role: must be one of system, developer, user, assistant, tool, got "robot"',
        'input[1]: missing "content"',
        'input[2]: unknown message field "contnet" (did you mean "content"?)',
        'input[2]: missing "content"',
        'input[3]: a message must be an object with "role" and "content"',
        'input[4].content[0]: content part type "video": use text, image, audio or file',
        'input[4].content[1]: an image part needs "source": "file://..." or an http(s)/data URL',
        'input[4].content[2]: a text part needs "text"',
        'input[5].content[0]: an audio part needs "source": "file://..." or "data" and "format"',
        'input[5].content[1]: a file part needs "source": "file://..."',
        "input[6].content: must be a string or a list of content parts",
    ]


def test_empty_list_is_refused(project):
    assert problems([], project) == [
        "input: must be a string, a message object or a non-empty list of messages"
    ]


def test_openai_shaped_parts_pass_through(project):
    [message] = normalize(
        {
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
                {"type": "audio", "data": "BBBB", "format": "wav"},
                {"type": "file", "file": {"file_id": "file-1"}},
            ]
        },
        project,
    )
    assert message["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "auto"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
        {"type": "input_audio", "input_audio": {"data": "BBBB", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-1"}},
    ]


def test_messages_text():
    assert (
        messages_text([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
        == "a"
    )
    parts = [
        {"type": "text", "text": "line 1"},
        FileRef("image", Path("x.png")),
        {"type": "text", "text": "line 2"},
    ]
    assert messages_text([{"role": "user", "content": parts}]) == "line 1\nline 2"
    only_image = [FileRef("image", Path("x.png"))]
    assert messages_text([{"role": "user", "content": only_image}]) == "[1 content parts]"
    assert (
        messages_text([{"role": "system", "content": "s"}, {"role": "assistant", "content": "b"}])
        == "[2 messages]"
    )
    assert messages_text([]) == ""
