"""agentcli.sandbox: templates cannot grow text past 16,000,000 characters, by any route."""

from __future__ import annotations

import time

import pytest
from jinja2.sandbox import SecurityError

from agentcli.sandbox import RENDER_TIMEOUT, environment, render

HOSTILE = [
    "{{ user * 100000000 }}",
    "{{ [user] * 99999999 }}",
    "{{ (user * 1000) | center(100000000) }}",
    "{{ user.ljust(10**9) }}",
    "{{ user | indent(100000000) }}",
    "{{ range(100000) | join(user * 100) }}",
    "{{ (user * 100).join(range(100000) | map('string')) }}",
    "{{ user.replace('', user * 1000000) }}",
    "{{ '%999999999s' % user }}",
    "{{ '%*s' % (999999999, user) }}",
    "{{ '%*s' | format(999999999, user) }}",
    "{{ '{:>999999999}'.format(user) }}",
    "{{ '{0:>{1}}'.format(user, 999999999) }}",
    "{{ 10 ** (10 ** 8) }}",
    "{% for i in range(100000) %}{{ user * 200 }}{% endfor %}",
    "{% set ns = namespace(s=user) %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}",
    "{% set ns = namespace(s=user) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
    "{% endfor %}",
    "{% macro f(s, n) %}{{ f(s ~ s, n - 1) if n else s }}{% endmacro %}{{ f(user, 64) }}",
]


@pytest.mark.parametrize("source", HOSTILE)
def test_growing_templates_stop_fast_with_a_clear_error(source):
    started = time.monotonic()
    with pytest.raises(SecurityError, match="over the template limit of 16,000,000"):
        render(environment().from_string(source), {"user": "hello"})
    assert time.monotonic() - started < 2


def test_ordinary_templates_render_as_before():
    source = (
        "{{ user | upper }} {{ user * 2 }} {{ '%03d' % 7 }} {{ '{:>4}'.format('x') }} "
        "{{ [1, 2] | join('+') }} {{ user.replace('l', 'L') }} {{ 2 ** 10 }} {{ 'a' ~ 'b' }} "
        "{{ '{:,}'.format(123456789) }} {{ (user * 1000) | length }}"
    )
    expected = "HELLO hellohello 007    x 1+2 heLLo 1024 ab 123,456,789 5000"
    assert render(environment().from_string(source), {"user": "hello"}) == expected
    assert environment().compile_expression("user * 3")(user="ab") == "ababab"


LOOPING = [
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}{% endfor %}",
    # small loops nested deep: no one loop is long, the render is
    "{% for a in range(60) %}{% for b in range(60) %}{% for c in range(60) %}"
    "{% for d in range(60) %}{% for e in range(60) %}{% endfor %}{% endfor %}{% endfor %}"
    "{% endfor %}{% endfor %}",
    "{% macro f(n) %}{% for i in range(50) %}{{ f(n - 1) if n else '' }}{% endfor %}"
    "{% endmacro %}{{ f(6) }}",
]


@pytest.mark.parametrize("source", LOOPING)
def test_loops_that_would_run_for_hours_stop_after_the_render_timeout(source):
    started = time.monotonic()
    with pytest.raises(SecurityError, match=r"loops ran for longer than 2s"):
        render(environment().from_string(source), {"user": "hello"})
    assert time.monotonic() - started < RENDER_TIMEOUT + 2


def test_loops_keep_their_loop_variable_filters_and_else():
    source = (
        "{% for i in [3, 1, 2] | sort if i > 1 %}{{ loop.index }}:{{ i }} {% else %}none"
        "{% endfor %}|{% for x in [] %}{{ x }}{% else %}empty{% endfor %}"
    )
    assert render(environment().from_string(source), {}) == "1:2 2:3 |empty"


def test_a_join_of_a_generator_joins_its_items_once_checked():
    # the size check reads a generator's items; the join must get those items, not the
    # emptied generator (it used to render "" here)
    source = "{{ '-'.join(range(4) | map('string')) }}|{{ range(3) | map('string') | join(',') }}"
    assert render(environment().from_string(source), {}) == "0-1-2-3|0,1,2"
