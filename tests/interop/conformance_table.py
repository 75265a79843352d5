"""The table of an MCP conformance run: one line per server scenario, its result, and the reason
when it cannot apply (not_applicable.txt); then the counts. Exit 1 when a scenario that applies
failed. Outside pytest (run.sh runs the suite, which needs npm).

Usage: python3 conformance_table.py RESULTS_DIR GENERATED_SERVER_DIR
RESULTS_DIR holds SCENARIO.txt (the suite's output) and SCENARIO.rc (its exit status) per scenario.

A scenario passes when none of its checks failed (checks listed as not applicable aside) and at
least one passed besides `wire-schema-valid` (which every scenario carries); with no check
passed or failed, the suite found nothing to check here (`skipped`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECK = re.compile(r"^\S+\s+\[(?P<id>[^\]]+?)\s*\]\s+(?P<status>SUCCESS|FAILURE|WARNING|SKIPPED|INFO)\b")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIRE_CHECK = "wire-schema-valid"


@dataclass(frozen=True)
class Exemption:
    kind: str  # "n/a", or "pending" while one of `files` is missing from the generated server
    reason: str
    files: tuple[str, ...] = ()


def exemptions(path: Path) -> dict[str, Exemption]:
    found: dict[str, Exemption] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, kind, reason = line.split("\t")
        kind, _, files = kind.partition(":")
        found[name] = Exemption(kind, reason, tuple(f for f in files.split(",") if f))
    return found


def checks(text: str) -> list[tuple[str, str]]:
    found = []
    for line in ANSI.sub("", text).splitlines():
        match = CHECK.match(line)
        if match:
            found.append((match["id"], match["status"]))
    return found


def main(results: Path, generated: Path) -> int:
    exempt = exemptions(HERE / "not_applicable.txt")

    def applies_now(ex: Exemption | None) -> bool:
        if ex is None:
            return True
        if ex.kind == "pending":
            return all((generated / name).is_file() for name in ex.files)
        return False

    rows, counts = [], {"passed": 0, "failed": 0, "not applicable": 0, "pending": 0}
    for output in sorted(results.glob("*.txt")):
        scenario = output.stem
        text = output.read_text(encoding="utf-8", errors="replace")
        status = results / f"{scenario}.rc"
        rc = status.read_text().strip() if status.exists() else "?"
        seen = checks(text)
        passed = [c for c, s in seen if s == "SUCCESS" and c != WIRE_CHECK]
        failed = [c for c, s in seen if s == "FAILURE"]
        excused = [c for c in failed if not applies_now(exempt.get(f"{scenario}/{c}"))]
        failed = [c for c in failed if c not in excused]
        warnings = sum(1 for _, s in seen if s == "WARNING")
        whole = exempt.get(scenario)
        if not seen and rc != "0":
            verdict = "error"
        elif failed:
            verdict = "fail"
        elif passed:
            verdict = "pass"
        else:
            verdict = "skipped"
        detail = f"{len(passed)} passed, {len(failed)} failed, {warnings} warnings"
        if excused:
            detail += f", {len(excused)} n/a"
        reason = ""
        if verdict == "pass":
            counts["passed"] += 1
            if excused:
                reason = "; ".join(f"{c}: {exempt[f'{scenario}/{c}'].reason}" for c in excused)
        elif not applies_now(whole):
            assert whole is not None
            verdict = whole.kind
            counts["pending" if whole.kind == "pending" else "not applicable"] += 1
            reason = whole.reason
        elif verdict == "skipped":
            counts["not applicable"] += 1
            reason = "the suite found nothing to check on this server"
        else:
            counts["failed"] += 1
            reason = "; ".join(failed) or f"exit status {rc}"
        rows.append((scenario, verdict, detail, reason))

    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'scenario':<{width}}  {'result':<8}  {'checks':<36}  reason")
    for scenario, verdict, detail, reason in rows:
        print(f"{scenario:<{width}}  {verdict:<8}  {detail:<36}  {reason}")
    print(", ".join(f"{n} {what}" for what, n in counts.items()) + f" (of {len(rows)} scenarios)")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
