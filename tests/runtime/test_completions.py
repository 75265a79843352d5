"""completion/complete answers of the runtime (issue 31), source by source: prefix matching,
the 100-value limit with honest total/hasMore, context arguments, and a slow or failing source
answered with an empty list (and a logged error), never a dead request."""

from __future__ import annotations

import logging

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from lynxc.runtime.completions import CompletionHost, sql_statement

pytestmark = pytest.mark.anyio

DOCUMENT = {
    "prompts": {
        "paint": {
            "colour": {"function": "tests.fixtures.completions:colours"},
            "finish": {"values": ["Matt", "matte-black", "Gloss", *(f"m{i:03}" for i in range(150))]},
            "slow": {"function": "tests.fixtures.completions:slow"},
            "broken": {"function": "tests.fixtures.completions:broken"},
        }
    },
    "resources": {"paint://{colour}": {"colour": {"values": ["red", "green"]}}},
}
ARGUMENTS = {"paint": ["colour", "finish", "slow", "broken", "shade"]}


def host(seconds: float = 2.0) -> CompletionHost:
    return CompletionHost(DOCUMENT, ARGUMENTS, None, {}, seconds=seconds)


def prompt_request(argument: str, value: str, context: dict[str, str] | None = None, prompt: str = "paint"):
    return types.CompleteRequestParams(
        ref=types.PromptReference(name=prompt),
        argument=types.CompletionArgument(name=argument, value=value),
        context=types.CompletionContext(arguments=context) if context is not None else None,
    )


async def test_values_match_a_prefix_case_insensitively():
    answer = (await host().complete(None, prompt_request("finish", "MAT"))).completion
    assert answer.values == ["Matt", "matte-black"]
    assert (answer.total, answer.has_more) == (2, False)


async def test_at_most_100_values_with_the_total_and_has_more():
    answer = (await host().complete(None, prompt_request("finish", "m"))).completion
    assert len(answer.values) == 100
    assert (answer.total, answer.has_more) == (152, True)


async def test_a_function_gets_the_value_and_the_context_arguments():
    answer = (await host().complete(None, prompt_request("colour", "re", {"shade": "dark "}))).completion
    assert answer.values == ["dark red", "dark rebeccapurple"]


async def test_a_resource_template_variable_completes():
    request = types.CompleteRequestParams(
        ref=types.ResourceTemplateReference(uri="paint://{colour}"),
        argument=types.CompletionArgument(name="colour", value="g"),
    )
    assert (await host().complete(None, request)).completion.values == ["green"]


async def test_a_slow_source_gives_an_empty_list_and_a_logged_error(caplog):
    with caplog.at_level(logging.ERROR, "lynxc.runtime"):
        answer = (await host(seconds=0.2).complete(None, prompt_request("slow", ""))).completion
    assert (answer.values, answer.has_more) == ([], False)
    assert "was stopped" in caplog.text


async def test_a_failing_source_gives_an_empty_list_and_a_logged_error(caplog):
    with caplog.at_level(logging.ERROR, "lynxc.runtime"):
        answer = (await host().complete(None, prompt_request("broken", ""))).completion
    assert answer.values == []
    assert "the completion source is down" in caplog.text


async def test_an_argument_without_a_source_completes_to_nothing():
    assert (await host().complete(None, prompt_request("shade", "x"))).completion.values == []


@pytest.mark.parametrize(
    ("request_", "named"),
    [
        (prompt_request("colour", "", prompt="nope"), "nope"),
        (prompt_request("hue", ""), "hue"),
        (prompt_request("colour", "x" * 70_000), "argument.value"),
    ],
)
async def test_unknown_prompts_and_arguments_are_invalid_params_naming_them(request_, named):
    with pytest.raises(MCPError) as raised:
        await host().complete(None, request_)
    assert raised.value.code == types.INVALID_PARAMS
    assert named in raised.value.message


def test_a_sql_source_runs_inside_a_bounded_select():
    statement = sql_statement("SELECT name FROM t -- a comment")
    assert statement.startswith("SELECT * FROM (\nSELECT name FROM t -- a comment\n)")
    assert statement.endswith("LIMIT 101")
