"""How `lynxc test` reports: a line per case as pytest prints them, the mismatches of each
failure, a summary line; GitHub annotations at each failing example's line; JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TextIO

from .runner import CaseResult


def case_line(result: CaseResult) -> str:
    where = f" ({result.span})" if result.span is not None and result.span.file else ""
    line = f"{result.status} {result.id}{where}"
    return line + (f": {result.skipped}" if result.skipped is not None else "")


def failure_text(result: CaseResult) -> str:
    """The body of a failure: its arguments, then one indented block per mismatch."""
    lines = []
    if result.arguments is not None:
        import json

        lines.append(f"  arguments: {json.dumps(result.arguments, ensure_ascii=False)}")
    for problem in result.problems:
        first, *rest = problem.splitlines() or [""]
        lines.append(f"  - {first}")
        lines += [f"    {line}" for line in rest]
    return "\n".join(lines)


def summary(results: Sequence[CaseResult], seconds: float) -> str:
    failed = sum(not r.passed for r in results)
    skipped = sum(r.skipped is not None for r in results)
    passed = len(results) - failed - skipped
    parts = (
        [f"{passed} passed"]
        + ([f"{failed} failed"] if failed else [])
        + ([f"{skipped} skipped"] if skipped else [])
    )
    return f"{', '.join(parts)} in {seconds:.2f}s"


def write_text(out: TextIO, results: Sequence[CaseResult], seconds: float) -> None:
    """What follows the per-case lines: each failure in full, then the summary."""
    failures = [r for r in results if not r.passed]
    if failures:
        out.write("\n=== FAILURES ===\n")
        for result in failures:
            out.write(f"\n___ {result.id} ___\n")
            if result.span is not None and result.span.file:
                out.write(f"  at {result.span}\n")
            out.write(failure_text(result) + "\n")
    out.write(f"\n{summary(results, seconds)}\n")


def github_annotations(results: Sequence[CaseResult]) -> list[str]:
    """`::error file=...,line=...,col=...,title=...::message`, one per failure, as GitHub
    Actions reads them from a step's output (newlines escaped as %0A)."""
    lines = []
    for result in results:
        if result.passed:
            continue
        properties = []
        if result.span is not None and result.span.file:
            properties = [
                f"file={_property(result.span.file)}",
                f"line={result.span.line}",
                f"col={result.span.col}",
            ]
        properties.append(f"title={_property('lynxc test ' + result.id)}")
        message = _data(f"{result.id} failed\n{failure_text(result)}")
        lines.append(f"::error {','.join(properties)}::{message}")
    return lines


def junit_xml(results: Sequence[CaseResult], seconds: float) -> str:
    """JUnit XML as CI systems read it: a testsuite per server, a testcase per case."""
    root = ET.Element("testsuites", name="lynxc test", tests=str(len(results)), time=f"{seconds:.3f}")
    root.set("failures", str(sum(not r.passed for r in results)))
    for server in dict.fromkeys(r.server for r in results):
        cases = [r for r in results if r.server == server]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=server,
            tests=str(len(cases)),
            failures=str(sum(not r.passed for r in cases)),
            errors="0",
            skipped=str(sum(r.skipped is not None for r in cases)),
            time=f"{sum(r.seconds for r in cases):.3f}",
        )
        for result in cases:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{server}.{result.tool}",
                name=result.name,
                time=f"{result.seconds:.3f}",
            )
            if result.span is not None and result.span.file:
                case.set("file", result.span.file)
                case.set("line", str(result.span.line))
            if result.skipped is not None:
                ET.SubElement(case, "skipped", message=result.skipped)
            if not result.passed:
                failure = ET.SubElement(case, "failure", message=result.problems[0].splitlines()[0][:500])
                failure.text = failure_text(result)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
