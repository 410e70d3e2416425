"""Redaction: planted keys never reach results files, reports, NDJSON events or errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from agentcli.secrets import REDACTED, redact_data, redact_text, register_secret

ROOT = Path(__file__).resolve().parents[1]
PLANTED = "sk-planted0123456789abcdefXYZ"


def test_values_of_secret_named_variables_are_redacted():
    env = {
        "MY_API_KEY": "hunter2hunter2",
        "GITHUB_TOKEN": "ghp_abcdef123",
        "HOME": "/home/me",
        "SHORT_KEY": "1",
    }
    text = "key hunter2hunter2 token ghp_abcdef123 home /home/me and 1"
    assert redact_text(text, env) == f"key {REDACTED} token {REDACTED} home /home/me and 1"


def test_credential_shapes_are_redacted():
    assert redact_text("Authorization: Bearer abc.def", {}) == f"Authorization: {REDACTED}"
    assert redact_text("use sk-abcdefghijklmnop1234", {}) == f"use {REDACTED}"
    assert redact_text('{"api_key": "zzz"}', {}) == '{"api_key": "' + REDACTED + '"}'


def test_registered_values_and_nested_data():
    register_secret("registered-value-42")
    data = {"a": ["x registered-value-42 y", {"registered-value-42": 1}], "n": 3}
    assert redact_data(data, {}) == {"a": [f"x {REDACTED} y", {REDACTED: 1}], "n": 3}


def test_no_output_of_an_eval_run_contains_a_planted_key(tmp_path):
    """The agent echoes the key; every file and stream the run produces is grepped for it."""
    shutil.copytree(ROOT / "fixtures" / "assistants" / "probe", tmp_path / "probe")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "leak",
                "input": f"my key is {PLANTED}",
                "assert": {"type": "contains", "value": "nope"},
            }
        )
        + "\n"
    )
    env = {**os.environ, "AGENTCLI_HOME": str(tmp_path / "home"), "EXAMPLE_API_KEY": PLANTED}
    outputs = []
    for args in (
        ["--json", "-o", "r.jsonl"],
        ["-v", "-o", "r.json"],
        ["-o", "r.html"],
        ["-o", "r.md"],
        ["-o", "r.xml"],
    ):
        completed = subprocess.run(
            [sys.executable, "-m", "agentcli", "eval", "./probe", "@cases.jsonl", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 1, completed.stderr
        outputs += [completed.stdout, completed.stderr]
    message = subprocess.run(
        [sys.executable, "-m", "agentcli", "eval", "./probe", f"tell {PLANTED}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    outputs += [message.stdout, message.stderr]
    files = [p.read_text(encoding="utf-8") for p in tmp_path.glob("r.*")]
    assert len(files) == 9  # five reports and the JSON Lines streamed beside the other four
    everything = "\n".join(outputs + files)
    assert "echo: my key is" in everything  # the agent really answered with the key...
    assert PLANTED not in everything  # ...and nothing written shows it
    assert REDACTED in everything


def test_advice_with_placeholders_and_env_references_is_not_redacted():
    hint = (
        "export OPENAI_API_KEY=<your key>, or add `api_key: $ENV.OPENAI_API_KEY` to connectors.yml"
    )
    assert redact_text(hint, {}) == hint


def test_a_stream_redactor_catches_a_key_split_across_pieces():
    from agentcli.secrets import StreamRedactor

    register_secret("stream-secret-9f8e7d6c")
    text = "key stream-secret-9f8e7d6c, then Bearer tok_abcdefghijkl and 中文 text"
    expected = redact_text(text)
    assert "stream-secret" not in expected and "tok_abc" not in expected
    for size in (1, 2, 5, 11, len(text)):
        redactor = StreamRedactor()
        shown = [redactor.feed(text[i : i + size]) for i in range(0, len(text), size)]
        assert "".join(shown) + redactor.flush() == expected
        assert not any("9f8e" in piece or "tok_" in piece for piece in shown)


def _reference_redaction(text: str) -> str:
    """Every credential pattern searched over the whole text, one after another."""
    from agentcli.secrets import CREDENTIAL_PATTERNS

    for credential in CREDENTIAL_PATTERNS:
        text = credential.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


PIECES = [
    "Bearer ",
    "bearer\t",
    "BEARER ",
    "sk-",
    "SK-",
    "xsk-",
    "pk-",
    "rk-",
    "AIza",
    "aiza",
    "api_key",
    "API-KEY",
    "apikey",
    "access_token",
    "Secret",
    "password",
    "Authorization",
    "x-api-key",
    ": ",
    "=",
    '"',
    "'",
    " ",
    ",",
    ";",
    "}",
    "<",
    "$ENV.X",
    "abcdefghijklmnopqrstu",
    "0123456789ABCDEFGHIJ",
    "İ",
    "é",
    "ß",
    "\n",
    "-_",
    "k",
]


def test_redaction_finds_what_searching_every_pattern_everywhere_finds():
    import random

    rng = random.Random(13)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        assert redact_text(text, {}) == _reference_redaction(text), text


def test_redacting_a_20_mb_answer_is_linear():
    """Searched pattern by pattern, 20 MB took 13 s; a plain scan for the patterns' leads
    takes a small fraction of that (a lax bound: this is no benchmark)."""
    import time

    text = "x " * 10_000_000 + " api_key=abc123"
    started = time.perf_counter()
    redacted = redact_text(text, {})
    assert time.perf_counter() - started < 3
    assert redacted.endswith(f"api_key={REDACTED}")
