"""The opencode context plugin ``setup opencode --apply`` installs (ADR 0044).

opencode 1.18 has no shell hook at session start; its one point is a plugin's
``experimental.chat.system.transform``, which sees each request's session ID and may add to
its system prompt. The plugin hands that session to ``venom-mem session hook --harness
opencode`` (as Claude Code and Codex hand their hooks JSON on stdin), once per session, and
adds what it prints. It imports nothing: ``@opencode-ai/plugin`` is types only, so the
plugin does not depend on what opencode fetches from npm into its config directory (which
it starts at every start, with or without a plugin; with one, opencode waits for that fetch
before it loads plugins: ADR 0044).
"""

from __future__ import annotations

import json

__all__ = ["FETCHED", "PLUGIN_MARK", "fetched_only_ours", "plugin_text"]

# What opencode's npm install writes into its config directory (and its .gitignore lists).
FETCHED = ("node_modules", "package.json", "package-lock.json", "bun.lock")
_PACKAGE = "@opencode-ai/plugin"

PLUGIN_MARK = "// venom-mem setup --apply wrote this; venom-mem setup opencode --remove removes it"

_BODY = """
export const VenomMem = async ({ directory }) => {
  const contexts = new Map();
  const contextOf = async (sessionID) => {
    const stdin = JSON.stringify({ session_id: sessionID, cwd: directory, source: "startup" });
    const hook = Bun.spawn([VENOM_MEM, "session", "hook", "--harness", "opencode"], {
      cwd: directory, stdin: new Blob([stdin]), stdout: "pipe", stderr: "ignore",
    });
    const text = await new Response(hook.stdout).text();
    await hook.exited;
    return text;
  };
  return {
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return;
      if (!contexts.has(input.sessionID)) {
        contexts.set(input.sessionID, contextOf(input.sessionID).catch(() => ""));
      }
      const text = await contexts.get(input.sessionID);
      if (text) output.system.push(text);
    },
  };
};
"""


def plugin_text(executable: str) -> str:
    """The plugin, running this ``venom-mem`` by its absolute path (opencode's PATH is the
    person's shell's, which may not hold it)."""
    return f"{PLUGIN_MARK}\nconst VENOM_MEM = {json.dumps(executable)};\n{_BODY}"


def fetched_only_ours(package_json: str | None) -> bool:
    """Whether opencode's ``package.json`` holds nothing but the package it fetches for
    plugins, so that taking its install out loses nothing of the person's."""
    import json as _json

    if package_json is None:
        return True
    try:
        data = _json.loads(package_json)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    deps = {
        name
        for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
        for name in (data.get(key) or {})
    }
    return deps <= {_PACKAGE} and set(data) <= {"dependencies"}
