"""One sentence for what a change did, shown instead of its bare fields: ``stored m3 in
user (revision 1)``. Verbs without one (reads, and verbs added later) render as a block."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.text import Text

from venom_mem_core.manifest_types import Verb

from .cells import clean

__all__ = ["headline"]

R = Mapping[str, Any]


def _add(r: R, p: R) -> str:
    where = f" in {clean(p['space'])}" if p.get("space") else ""
    if r.get("changed") is False:
        return (
            f"{r['id']} already holds this text{where}: nothing changed (revision {r['revision']})"
        )
    return f"stored {r['id']}{where} (revision {r['revision']})" + _similar(r)


def _update(r: R, _p: R) -> str:
    if r.get("changed") is False:
        return f"{r['id']} already reads so: nothing changed (revision {r['revision']})"
    return f"updated {r['id']}: now at revision {r['revision']}" + _similar(r)


def _similar(r: R) -> str:
    """The near-duplicates memory.add and memory.update point out, listed below the line."""
    count = len(r.get("similar") or ())
    if not count:
        return ""
    noun = "memory says" if count == 1 else "memories say"
    return (
        f"\n{count} other {noun} much the same (below): update or delete one rather than keep both"
    )


_MATCHES = {"exact": "its whole text", "substring": "a piece only it holds"}


def _matched(r: R) -> str:
    return _MATCHES.get(r.get("match", ""), "its text")


def _replace(r: R, _p: R) -> str:
    if r.get("changed") is False:
        return f"{r['id']} already reads so: nothing changed (revision {r['revision']})"
    return (
        f"replaced the text of {r['id']}, found by {_matched(r)}: now at revision "
        f"{r['revision']}" + _similar(r)
    )


def _session(r: R, _p: R) -> str:
    if r.get("changed") is False:
        return f"session {r['session']} was already recorded"
    return f"started session {r['session']}"


def _client(r: R, _p: R) -> str:
    expires = f", expires {r['expires']}" if r.get("expires") else ""
    return (
        f"added client {clean(r['client'])} as {r['principal']}{expires}. Its token, shown "
        f"once:\n{r['token']}\nGive it to the harness as VENOM_MEM_TOKEN; keep it out of "
        "committed files."
    )


def _issued(r: R, _p: R) -> str:
    return f"issued {r['principal']}, expires {r['expires']}. Its token, shown once:\n{r['token']}"


def _search(r: R, p: R) -> str:
    count = len(r["results"])
    if not count:
        raise KeyError("results")  # the table's own "no memories match" line says it
    noun = "memory matches" if count == 1 else "memories match"
    fallback = f"; {clean(r['fallback'])}" if r.get("fallback") else ""
    return f"{count} {noun} {clean(p.get('query', ''))!r}, best first ({r['mode']}{fallback})"


def _imported(r: R, _p: R) -> str:
    """Per file: what is new and what the store already held (a re-run: all present)."""
    lines = []
    for f in r["files"]:
        verb = "would be added" if f.get("dry_run") else "added"
        lines.append(
            f"{clean(f['file'])}: {f['skipped']} already present, {f['memories']} {verb}"
            f" (sessions: {f['sessions_skipped']} already present, {f['sessions']} {verb};"
            f" space descriptions: {f['spaces_skipped']} already present, {f['spaces']} {verb};"
            f" links: {f.get('links_skipped', 0)} already present, {f.get('links', 0)} {verb};"
            f" inactive spaces: {f.get('inactive_spaces_skipped', 0)} already present,"
            f" {f.get('inactive_spaces', 0)} {verb})"
        )
        for w in f.get("would_write", ()):
            what = ", ".join(f"{k} {clean(v)}" for k, v in w.items() if k != "line")
            lines.append(f"  line {w['line']}: would write {what}")
    return "\n".join(lines)


def _doctor(r: R, _p: R) -> str:
    statuses = [c.get("status") for c in r.get("checks", [])]
    fails, warns = statuses.count("fail"), statuses.count("warn")
    if fails:
        return f"{fails} check{'s' * (fails > 1)} failed; the fixes are below"
    if warns:
        return f"{warns} warning{'s' * (warns > 1)}; the fixes are below"
    return f"all {len(statuses)} checks pass"


SENTENCES: dict[str, Callable[[R, R], str]] = {
    "memory.search": _search,
    "doctor": _doctor,
    "import": _imported,
    "memory.add": _add,
    "memory.update": _update,
    "memory.delete": lambda r, _p: (
        f"deleted {r['id']} (revision {r['revision']}); venom-mem memory restore --id "
        f"{r['id']} brings it back"
    ),
    "memory.replace": _replace,
    "memory.forget": lambda r, _p: (
        f"deleted {r['id']}, found by {_matched(r)} (revision {r['revision']}); venom-mem "
        f"memory restore --id {r['id']} brings it back"
    ),
    "memory.restore": lambda r, _p: f"restored {r['id']} (revision {r['revision']})",
    "memory.purge": lambda r, _p: f"erased {r['id']} and all its versions for good",
    "session.start": _session,
    "session.end": lambda r, _p: (
        f"ended session {r['session']}" if r.get("changed") else f"{r['session']} had ended"
    ),
    "session.purge": lambda r, _p: f"erased session {r['session']}",
    "client.add": _client,
    "client.remove": lambda r, _p: (
        f"removed client {clean(r['client'])} ({r['principal']}): its token is refused now"
    ),
    "grant.issue": _issued,
    "grant.revoke": lambda r, _p: f"revoked {r['principal']}",
    "config.set": lambda r, _p: (
        f"set {clean(r['key'])}"
        + ("; it applies after venom-mem restart" if r.get("restart_required") else "")
    ),
    "stop": lambda r, _p: f"stopped the daemon (pid {r.get('pid')})",
    "restart": lambda r, _p: (
        (f"stopped pid {r['stopped']}; " if r.get("stopped") else "")
        + f"a new daemon runs as pid {r.get('pid')}"
    ),
    "ping": lambda r, _p: f"the daemon answers (pid {r.get('pid')})",
}


def headline(verb: Verb, result: R, params: R) -> Text | None:
    sentence = SENTENCES.get(verb.name)
    if sentence is None:
        return None
    try:
        return Text(sentence(result, params))
    except KeyError:  # a shape this sentence doesn't know: the block says it all
        return None
