"""Adapters behind the core's ports: SQLite storage, sockets, HTTP embeddings.

Nothing is imported here on purpose: ``import venom_mem_adapters`` must stay free, so the CLI's
``--json`` path never pays for apsw, httpx or mcp it does not use. Import the subpackage you
need (``venom_mem_adapters.sqlite``).
"""
