"""docs/reliability.md cites tests and commands: each cited test exists, and the soak command
it shows runs with the flags it uses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"


def test_every_test_the_doc_cites_exists() -> None:
    text = DOC.read_text()
    paths = set(re.findall(r"tests/[\w/]+\.py", text))
    assert paths, "the doc cites no test file"
    for path in paths:
        assert (ROOT / path).is_file(), path
    sources = "\n".join(
        p.read_text()
        for d in ("reliability", "security")
        for p in (ROOT / "tests" / d).glob("*.py")
    )
    names = set(re.findall(r"(?<![/\w])(test_\w+)\b(?!\.py)", text))
    for name in names:
        assert f"def {name}(" in sources, f"the doc cites {name}, which no test defines"


def test_the_soak_command_in_the_doc_takes_its_flags() -> None:
    text = DOC.read_text()
    [command] = re.findall(r"^\.venv/bin/python (bench/soak\.py.*)$", text, re.MULTILINE)
    flags = re.findall(r"--[\w-]+", command)
    shown = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    for flag in flags:
        assert flag in shown, flag
