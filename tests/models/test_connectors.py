"""Connector resolution: built-ins, connectors.yml aliases, $ENV, API-key checks, errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentcli.errors import ConfigError, ReplayMiss
from agentcli.models.base import collect
from agentcli.models.connectors import (
    ConnectorConfig,
    connector_label,
    find_connectors_files,
    load_connectors_file,
    resolve_connector,
)
from agentcli.models.litellm_model import LiteLLMModel
from agentcli.models.offline import EchoModel, FunctionModel
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.pricing import FREE, Price, litellm_price
from agentcli.models.replay_only import ReplayOnlyModel
from agentcli.models.scripted import ScriptedModel
from fixtures.openai_server import OpenAIServer

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """Never read the real ~/.config/agentcli/connectors.yml."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path) -> dict[str, Path]:
    root = tmp_path / "proj"
    package = root / "assistants" / "demo"
    package.mkdir(parents=True)
    cwd = tmp_path / "work"
    cwd.mkdir()
    return {"root": root, "assistants": root / "assistants", "package": package, "cwd": cwd}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def resolve(spec: str, project: dict[str, Path], env: dict[str, str] | None = None, **kwargs):
    options = {
        "package_dir": project["package"],
        "cwd": project["cwd"],
        "assistants_root": project["assistants"],
        "env": env if env is not None else {},
    }
    options.update(kwargs)
    return resolve_connector(spec, **options)


# -- built-ins ----------------------------------------------------------------------


def test_echo(project):
    assert isinstance(resolve(" echo ", project), EchoModel)


def test_empty_spec_is_an_error(project):
    with pytest.raises(ConfigError, match="no connector given"):
        resolve("  ", project)


async def test_scripted_uses_the_package_file(project):
    path = write(project["package"] / "scripted.yml", "rules:\n  - say: from package\n")
    model = resolve("scripted", project)
    assert isinstance(model, ScriptedModel) and model.source == str(path.resolve())
    assert (await collect(model, [{"role": "user", "content": "x"}])).content == "from package"


def test_scripted_without_package_uses_the_current_folder(project):
    path = write(project["cwd"] / "scripted.yml", "rules: []\n")
    assert resolve("scripted", project, package_dir=None).source == str(path.resolve())


def test_scripted_default_file_missing(project):
    with pytest.raises(ConfigError) as caught:
        resolve("scripted", project)
    expected = project["package"].resolve() / "scripted.yml"
    assert caught.value.message == (
        f"connector 'scripted': rule file not found (looked for {expected})"
    )


def test_scripted_file_relative_to_package_then_cwd(project):
    in_package = write(project["package"] / "rules/a.yml", "rules: []\n")
    in_cwd = write(project["cwd"] / "b.yml", "rules: []\n")
    assert resolve("scripted:rules/a.yml", project).source == str(in_package.resolve())
    assert resolve("scripted:b.yml", project).source == str(in_cwd.resolve())
    absolute = resolve(f"scripted:{in_package.resolve()}", project)
    assert absolute.source == str(in_package.resolve())


def test_scripted_file_not_found_lists_both_places(project):
    with pytest.raises(ConfigError) as caught:
        resolve("scripted:nope.yml", project)
    package, cwd = project["package"].resolve(), project["cwd"].resolve()
    assert caught.value.message == (
        f"connector 'scripted:nope.yml': rule file not found "
        f"(looked for {package / 'nope.yml'}, {cwd / 'nope.yml'})"
    )


@pytest.mark.parametrize("name", ["../outside.yml", "../../outside.yml", "/etc/passwd"])
def test_scripted_path_escape_is_rejected(project, tmp_path, name):
    write(project["package"].parent / "outside.yml", "rules: []\n")
    write(tmp_path / "outside.yml", "rules: []\n")
    with pytest.raises(ConfigError) as caught:
        resolve(f"scripted:{name}", project, cwd=project["package"])
    assert caught.value.message == (
        f"connector 'scripted:{name}': {name} is outside the package and the current folder"
    )


def test_scripted_bad_rule_file_is_a_package_error(project):
    from agentcli.errors import PackageError

    write(project["package"] / "scripted.yml", "rules: 3\n")
    with pytest.raises(PackageError, match=r"scripted\.yml:1: rules: `rules` must be a list"):
        resolve("scripted", project)


async def test_python_function_model(project):
    write(
        project["package"] / "src/models/fake.py",
        "def reply(messages, tools, settings):\n    return 'fake: ' + messages[-1]['content']\n",
    )
    model = resolve("python:models.fake:reply", project)
    assert isinstance(model, FunctionModel) and model.name == "python:models.fake:reply"
    assert (await collect(model, [{"role": "user", "content": "hi"}])).content == "fake: hi"


@pytest.mark.parametrize("spec", ["python:models.fake", "python::reply", "python:a:b:c"])
def test_python_spec_must_have_module_and_function(project, spec):
    with pytest.raises(ConfigError, match="expected python:<module>:<function>"):
        resolve(spec, project)


def test_python_needs_a_package(project):
    with pytest.raises(ConfigError, match="needs an assistant package"):
        resolve("python:models.fake:reply", project, package_dir=None)


def test_python_missing_module_names_the_file(project):
    with pytest.raises(ConfigError) as caught:
        resolve("python:models.fake:reply", project)
    assert str(project["package"] / "src/models/fake.py") in caught.value.message


# -- connectors.yml -----------------------------------------------------------------

ALIASES = """\
gpt-4o: {model: openai/gpt-4o, api_key: $ENV.MY_OPENAI_KEY}
deepseek.v3: {model: deepseek/deepseek-chat}
local: {model: openai/qwen3, api_base: "http://127.0.0.1:8000/v1", api_key: none, temperature: 0}
"""


def test_find_connectors_files_order(project, home):
    assert find_connectors_files(project["cwd"], project["assistants"]) == []
    in_home = write(home / ".config/agentcli/connectors.yml", "{}\n")
    in_root = write(project["root"] / "connectors.yml", "{}\n")
    in_cwd = write(project["cwd"] / "connectors.yml", "{}\n")
    assert find_connectors_files(project["cwd"], project["assistants"]) == [
        in_cwd,
        in_root,
        in_home,
    ]
    assert find_connectors_files(project["root"], project["assistants"]) == [in_root, in_home]
    assert find_connectors_files(project["cwd"]) == [in_cwd, in_home]


@pytest.mark.parametrize("place", ["cwd", "root", "home"])
def test_alias_found_in_each_place(project, home, place):
    folder = {"cwd": project["cwd"], "root": project["root"], "home": home / ".config/agentcli"}
    write(folder[place] / "connectors.yml", ALIASES)
    model = resolve("gpt-4o", project, env={"MY_OPENAI_KEY": SECRET})
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.provider, model.api_key) == ("gpt-4o", "openai", SECRET)


def test_first_file_found_wins(project, home):
    write(project["cwd"] / "connectors.yml", "fast: {model: ollama/llama3}\n")
    write(project["root"] / "connectors.yml", "fast: {model: ollama/mistral}\nother: ollama/x\n")
    model = resolve("fast", project)
    assert isinstance(model, LiteLLMModel) and model.model == "ollama/llama3"
    with pytest.raises(ConfigError, match=r"unknown connector 'other'"):
        resolve("other", project)


def test_env_substitution_in_every_string(project):
    write(
        project["cwd"] / "connectors.yml",
        """\
        remote:
          model: openai/$ENV.MODEL_NAME
          api_base: "https://$ENV.HOST/v1"
          api_key: $ENV.REMOTE_KEY
          headers: {x-team: "$ENV.TEAM"}
        """,
    )
    env = {"MODEL_NAME": "qwen3", "HOST": "llm.example", "REMOTE_KEY": SECRET, "TEAM": "blue"}
    model = resolve("remote", project, env=env)
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.api_base, model.api_key) == (
        "qwen3",
        "https://llm.example/v1",
        SECRET,
    )
    assert model.extra == {"headers": {"x-team": "blue"}}


def test_unset_env_in_api_key_names_variable_and_file(project):
    path = write(project["cwd"] / "connectors.yml", ALIASES)
    with pytest.raises(ConfigError) as caught:
        resolve("gpt-4o", project, env={"OPENAI_API_KEY": SECRET})
    assert caught.value.message == (
        f"connector 'gpt-4o' ({path}:1): api_key uses $ENV.MY_OPENAI_KEY, which is not set"
    )
    assert caught.value.hint == f"export MY_OPENAI_KEY=... or edit {path}"
    assert SECRET not in str(caught.value)


def test_unset_env_elsewhere_is_an_error_without_leaking_the_key(project):
    write(
        project["cwd"] / "connectors.yml",
        "r: {model: openai/x, api_base: $ENV.BASE, api_key: $ENV.K}\n",
    )
    with pytest.raises(ConfigError, match=r"api_base uses \$ENV\.BASE, which is not set") as caught:
        resolve("r", project, env={"K": SECRET})
    assert SECRET not in str(caught.value)


# -- replay: what only reaches the provider may be unset ----------------------------------


def test_a_replay_resolves_a_connector_whose_custom_key_variable_is_unset(project):
    """The key, the address and the call options only reach the provider, which a replay
    never calls: unset, they are left out (no stand-in), and the model refuses a call."""
    path = write(
        project["cwd"] / "connectors.yml",
        "x: {model: openai/gpt-4o, api_base: $ENV.GATEWAY, api_key: $ENV.MY_SECRET_KEY,\n"
        "    headers: {x-token: $ENV.TEAM_TOKEN}, timeout: 5, price: {input_per_mtok: 1, output_per_mtok: 2}}\n",
    )
    with pytest.raises(ConfigError, match=r"api_base uses \$ENV\.GATEWAY, which is not set"):
        resolve("x", project)  # a live run still needs them
    model = resolve("x", project, replay_only=True)
    assert isinstance(model, ReplayOnlyModel)
    inner = model.inner
    assert isinstance(inner, OpenAICompatModel)  # an api_base was given, though unset
    assert (model.provider, model.name) == ("openai", "gpt-4o")
    assert (inner.api_base, inner.api_key, inner.extra) == (None, None, {})
    assert model.price == Price(1, 2)  # the cost a replay reports
    assert model.missing == (
        f"connector 'x' ({path}:1): api_base uses $ENV.GATEWAY, which is not set; "
        "options.headers uses $ENV.TEAM_TOKEN, which is not set; "
        "api_key uses $ENV.MY_SECRET_KEY, which is not set"
    )


def test_a_replay_needs_no_provider_key_variable_and_makes_none_up(project):
    write(project["cwd"] / "connectors.yml", "g: {model: openai/gpt-4o}\n")
    model = resolve("g", project, replay_only=True)
    assert isinstance(model, ReplayOnlyModel) and model.inner.api_key is None
    assert model.missing.endswith("connector 'g' (" + str(project["cwd"] / "connectors.yml")
                                  + ":1): OPENAI_API_KEY is not set")  # fmt: skip
    keyed = resolve("g", project, env={"OPENAI_API_KEY": SECRET}, replay_only=True)
    assert isinstance(keyed, OpenAICompatModel) and keyed.api_key == SECRET


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("x: {model: openai/$ENV.MODEL_NAME, api_key: $ENV.K}\n", "model"),
        ("x: {model: openai/o, price: {input_per_mtok: $ENV.P}}\n", "options.price.input_per_mtok"),
    ],
)
def test_a_replay_still_resolves_what_its_results_show(project, text, field):
    """The model and its price decide the provider, the model and the cost of the results."""
    write(project["cwd"] / "connectors.yml", text)
    with pytest.raises(ConfigError, match=rf"{field} uses \$ENV\.\w+, which is not set"):
        resolve("x", project, replay_only=True)


def test_a_replay_only_model_refuses_a_call_before_anything_is_sent(project):
    """Should a call reach it (outside any cassette), no request leaves: a replay miss
    naming the variable, with the loopback server running and receiving nothing."""
    with OpenAIServer(latency=0.0) as server:
        write(
            project["cwd"] / "connectors.yml",
            f"x: {{model: openai/echo, api_base: '{server.base_url}', "
            "api_key: $ENV.MY_SECRET_KEY}\n",
        )
        model = resolve("x", project, replay_only=True)
        with pytest.raises(ReplayMiss, match=r"api_key uses \$ENV\.MY_SECRET_KEY, which is not"):
            asyncio.run(collect(model, [{"role": "user", "content": "hi"}]))
        assert server.requests == []


def test_empty_api_key_from_env(project):
    write(project["cwd"] / "connectors.yml", ALIASES)
    with pytest.raises(ConfigError, match=r"connector 'gpt-4o' \(.*:1\): api_key is empty"):
        resolve("gpt-4o", project, env={"MY_OPENAI_KEY": ""})


def test_local_server_with_api_key_none(project):
    write(project["cwd"] / "connectors.yml", ALIASES)
    model = resolve("local", project, env={})
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.api_base) == ("qwen3", "http://127.0.0.1:8000/v1")
    assert model.api_key in (None, "none")
    assert model.extra == {"temperature": 0}


def test_loopback_server_needs_no_key(project):
    write(
        project["cwd"] / "connectors.yml", "l: {model: qwen3, api_base: 'http://localhost:9/v1'}\n"
    )
    model = resolve("l", project, env={})
    assert isinstance(model, OpenAICompatModel) and model.name == "qwen3"


def test_loopback_server_gets_the_key_variable_when_it_is_set(project):
    """A local vLLM or LiteLLM proxy started with --api-key: the usual variable is used
    (as the openai SDK does), only not required."""
    write(
        project["cwd"] / "connectors.yml", "l: {model: qwen3, api_base: 'http://localhost:9/v1'}\n"
    )
    model = resolve("l", project, env={"OPENAI_API_KEY": "sk-local-123456"})
    assert model.api_key == "sk-local-123456"


@pytest.mark.parametrize(
    ("api_base", "hint"),
    [
        ("localhost:8000/v1", "write http://localhost:8000/v1"),
        ("ftp://127.0.0.1/v1", "write it like http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:99999/v1", "write it like http://127.0.0.1:8000/v1"),
        ("http:///v1", "write it like http://127.0.0.1:8000/v1"),
        ("http://[::1/v1", "write it like http://127.0.0.1:8000/v1"),  # urlparse raised
    ],
)
def test_an_api_base_that_is_no_http_url_is_bad_input_before_any_call(project, api_base, hint):
    write(project["cwd"] / "connectors.yml", f"x: {{model: qwen3, api_base: '{api_base}'}}\n")
    with pytest.raises(ConfigError) as info:
        resolve("x", project, env={})
    assert info.value.message.endswith(f"api_base {api_base!r} is not an http(s) URL")
    assert "connectors.yml:1" in info.value.message
    assert info.value.hint == hint


def test_an_api_base_with_credentials_is_refused_without_quoting_them(project):
    write(
        project["cwd"] / "connectors.yml",
        "x: {model: qwen3, api_base: 'http://me:pw-secret-123@127.0.0.1:9/v1'}\n",
    )
    with pytest.raises(ConfigError, match=r"api_base carries credentials") as info:
        resolve("x", project, env={})
    assert "pw-secret-123" not in str(info.value)


def test_an_api_base_is_trimmed(project):
    write(
        project["cwd"] / "connectors.yml",
        "x: {model: qwen3, api_base: ' http://127.0.0.1:9/v1 '}\n",
    )
    assert resolve("x", project, env={}).api_base == "http://127.0.0.1:9/v1"


def test_remote_api_base_without_key_names_the_variable(project):
    write(
        project["cwd"] / "connectors.yml", "r: {model: qwen3, api_base: 'https://x.example/v1'}\n"
    )
    with pytest.raises(ConfigError, match=r"needs an API key: OPENAI_API_KEY is not set"):
        resolve("r", project, env={})


def test_openai_compatible_provider_behind_api_base(project):
    write(
        project["cwd"] / "connectors.yml",
        "ds: {model: deepseek/deepseek-chat, api_base: 'https://api.deepseek.com'}\n"
        "claude: {model: anthropic/claude-x, api_base: 'https://proxy.example'}\n",
    )
    model = resolve("ds", project, env={"DEEPSEEK_API_KEY": SECRET})
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.provider, model.api_key) == ("deepseek-chat", "deepseek", SECRET)
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY is not set"):
        resolve("ds", project, env={"OPENAI_API_KEY": SECRET})
    # anthropic speaks its own protocol, so litellm serves it even behind an api_base
    claude = resolve("claude", project, env={"ANTHROPIC_API_KEY": SECRET})
    assert isinstance(claude, LiteLLMModel) and claude.api_base == "https://proxy.example"


def test_alias_without_key_uses_the_provider_variable(project):
    write(project["cwd"] / "connectors.yml", ALIASES)
    model = resolve("deepseek.v3", project, env={"DEEPSEEK_API_KEY": SECRET})
    assert isinstance(model, LiteLLMModel)
    assert (model.model, model.api_key) == ("deepseek/deepseek-chat", SECRET)


def test_options_timeout_and_retry(project):
    write(
        project["cwd"] / "connectors.yml",
        """\
        a: {model: ollama/llama3, timeout: 30, retry: 2, num_ctx: 8192}
        b: {model: ollama/llama3, retry: {max_attempts: 1, base_delay: 0}}
        c: {model: ollama/llama3, retry: {tries: 3}}
        d: {model: ollama/llama3, timeout: soon}
        """,
    )
    a = resolve("a", project)
    assert (a.timeout, a.retry.max_attempts, a.extra) == (30.0, 2, {"num_ctx": 8192})
    b = resolve("b", project)
    assert (b.retry.max_attempts, b.retry.base_delay) == (1, 0)
    with pytest.raises(ConfigError, match=r"connector 'c' \(.*:3\): retry: .*'tries'"):
        resolve("c", project)
    with pytest.raises(ConfigError, match=r"connector 'd' \(.*:4\): timeout must be a number"):
        resolve("d", project)


def test_a_price_in_connectors_yml_is_checked_and_used(project):
    write(
        project["cwd"] / "connectors.yml",
        """\
        local: {model: openai/my-finetune, api_base: "http://127.0.0.1:9/v1", price: {input_per_mtok: 0.5, output_per_mtok: 1.5}}
        listed: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9/v1"}
        bad: {model: ollama/llama3, price: {input_per_mtok: cheap, output_per_mtok: 1}}
        typo: {model: ollama/llama3, price: {input: 1, output_per_mtok: 1}}
        negative: {model: ollama/llama3, price: {input_per_mtok: -1, output_per_mtok: 1}}
        """,
    )
    local = resolve("local", project)
    assert local.price == Price(0.5, 1.5) and local.known_price() == Price(0.5, 1.5)
    assert "price" not in local.extra  # not sent to the provider
    assert resolve("listed", project).known_price() == litellm_price("openai/gpt-4o")
    with pytest.raises(ConfigError, match=r"connector 'bad' \(.*:3\): price.input_per_mtok must"):
        resolve("bad", project)
    with pytest.raises(ConfigError, match=r"connector 'typo' \(.*:4\): price: unknown field"):
        resolve("typo", project)
    with pytest.raises(ConfigError, match=r"connector 'negative' \(.*:5\): .*>= 0, got -1"):
        resolve("negative", project)
    write(project["package"] / "scripted.yml", "rules: []\n")
    for offline in ("echo", "scripted"):
        assert resolve(offline, project).price == FREE  # every connector has a price


# -- plain model strings and API keys --------------------------------------------------


def test_openai_model_string_uses_the_openai_sdk(project):
    model = resolve("openai/gpt-4o-mini", project, env={"OPENAI_API_KEY": SECRET})
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.provider, model.api_key, model.api_base) == (
        "gpt-4o-mini",
        "openai",
        SECRET,
        None,
    )


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic/claude-3-5-haiku", "ANTHROPIC_API_KEY"),
        ("deepseek/deepseek-chat", "DEEPSEEK_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
        ("mistral/mistral-small", "MISTRAL_API_KEY"),
        ("groq/llama3-8b", "GROQ_API_KEY"),
        ("together_ai/meta/llama", "TOGETHERAI_API_KEY"),
        ("openrouter/openai/gpt-4o", "OPENROUTER_API_KEY"),
        ("azure/my-deployment", "AZURE_API_KEY"),
        ("cohere/command-r", "COHERE_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(project, spec, variable):
    with pytest.raises(ConfigError) as caught:
        resolve(spec, project, env={"UNRELATED": SECRET})
    assert caught.value.message == f"connector {spec!r} needs an API key: {variable} is not set"
    assert caught.value.hint == (
        f"export {variable}=<your key>, or add `api_key: $ENV.{variable}` to the connector "
        "in connectors.yml"
    )
    assert caught.value.exit_code == 2


def test_key_from_environment_is_passed_to_litellm(project):
    model = resolve("anthropic/claude-3-5-haiku", project, env={"ANTHROPIC_API_KEY": SECRET})
    assert isinstance(model, LiteLLMModel)
    assert (model.model, model.api_key) == ("anthropic/claude-3-5-haiku", SECRET)


@pytest.mark.parametrize("spec", ["ollama/llama3", "bedrock/anthropic.claude", "hosted_vllm/x"])
def test_providers_without_a_key_variable(project, spec):
    model = resolve(spec, project, env={})
    assert isinstance(model, LiteLLMModel) and model.api_key is None


def test_env_defaults_to_os_environ(project, monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", SECRET)
    model = resolve_connector("groq/llama3-8b", cwd=project["cwd"])
    assert isinstance(model, LiteLLMModel) and model.api_key == SECRET


# -- unknown names and bad files ------------------------------------------------------


def test_unknown_name_suggests_an_alias(project):
    path = write(project["cwd"] / "connectors.yml", ALIASES)
    with pytest.raises(ConfigError) as caught:
        resolve("gpt4o", project)
    assert caught.value.message == (
        f"unknown connector 'gpt4o' (did you mean 'gpt-4o'?); aliases in {path}: "
        "deepseek.v3, gpt-4o, local"
    )
    assert "openai/gpt-4o-mini" in (caught.value.hint or "")


def test_unknown_name_without_connectors_file(project, home):
    with pytest.raises(ConfigError) as caught:
        resolve("ecko", project)
    assert caught.value.message == (
        "unknown connector 'ecko' (did you mean 'echo'?); no aliases defined (looked for "
        f"{project['cwd'] / 'connectors.yml'}, {project['root'] / 'connectors.yml'}, "
        f"{home / '.config/agentcli/connectors.yml'})"
    )


def test_unknown_name_from_the_project_folder_names_each_place_once(project, home):
    with pytest.raises(ConfigError) as caught:
        resolve("ecko", project, cwd=project["root"])
    assert caught.value.message.endswith(
        f"(looked for {project['root'] / 'connectors.yml'}, "
        f"{home / '.config/agentcli/connectors.yml'})"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", "{path}:1: must be a mapping of connector names"),
        (
            "a: {model: openai/x}\nb: {api_key: k}\n",
            "{path}:2: b.model: missing; give a litellm model string like openai/gpt-4o-mini",
        ),
        ("a:\n  model: openai/x\n  api_key: 123\n", "{path}:3: a.api_key: must be a string"),
        ("a: [1]\n", "{path}:1: a: must be a mapping with a `model`, or a model string"),
        (
            "a: {model: openai/x\n",
            "{path}:2:1: invalid YAML: expected ',' or '}}', but got '<stream end>'",
        ),
        (
            "a: !!python/name:os.system\n",
            "{path}:1:4: invalid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/name:os.system'",
        ),
    ],
)
def test_bad_connectors_file(tmp_path, text, expected):
    path = write(tmp_path / "connectors.yml", text)
    with pytest.raises(ConfigError) as caught:
        load_connectors_file(path)
    assert caught.value.message == expected.format(path=path)


def test_load_connectors_file_shapes(tmp_path):
    path = write(
        tmp_path / "connectors.yml",
        "fast: openai/gpt-4o-mini\nslow:\n  model: anthropic/claude\n  api_key: $ENV.K\n  top_p: 1\n",
    )
    configs = load_connectors_file(path)
    assert configs["fast"] == ConnectorConfig(
        name="fast", model="openai/gpt-4o-mini", source=path, line=1
    )
    slow = configs["slow"]
    assert (slow.model, slow.api_key, slow.options, slow.line) == (
        "anthropic/claude",
        "$ENV.K",
        {"top_p": 1},
        2,
    )
    assert load_connectors_file(write(tmp_path / "empty.yml", "")) == {}


@pytest.mark.parametrize(
    ("text", "line", "key", "known"),
    [
        ('x: {model: openai/m, api_bse: "http://127.0.0.1:9/v1"}\n', 1, "api_bse", "api_base"),
        (
            "x:\n  model: openai/m\n  api_kye: sk-proj-abcdefghijklmnop1234\n",
            3,
            "api_kye",
            "api_key",
        ),
        ("x:\n  model: openai/m\n  Timout: 3\n", 3, "Timout", "timeout"),
        ("x:\n  modle: openai/m\n  model: openai/m\n", 2, "modle", "model"),
        # another tool's name for it: sent on as an option, the request went to OpenAI too
        ("x:\n  model: openai/m\n  base_url: http://127.0.0.1:9/v1\n", 3, "base_url", "api_base"),
    ],
)
def test_a_misspelt_connector_key_is_an_error_at_its_line(tmp_path, text, line, key, known):
    # Passed on as a call option, `api_bse` sent the request (and the key) to api.openai.com.
    path = write(tmp_path / "connectors.yml", text)
    with pytest.raises(ConfigError) as caught:
        load_connectors_file(path)
    assert caught.value.message == (
        f"{path}:{line}: x.{key}: unknown connector key (did you mean {known!r}?)"
    )
    assert caught.value.exit_code == 2


def test_keys_far_from_a_known_one_are_passed_to_the_provider(tmp_path):
    options = {"api_version": "preview", "max_retries": 2, "stream_timeout": 5, "top_p": 1}
    text = "x:\n  model: azure/gpt\n" + "".join(f"  {k}: {v}\n" for k, v in options.items())
    path = write(tmp_path / "connectors.yml", text)
    assert load_connectors_file(path)["x"].options == options


def test_a_misspelt_key_stops_run_before_any_call(tmp_path):
    write(tmp_path / "connectors.yml", 'x: {model: openai/m, api_bse: "http://127.0.0.1:9/v1"}\n')
    result = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-c", "x", "hi"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path), "OPENAI_API_KEY": SECRET},
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "connectors.yml:1: x.api_bse: unknown connector key (did you mean 'api_base'?)" in (
        result.stderr
    )


def test_config_repr_hides_the_key():
    config = ConnectorConfig(name="x", model="openai/x", api_key=SECRET)
    assert SECRET not in repr(config)


def test_connector_label():
    assert connector_label(" openai/gpt-4o ") == "openai/gpt-4o"
    assert connector_label(f"weird-{SECRET}") == "weird-sk-***"


def test_offline_resolution_imports_no_network_client(tmp_path):
    write(tmp_path / "scripted.yml", "rules:\n  - say: hi\n")
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from agentcli.models.connectors import resolve_connector
        resolve_connector("echo", cwd=Path({str(tmp_path)!r}))
        resolve_connector("scripted", cwd=Path({str(tmp_path)!r}))
        heavy = ["litellm", "openai", "jinja2", "agentcli.models.openai_model",
                 "agentcli.models.litellm_model"]
        print([name for name in heavy if name in sys.modules])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"


def test_transport_option_selects_the_openai_client(tmp_path):
    (tmp_path / "connectors.yml").write_text(
        "fast: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', api_key: none}\n"
        "sdk: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', api_key: none, transport: sdk}\n"
        "bad: {model: anthropic/claude, api_key: x1234567, transport: sdk}\n"
    )
    assert resolve_connector("fast", cwd=tmp_path).transport == "aiohttp"
    assert resolve_connector("sdk", cwd=tmp_path).transport == "sdk"
    with pytest.raises(ConfigError, match="transport applies to OpenAI-compatible connectors only"):
        resolve_connector("bad", cwd=tmp_path)
    (tmp_path / "connectors.yml").write_text(
        "h2: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', transport: http2}\n"
    )
    with pytest.raises(ConfigError) as info:
        resolve_connector("h2", cwd=tmp_path)
    assert info.value.message.endswith("connectors.yml:1): unknown transport 'http2'")
    assert info.value.hint == "use one of aiohttp, sdk (or leave it out: aiohttp)"


def test_the_former_transport_names(tmp_path):
    (tmp_path / "connectors.yml").write_text(
        "old: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', transport: http}\n"
        "gone: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', transport: httpx}\n"
    )
    assert resolve_connector("old", cwd=tmp_path).transport == "aiohttp"  # http: the default
    with pytest.raises(ConfigError) as info:
        resolve_connector("gone", cwd=tmp_path)
    assert info.value.message.endswith(
        "connectors.yml:2): unknown transport 'httpx' (it was removed; aiohttp replaces it)"
    )


def test_verify_false_is_passed_on_with_one_warning(tmp_path, capsys):
    (tmp_path / "connectors.yml").write_text(
        "lab: {model: openai/m, api_base: 'https://10.0.0.9/v1', api_key: none, verify: false}\n"
        "checked: {model: openai/m, api_base: 'https://10.0.0.9/v1', api_key: none, verify: true}\n"
        "odd: {model: openai/m, api_base: 'https://10.0.0.9/v1', api_key: none, verify: 'no'}\n"
        "other: {model: anthropic/claude, api_key: x1234567, verify: false}\n"
    )
    assert resolve_connector("lab", cwd=tmp_path).verify is False
    assert resolve_connector("lab", cwd=tmp_path).verify is False
    warned = capsys.readouterr().err
    assert warned.count("warning:") == 1
    assert "connector 'lab'" in warned and "TLS certificate is not checked" in warned
    model = resolve_connector("checked", cwd=tmp_path)
    assert model.verify is True and "verify" not in model.extra
    assert capsys.readouterr().err == ""
    with pytest.raises(ConfigError, match="verify must be true or false, got 'no'"):
        resolve_connector("odd", cwd=tmp_path)
    with pytest.raises(ConfigError, match="verify applies to OpenAI-compatible connectors only"):
        resolve_connector("other", cwd=tmp_path)
