"""The opencode context plugin ``setup opencode --apply`` installs (ADR 0044).

opencode 1.18 has no shell hook at session start; its one point is a plugin's
``experimental.chat.system.transform``, which sees each request's session ID and may add to
its system prompt. The plugin hands that session to ``venom-mem session hook --harness
opencode`` (as Claude Code and Codex hand their hooks JSON on stdin), once per session, and
adds what it prints. It imports nothing: ``@opencode-ai/plugin`` is types only, so the
plugin does not depend on what opencode fetches from npm into its config directory (which
it does at every start, with or without a plugin: measured, ADR 0044).
"""

from __future__ import annotations

import json

__all__ = ["PLUGIN_MARK", "plugin_text"]

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
