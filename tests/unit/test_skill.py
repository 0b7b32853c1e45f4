"""The agent skill is generated from the manifest: front matter, conventions, T1, every verb."""

from __future__ import annotations

import pytest

from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.manifest_types import Manifest, Verb
from venom_mem_core.skill import SKILL_NAME, render_skill, skill_verbs, tool_name


def front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    assert lines[0] == "---"
    end = lines.index("---", 1)
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, _, value = line.partition(": ")
        fields[key] = value
    return fields


def test_front_matter_names_the_skill_and_describes_it() -> None:
    fields = front_matter(render_skill())
    assert set(fields) == {"name", "description"}
    assert fields["name"] == SKILL_NAME == "venom-mem"
    description = fields["description"]
    # A JSON string is a valid YAML double-quoted scalar, whatever punctuation it holds.
    assert description.startswith('"')
    assert description.endswith('"')
    assert "memory" in description.lower()


def test_it_carries_the_t1_sentence_and_the_conventions() -> None:
    text = render_skill()
    assert T1_SENTENCE in text
    assert "`user`" in text
    assert "`project/<name>`" in text
    assert "lowercase" in text
    assert "MCP" in text
    assert "unknown" in text  # why the CLI in a pane can't write
    assert "`session`" in text
    assert "session_dstart" in text


@pytest.mark.parametrize("verb", skill_verbs(), ids=lambda v: v.name)
def test_one_line_per_verb_with_its_tool_name(verb: Verb) -> None:
    lines = [line for line in render_skill().splitlines() if line.startswith(f"- `{verb.name}`(")]
    assert len(lines) == 1
    line = lines[0]
    assert verb.summary in line
    if verb.local:
        assert "CLI only" in line
    else:
        assert f"MCP `{tool_name(verb.name)}`" in line
    assert f"`venom-mem {verb.name.replace('.', ' ')}" in line
    for param in verb.params:
        if param.name != "follow":
            assert param.name + ("*" if param.required else "") in line


def test_every_verb_but_the_handshake_is_listed() -> None:
    listed = {v.name for v in skill_verbs()}
    assert listed == {v.name for v in MANIFEST.verbs} - {"hello"}


@pytest.mark.parametrize(
    ("verb", "tool"),
    [
        ("memory.add", "memory_dadd"),
        ("memory.search", "memory_dsearch"),
        ("skill.install", "skill_dinstall"),
        ("a_b.c", "a_ub_dc"),
        ("doctor", "doctor"),
    ],
)
def test_tool_names_follow_contract_section_7(verb: str, tool: str) -> None:
    assert tool_name(verb) == tool


def test_the_skill_follows_the_manifest_it_is_given() -> None:
    extra = Verb("memory.pin", "Pin a memory.", right="write")
    manifest = Manifest(
        format=MANIFEST.format,
        tool=MANIFEST.tool,
        summary=MANIFEST.summary,
        verbs=(*MANIFEST.verbs, extra),
    )
    assert "- `memory.pin`() — MCP `memory_dpin`" in render_skill(manifest)
    assert "memory.pin" not in render_skill()


def test_rendering_is_deterministic() -> None:
    assert render_skill() == render_skill()
    assert render_skill().endswith("\n")
