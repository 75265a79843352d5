"""The try-it page of `lynxc dev --transport http` in a real browser (Chromium through
Playwright): a real `lynxc dev` process on a small project of its own whose tool takes enums,
arrays, nested objects and bounded numbers and reports progress, driven as a person would.
Every wait has a generous deadline; nothing asserts a time."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.conftest import LYNXC, ROOT, free_port
from tests.e2e.test_dev import DevProcess, edit
from tests.fixtures.browser import browser_page, chromium, screenshot, serious_violations  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser
DEADLINE_MS = 60_000

SPEC = """\
lynxc: 1
server:
  name: trip
  version: 0.1.0
  title: Trip planner
  instructions: Plan a trip with `plan_trip`.
tools:
  - name: plan_trip
    title: Plan a trip
    backend: trip_backend:plan_trip
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false}
    description:
      purpose: Plan a trip to a city for some travellers and say what it costs.
      usage: Use it to price a stay; it books nothing. <script>alert("hostile")</script>
      behaviour: Pure computation that reports progress per traveller; the city atlantis fails.
      returns: The city, the nights and the total price.
    parameters:
      city:
        type: string
        required: true
        enum: [paris, rome, oslo, atlantis]
        description: Where to go.
      nights:
        type: integer
        minimum: 1
        maximum: 14
        default: 3
        description: How many nights to stay.
      travellers:
        type: array
        maxItems: 4
        description: Who travels.
        items:
          type: object
          additionalProperties: false
          required: [name]
          properties:
            name: {type: string, minLength: 1, maxLength: 40, description: The traveller's name.}
            age: {type: integer, minimum: 0, maximum: 120, description: Age in years.}
      options:
        type: object
        description: Extras.
        additionalProperties: false
        properties:
          breakfast: {type: boolean, description: Breakfast every morning.}
          room: {type: string, enum: [single, double], description: The kind of room.}
      note:
        type: string
        nullable: true
        maxLength: 100
        description: A note for the hotel.
    output:
      type: object
      additionalProperties: false
      required: [city, nights, price, breakfast]
      properties:
        city: {type: string}
        nights: {type: integer, minimum: 1}
        price: {type: number, minimum: 0}
        breakfast: {type: boolean}
  - name: count_slowly
    title: Count slowly
    backend: trip_backend:count_slowly
    annotations: {idempotentHint: true}
    description:
      purpose: Count up to a number, reporting progress at every step.
      usage: Use it to see many progress messages; `plan_trip` is the real tool.
      behaviour: Pure computation that reports progress once per number.
      returns: The number counted to.
    parameters:
      upto: {type: integer, required: true, minimum: 1, maximum: 1000, description: The number to count to.}
    output:
      type: object
      required: [counted]
      properties:
        counted: {type: integer}
"""

BACKEND = '''\
"""Backends of the trip server: progress per traveller, and a tool error for atlantis."""

from __future__ import annotations

from lynxc.runtime.backend import backend
from lynxc.runtime.errors import ToolError


@backend(params={"city", "nights", "travellers", "options", "note"})
async def plan_trip(params, ctx):
    travellers = params.travellers or []
    for done, _ in enumerate(travellers, 1):
        await ctx.report_progress(done, len(travellers), f"priced traveller {done}")
    if params.city == "atlantis":
        raise ToolError("atlantis cannot be reached: no ferry goes there")
    price = 100.0 * params.nights * max(1, len(travellers))
    breakfast = bool(params.options and params.options.breakfast)
    return {"city": params.city, "nights": params.nights, "price": price, "breakfast": breakfast}


@backend(params={"upto"})
async def count_slowly(params, ctx):
    for done in range(1, params.upto + 1):
        await ctx.report_progress(done, params.upto, f"counted {done}")
    return {"counted": params.upto}
'''

NEW_TOOL = """\
  - name: weather
    title: Weather of a city
    backend: trip_backend:weather
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false}
    description:
      purpose: Say the weather of a city, always sunny.
      usage: Use it before `plan_trip` to pick a city.
      behaviour: Pure computation with no side effects.
      returns: The weather.
    parameters:
      city: {type: string, required: true, maxLength: 40, description: The city.}
    output:
      type: object
      required: [weather]
      properties:
        weather: {type: string}
"""

NEW_BACKEND = """

@backend(params={"city"})
async def weather(params, ctx):
    return {"weather": "sunny"}
"""


def make_project(root: Path) -> Path:
    subprocess.run([LYNXC, "--project", str(root), "init", "trip"], check=True, capture_output=True)
    for path in root.glob("*_backend.py"):
        path.unlink()
    (root / "specs" / "trip.yaml").write_text(SPEC)
    (root / "trip_backend.py").write_text(BACKEND)
    return root


def start_dev(root: Path) -> tuple[DevProcess, str]:
    port = free_port()
    dev = DevProcess(root, "--transport", "http", "--port", str(port))
    dev.wait_for("watching for changes")
    dev.wait_for("trip: serving build 1")
    return dev, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = make_project(tmp_path_factory.mktemp("tryit"))
    dev, base = start_dev(root)
    try:
        yield base
    finally:
        dev.stop()


def open_page(page: Any, base: str) -> list[str]:
    """Opens the trip page once its tools are listed; returns the list the page's tools/call
    requests are recorded in (the JSON-RPC bodies as sent)."""
    calls: list[str] = []

    def record(request: Any) -> None:
        if request.method == "POST" and '"tools/call"' in (request.post_data or ""):
            calls.append(request.post_data)

    page.on("request", record)
    page.goto(f"{base}/trip/")
    page.wait_for_selector("#tool-section:not([hidden])", timeout=DEADLINE_MS)
    # Locators, not wait_for_function: the page's CSP forbids the eval that polling a string needs.
    page.locator('#connection[data-state="connected"]').wait_for(timeout=DEADLINE_MS)
    return calls


def only_loopback(requests: list[str]) -> list[str]:
    return [
        url
        for url in requests
        if urlsplit(url).hostname not in ("127.0.0.1", "localhost") and url != "data:,"
    ]


def test_refuses_out_of_bounds_then_calls_and_shows_it(browser_page: Any, served: str):  # noqa: F811
    page = browser_page
    calls = open_page(page, served)
    assert page.inner_text("h1") == "Try trip"
    assert page.input_value("#tool-select") == "plan_trip"
    # The hostile text of the description is text on the page, never markup.
    assert '<script>alert("hostile")</script>' in page.inner_text("#tool-description")
    assert page.locator("#tool-description script").count() == 0

    page.get_by_label("city").select_option("rome")
    assert page.get_by_label("nights").input_value() == "3"  # the default, prefilled
    page.get_by_role("button", name="Add item to travellers").click()
    page.get_by_role("button", name="Add item to travellers").click()
    page.get_by_label("name").nth(0).fill("Ada")
    page.get_by_label("age").nth(0).fill("36")
    page.get_by_label("name").nth(1).fill("Grace")
    page.get_by_label("age").nth(1).fill("200")  # out of bounds: at most 120
    page.get_by_label("breakfast").select_option("true")
    page.get_by_label("room").select_option("double")
    page.get_by_role("button", name="Add item to travellers").click()  # a third, then removed
    assert page.evaluate("document.activeElement.id") == page.get_by_label("name").nth(2).get_attribute("id")
    page.keyboard.type("Nobody")
    page.get_by_role("button", name="Remove travellers item 3").focus()
    page.keyboard.press("Enter")
    assert page.get_by_label("name").count() == 2
    page.get_by_role("checkbox", name="note: null").check()  # the nullable note, sent as null

    page.get_by_role("button", name="Call tool").click()
    problems = page.locator("#problems")
    problems.wait_for(state="visible")
    assert "1 problem" in problems.inner_text()
    assert "travellers › item 2 › age: Must be at most 120." in problems.inner_text()
    age = page.get_by_label("age").nth(1)
    assert age.get_attribute("aria-invalid") == "true"
    described = age.get_attribute("aria-describedby").split()
    error_text = page.locator(f"#{described[-1]}").inner_text()
    assert error_text == "Must be at most 120."
    assert calls == []  # refused before sending: no tools/call left the page

    age.fill("99")
    assert age.get_attribute("aria-invalid") is None  # re-checked as the person types
    page.get_by_role("button", name="Call tool").click()
    page.wait_for_selector("#result .status.ok", timeout=DEADLINE_MS)
    assert len(calls) == 1
    sent = json.loads(calls[0])["params"]
    assert sent["arguments"] == {
        "city": "rome",
        "nights": 3,
        "travellers": [{"name": "Ada", "age": 36}, {"name": "Grace", "age": 99}],
        "options": {"breakfast": True, "room": "double"},
        "note": None,
    }
    assert sent["_meta"]["progressToken"]
    result = page.inner_text("#result")
    assert "Structured content" in result
    structured = json.loads(page.inner_text("#result details.structured pre"))
    assert structured == {"city": "rome", "nights": 3, "price": 600, "breakfast": True}
    assert json.loads(page.inner_text("#result pre.text"))["price"] == 600
    assert "1 of 2: priced traveller 1" in result and "2 of 2: priced traveller 2" in result
    assert page.locator("#progress-bar").get_attribute("max") == "2"
    assert "Done in" in page.inner_text("#result .status")  # the wall time, whatever it is
    screenshot(page, "tryit", full_page=True)

    assert serious_violations(page) == []
    page.emulate_media(color_scheme="dark")  # the dark scheme's contrast too
    assert serious_violations(page) == []
    assert page.console_errors == []
    assert only_loopback(page.requests) == []


def test_tool_error_and_protocol_error_show(browser_page: Any, served: str):  # noqa: F811 (the fixture)
    page = browser_page
    calls = open_page(page, served)
    page.get_by_label("city").select_option("atlantis")
    page.get_by_role("button", name="Call tool").click()
    page.wait_for_selector("#result .status.error", timeout=DEADLINE_MS)
    assert "The tool answered with an error" in page.inner_text("#result .status")
    assert "no ferry goes there" in page.inner_text("#result pre.text.error")

    # The raw JSON mode is checked against the same schema: an unknown member is refused.
    page.get_by_label("Raw JSON").check()
    box = page.get_by_label("Arguments (a JSON object)")
    assert json.loads(box.input_value())["city"] == "atlantis"  # carried over from the form
    box.fill('{"city": "rome", "nights": 3, "pets": 2}')
    page.get_by_role("button", name="Call tool").click()
    page.locator("#problems").wait_for(state="visible")
    assert "pets: Not a property this tool takes." in page.inner_text("#problems")
    assert box.get_attribute("aria-invalid") == "true"
    assert len(calls) == 1

    # A JSON-RPC error: the server's answer to a call the page's own check cannot catch (a tool
    # that went away between listing and calling), shown with its code and message.
    page.evaluate("() => { const p = window.lynxcTryIt.page; p.tool = {...p.tool, name: 'gone_tool'}; }")
    box.fill('{"city": "rome"}')
    page.get_by_role("button", name="Call tool").click()
    page.wait_for_selector("#result .status.error", timeout=DEADLINE_MS)
    expect(page.locator("#result .status")).to_contain_text("JSON-RPC error", timeout=DEADLINE_MS)
    status = page.inner_text("#result .status")
    assert "JSON-RPC error -32602" in status and "gone_tool" in status
    assert len(calls) == 2
    assert page.console_errors == []
    assert only_loopback(page.requests) == []


def test_every_bundled_tool_gets_a_form(browser_page: Any, served: str):  # noqa: F811 (the fixture)
    """The page's own renderer and validator over every tool the bundled servers publish."""
    page = browser_page
    open_page(page, served)
    tools = []
    for path in sorted((ROOT / "generated").glob("*/tools.json")):
        for tool in json.loads(path.read_text())["tools"]:
            tools.append({"server": path.parent.name, "name": tool["name"], "schema": tool["inputSchema"]})
    assert len(tools) > 20
    outcome = page.evaluate(
        """(tools) => tools.map((tool) => {
            const box = document.createElement('div');
            document.body.append(box);
            const t = window.lynxcTryIt;
            const form = t.renderForm(tool.schema, box, {idPrefix: 'x'});
            const inputs = box.querySelectorAll('input, select, textarea');
            const unlabelled = [...inputs].filter((i) => !i.labels || i.labels.length === 0).length;
            const checked = t.validate(tool.schema, form.read());
            box.remove();
            return {name: `${tool.server}/${tool.name}`, form: t.formCanExpress(tool.schema),
                    json: box.querySelectorAll('.field-json').length,
                    properties: Object.keys(tool.schema.properties || {}).length,
                    fields: form.fields.size - 1, unlabelled, checked: Array.isArray(checked.problems)};
        })""",
        tools,
    )
    for item in outcome:
        assert item["form"], item
        assert item["fields"] >= item["properties"], item
        assert item["unlabelled"] == 0, item
        assert item["checked"], item
        assert item["json"] == 0, item  # every bundled parameter has a real control, no JSON box
    assert page.console_errors == []

    page.goto(f"{served}/")  # the index of the served servers
    page.get_by_role("link", name="trip").click()
    page.locator('#connection[data-state="connected"]').wait_for(timeout=DEADLINE_MS)
    assert serious_violations(page) == []
    assert page.console_errors == []


def bundled_schema(server: str, tool: str) -> dict[str, Any]:
    tools = json.loads((ROOT / "generated" / server / "tools.json").read_text())["tools"]
    return next(item["inputSchema"] for item in tools if item["name"] == tool)


def test_unions_and_maps_of_bundled_schemas(browser_page: Any, served: str):  # noqa: F811
    """lynx-mcp's `source` (a name, a list of names or null) and foxnose's `parents` (a map of
    names to text), rendered by the page and filled as a person would."""
    page = browser_page
    open_page(page, served)
    render = """([schema]) => {
        const box = document.createElement('div'); box.id = 'scratch'; document.body.append(box);
        window.scratch = window.lynxcTryIt.renderForm(schema, box, {idPrefix: 's'}); }"""
    read = "() => window.scratch.read()"
    page.evaluate(render, [bundled_schema("lynx-mcp", "search")])
    page.get_by_label("query").fill("ranking")
    assert page.get_by_label("source: send as").evaluate("(s) => s.options[s.selectedIndex].text") == "null"
    assert page.evaluate(read)["source"] is None  # its default
    page.get_by_label("source: send as").select_option(label="list of text")
    page.get_by_role("button", name="Add item to source value").click()
    page.get_by_label("source value item 1").fill("peps")
    assert page.evaluate(read)["source"] == ["peps"]
    page.get_by_label("source: send as").select_option(label="text")
    page.get_by_label("source value").fill("docs")
    assert page.evaluate(read)["source"] == "docs"

    page.evaluate("() => document.getElementById('scratch').remove()")
    page.evaluate(render, [bundled_schema("foxnose-knowledge", "get_record")])
    page.get_by_role("button", name="Add entry to parents").click()
    page.get_by_label("parents entry 1 name").fill("pep")
    page.get_by_label("parents entry 1 value").fill("8")
    assert page.evaluate(read)["parents"] == {"pep": "8"}
    page.get_by_role("button", name="Remove parents entry 1").click()
    assert "parents" not in page.evaluate(read)
    assert page.console_errors == []


def test_page_follows_the_build_keeping_values(browser_page: Any, tmp_path: Path):  # noqa: F811
    root = make_project(tmp_path / "project")
    dev, base = start_dev(root)
    try:
        page = browser_page
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        open_page(page, base)
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1]  # nothing wider than the phone's screen
        page.get_by_label("city").select_option("oslo")
        page.get_by_label("nights").fill("12")

        spec = root / "specs" / "trip.yaml"
        edit(spec, "maximum: 14", "maximum: 10")  # 12 no longer fits; oslo still does
        spec.write_text(spec.read_text() + NEW_TOOL)
        (root / "trip_backend.py").write_text(BACKEND + NEW_BACKEND)
        dev.wait_for("trip: serving build 2")
        page.locator('#tool-select option[value="weather"]').wait_for(state="attached", timeout=DEADLINE_MS)
        expect(page.locator("#form-fields")).to_contain_text("1–10", timeout=DEADLINE_MS)
        city = page.get_by_label("city").evaluate("(s) => s.options[s.selectedIndex].text")
        assert city == "oslo"  # still fits: kept
        assert page.get_by_label("nights").input_value() == "3"  # 12 no longer fits: the default

        page.select_option("#tool-select", "weather")
        page.get_by_role("textbox", name="city (required)").fill("Oslo")
        page.get_by_role("button", name="Call tool").click()
        page.wait_for_selector("#result .status.ok", timeout=DEADLINE_MS)
        assert json.loads(page.inner_text("#result details.structured pre")) == {"weather": "sunny"}
        assert serious_violations(page) == []
        assert page.console_errors == []
        assert only_loopback(page.requests) == []

        dev.stop()  # the page says it lost the server (its failed fetches are console errors now)
        expect(page.locator("#connection")).not_to_have_attribute(
            "data-state", "connected", timeout=DEADLINE_MS
        )
        assert page.inner_text("#connection").startswith(("Reconnecting", "Disconnected"))

        # A new `lynxc dev` on the same port: the page opens a new session and lists again.
        spec.write_text(spec.read_text().replace("Weather of a city", "Weather of any city"))
        dev = DevProcess(root, "--transport", "http", "--port", str(urlsplit(base).port))
        dev.wait_for("watching for changes")
        expect(page.locator("#connection")).to_have_attribute("data-state", "connected", timeout=DEADLINE_MS)
        expect(page.locator("#tool-heading")).to_have_text("Weather of any city", timeout=DEADLINE_MS)
    finally:
        dev.stop()


def nested_arrays(depth: int, min_items: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "minItems": min_items, "items": schema}
    return schema


HOSTILE_SCHEMAS = {
    # minItems at every level multiplies: 20**4 empty items if every level were filled in
    "nested minItems": {"type": "object", "properties": {"grid": nested_arrays(4, 20)}},
    "10k properties": {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(10000)}},
    "huge enum": {"type": "object", "properties": {"e": {"enum": list(range(50_000))}}},
    "$ref cycle": {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "properties": {"node": {"$ref": "#/$defs/Node"}},
    },
}


@pytest.mark.parametrize("name", list(HOSTILE_SCHEMAS))
def test_a_hostile_schema_gives_a_bounded_form(browser_page: Any, served: str, name: str):  # noqa: F811
    page = browser_page
    open_page(page, served)
    schema = HOSTILE_SCHEMAS[name]
    outcome = page.evaluate(
        """(text) => {
            const schema = JSON.parse(text);
            const box = document.createElement('div');
            document.body.append(box);
            const t = window.lynxcTryIt;
            const form = t.renderForm(schema, box, {idPrefix: 'h'});
            const checked = t.validate(schema, form.read());
            return {fields: form.fields.size, problems: checked.problems.length};
        }""",
        json.dumps(schema),
    )
    properties = len(schema["properties"])
    assert outcome["fields"] <= properties + 2_000, outcome
    assert page.console_errors == []


def test_hints_left_out_and_many_progress_messages(browser_page: Any, served: str):  # noqa: F811
    """A tool that declares few hints and reports progress 600 times: the page says what clients
    assume of the hints left out, and keeps the last progress messages, not 600 rows."""
    page = browser_page
    open_page(page, served)
    page.select_option("#tool-select", "count_slowly")
    # It declares no readOnlyHint, destructiveHint or openWorldHint: what MCP clients assume then.
    badges = page.locator("#tool-badges li").all_inner_texts()
    assert badges == ["destructive (assumed)", "idempotent", "open world (assumed)"]
    page.get_by_label("upto").fill("600")
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#result .status")).to_contain_text("Done in", timeout=DEADLINE_MS)
    log = page.locator("#result .progress-log li")
    assert log.count() <= 101  # the kept messages and the line saying earlier ones were dropped
    assert log.last.inner_text() == "600 of 600: counted 600"
    assert "earlier" in log.first.inner_text()
    assert page.console_errors == []
