"""The MCP adapter (``venom-mem mcp``), in small modules:

- :mod:`.tools`: the tool catalog generated from the manifest, and argument checks
  (the manifest's own :func:`~venom_mem_core.params.check_params`);
- :mod:`.front`: ``initialize``, ``tools/list`` and ``ping`` answered from the manifest;
- :mod:`.relay`: the default adapter, lines relayed to the daemon's own MCP session
  (:mod:`venom_mem_adapters.daemon.mcp_session`, docs/adr/0038), standard library only;
- :mod:`.link`: the in-process adapter's one held connection to the daemon, lazy,
  serialized, reconnecting only when no byte of a request was accepted (RFC-0020 section
  8, lost replies);
- :mod:`.upstream`: the protocols the link and the server meet (for the type checker: the
  relay's modules import ``typing`` only under ``TYPE_CHECKING``);
- :mod:`.server`: the official SDK's low-level server, for the in-process adapter over
  stdio and for the daemon's sessions.

Only :mod:`.server` imports ``mcp`` (about 0.7 s), so nothing here is imported on purpose.
The entry point is :func:`venom_mem_adapters.mcp_server.run_stdio`.
"""

__all__: list[str] = []
