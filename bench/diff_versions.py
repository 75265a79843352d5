"""`lynxc diff` speed: 100 successive versions of a 100-tool server, time per version pair.

The server is synthetic but shaped like real ones: each tool has 4-12 parameters (strings with
bounds, integers with ranges, enums, nullable unions, arrays) and an output schema with `$defs`.
Each version applies 1-20 seeded mutations of the kinds real releases make (descriptions,
bounds, enum values, new or removed parameters, required lists, annotations, output fields).
Timed per pair: diff + judge (`review_pair`), and with the markdown rendering; as a yardstick,
parsing the two versions' JSON (`json.loads`) in the same run.

    python bench/diff_versions.py [--tools 100] [--versions 100] [--smoke]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import statistics
import time
from typing import Any

from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.render import render_markdown
from lynxc.compiler.wire import ServerWire


def make_tool(rng: random.Random, index: int) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for p in range(rng.randint(4, 12)):
        kind = rng.choice(["string", "integer", "enum", "nullable", "array"])
        name = f"p{p}_{kind}"
        if kind == "string":
            params[name] = {"type": "string", "minLength": 1, "maxLength": rng.choice([64, 256, 4096])}
        elif kind == "integer":
            params[name] = {
                "type": "integer",
                "minimum": 0,
                "maximum": rng.choice([10, 100, 1000]),
                "default": 5,
            }
        elif kind == "enum":
            params[name] = {"type": "string", "enum": ["a", "b", "c"], "default": "a"}
        elif kind == "nullable":
            params[name] = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
        else:
            params[name] = {"type": "array", "items": {"type": "string"}, "maxItems": 20}
        params[name]["description"] = f"Parameter {p} of tool {index}: " + "words " * rng.randint(3, 20)
    return {
        "name": f"tool_{index:03}",
        "title": f"Tool {index}",
        "description": "Does a thing. " * rng.randint(5, 40),
        "inputSchema": {
            "type": "object",
            "properties": params,
            "required": sorted(rng.sample(sorted(params), k=2)),
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "total": {"type": "integer", "minimum": 0},
                "status": {"type": "string", "enum": ["ok", "partial"]},
            },
            "required": ["items", "total"],
            "$defs": {
                "Item": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "score": {"type": "number"}},
                }
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }


def mutate(rng: random.Random, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = copy.deepcopy(tools)
    for _ in range(rng.randint(1, 20)):
        tool = rng.choice(tools)
        params = tool["inputSchema"]["properties"]
        name = rng.choice(sorted(params))
        action = rng.randrange(8)
        if action == 0:
            params[name]["description"] += " Updated."
        elif action == 1 and "maximum" in params[name]:
            params[name]["maximum"] = rng.choice([5, 50, 500, 5000])
        elif action == 2 and "enum" in params[name]:
            params[name]["enum"] = params[name]["enum"] + [f"v{rng.randrange(99)}"]
        elif action == 3:
            params[f"new_{rng.randrange(10**6)}"] = {"type": "string", "description": "New."}
        elif action == 4 and len(params) > 3:
            del params[name]
            tool["inputSchema"]["required"] = [r for r in tool["inputSchema"]["required"] if r != name]
        elif action == 5:
            tool["annotations"]["idempotentHint"] = rng.choice([True, False])
        elif action == 6:
            tool["outputSchema"]["properties"][f"field_{rng.randrange(10**6)}"] = {"type": "string"}
        else:
            tool["description"] += " More."
    return tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--versions", type=int, default=100)
    args = parse_args_with_smoke(parser, tools=10, versions=5)
    rng = random.Random(7)
    versions = [[make_tool(rng, i) for i in range(args.tools)]]
    for _ in range(args.versions - 1):
        versions.append(mutate(rng, versions[-1]))
    payloads = [json.dumps({"tools": tools}) for tools in versions]

    review_times, render_times, parse_times, findings = [], [], [], 0
    for old_text, new_text in itertools.pairwise(payloads):
        start = time.perf_counter()
        old, new = json.loads(old_text)["tools"], json.loads(new_text)["tools"]
        parse_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = review_pair(ServerWire("bench", old, "old"), ServerWire("bench", new, "new"))
        review_times.append(time.perf_counter() - start)
        render_markdown([result])
        render_times.append(time.perf_counter() - start)
        findings += len(result.findings)

    size = len(payloads[0]) / 1024
    print(
        f"{args.versions} versions of a {args.tools}-tool server ({size:.0f} KiB of tools/list JSON each), "
        f"{len(review_times)} pairs, {findings} findings in all"
    )
    for label, times in (
        ("diff + judge", review_times),
        ("diff + judge + markdown", render_times),
        ("json.loads of both (yardstick)", parse_times),
    ):
        times_ms = sorted(t * 1000 for t in times)
        p95 = times_ms[int(0.95 * (len(times_ms) - 1))]
        print(f"  {label:<32} median {statistics.median(times_ms):6.2f} ms  p95 {p95:6.2f} ms per pair")
    ratio = statistics.median(review_times) / statistics.median(parse_times)
    print(f"  diff + judge / json.loads: {ratio:.1f}x")


if __name__ == "__main__":
    main()
