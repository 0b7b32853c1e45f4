"""docs/search.md, run as written: its config block loads, and its commands are the ones
doctor's ``search.ranking`` gives for the model it measured best with them."""

from __future__ import annotations

from pathlib import Path

from venom_mem_adapters.config import load_config
from venom_mem_adapters.daemon.ops.doctor_search import search_check
from venom_mem_core.config import Config

DOC = Path(__file__).parents[2] / "docs" / "search.md"


def blocks(language: str) -> list[str]:
    parts = DOC.read_text().split("```")
    return [p[len(language) + 1 :] for p in parts[1::2] if p.startswith(language + "\n")]


def test_the_config_block_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.zon"
    path.write_text(blocks("zig")[0])
    search = load_config(path).search
    assert (search.fusion, search.query_mode) == ("convex", "natural")
    assert search.min_similarity == 0.0


def test_the_commands_are_doctors_fix_for_minilm() -> None:
    commands = [line.removeprefix("$ ") for line in blocks("console")[0].splitlines() if line]
    on = {"provider": "http", "base_url": "http://127.0.0.1:11434/v1", "dimensions": 384}
    config = Config.from_mapping({"embeddings": {**on, "model": "all-MiniLM-L6-v2"}})
    assert search_check(config)["fix"] == " && ".join(commands)
