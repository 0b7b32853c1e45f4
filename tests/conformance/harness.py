"""One way to run RFC-0020's command lines on every store, with a default config.

:class:`Rfc` takes a command line as the RFC writes it (without ``venom-mem`` and
``--json``) and answers the exit code and the one JSON line. Two kinds:

- :class:`DaemonRfc`: the real ``venom-mem`` executable and its on-demand daemon, on a
  SQLite file (no config file at all) or a PostgreSQL database (a config holding only
  ``store.url``, which is how a team store is chosen);
- :class:`LibraryRfc`: the in-memory store, which no daemon serves, so the line is parsed by
  the CLI's own parser (``venom_mem_cli.argv``), the token resolved as hello resolves it,
  the verb run by the core, and an error given the CLI's fix and exit code
  (``venom_mem_cli.fixes``, ``VenomError.exit_code``).

With embeddings on (:meth:`Rfc.embeddings_on`) the config gains only the ``embeddings``
keys RFC-0020 section 5 needs; the daemon embeds through its worker, and for the in-memory
store, which keeps no vectors table, :meth:`LibraryRfc.wait_embedded` embeds each memory's
text through the same HTTP embedder into the daemon's own vector index.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np

from tests.integration.test_hybrid_daemon import wait_ready
from tests.support.daemon_env import Result, World, make_world
from tests.support.postgres_server import PostgresServer
from venom_mem_core.config import Config
from venom_mem_core.errors import VenomError
from venom_mem_core.local import LocalClient
from venom_mem_core.records import Principal
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER, resolve_token

__all__ = ["STORES", "DaemonRfc", "LibraryRfc", "Rfc", "rfc_on"]

STORES = ("sqlite", "postgresql", "in-memory")
READY_S = 15.0


class Rfc(ABC):
    """A store, its caller, and its config: the defaults, plus what a test turns on."""

    store: str

    @abstractmethod
    def run(self, *argv: str, token: str | None = None) -> Result:
        """``venom-mem <argv> --json`` as ``token`` (None: no token, the unknown caller)."""

    @abstractmethod
    def embeddings_on(self, base_url: str, model: str, dimensions: int) -> None:
        """Turn embeddings on with only the keys section 5 requires."""

    @abstractmethod
    def wait_embedded(self, *ids: str) -> None:
        """Return once every memory named has its vector."""

    @property
    def daemon(self) -> World | None:
        """The daemon's world, for what only a daemon has (the wire, serve's refusals)."""
        return None

    def ok(self, *argv: str, token: str | None = None) -> Any:
        result = self.run(*argv, token=token)
        assert result.code == 0, (argv, result)
        return result.json

    def error(self, *argv: str, token: str | None = None) -> tuple[int, dict[str, Any]]:
        """The exit code and the ``error`` object of a call that must fail."""
        result = self.run(*argv, token=token)
        assert result.code != 0, (argv, result)
        body = result.json
        assert set(body) == {"error"}, body
        return result.code, body["error"]


@attrs.define
class DaemonRfc(Rfc):
    world: World
    store: str
    base_config: str = ""  # the store's own keys, inside .{ }

    def run(self, *argv: str, token: str | None = None) -> Result:
        return self.world.run(*argv, "--json", token=token)

    @property
    def daemon(self) -> World:
        return self.world

    def embeddings_on(self, base_url: str, model: str, dimensions: int) -> None:
        self.world.stop_daemon()  # the provider needs a restart (section 11)
        embeddings = (
            f'.embeddings = .{{ .provider = "http", .base_url = "{base_url}", '
            f'.model = "{model}", .dimensions = {dimensions} }}'
        )
        keys = ", ".join(k for k in (self.base_config, embeddings) if k)
        self.world.write_config(f".{{ {keys} }}\n")

    def wait_embedded(self, *ids: str) -> None:
        wait_ready(self.world, *ids, timeout=READY_S)


@attrs.define
class LibraryRfc(Rfc):
    app: App
    config: Config
    store: str = "in-memory"

    def run(self, *argv: str, token: str | None = None) -> Result:
        from venom_mem_cli.argv import parse_argv
        from venom_mem_cli.fixes import situate

        environ = {} if token is None else {"VENOM_MEM_TOKEN": token}
        verb = None
        try:
            verb, params, _ = parse_argv([*argv, "--json"])
            answer = LocalClient(self.app, self._principal(token)).call(verb.name, params)
        except VenomError as raw:
            error = situate(raw, verb, environ, list(argv))
            return Result(error.exit_code, json.dumps({"error": error.to_json()}) + "\n", "")
        return Result(0, json.dumps(answer) + "\n", "")

    def _principal(self, token: str | None) -> Principal:
        if token == "@owner":
            return OWNER
        return resolve_token(self.app, token or "", unknown=self.config.grants.unknown)

    def embeddings_on(self, base_url: str, model: str, dimensions: int) -> None:
        from venom_mem_adapters.embeddings.service import embedder_from_config
        from venom_mem_adapters.embeddings.vector_index import VectorIndex

        self.config = Config.from_mapping(
            {
                "embeddings": {
                    "provider": "http",
                    "base_url": base_url,
                    "model": model,
                    "dimensions": dimensions,
                }
            }
        )
        self.app.embedder = embedder_from_config(self.config.embeddings)
        self.app.vectors = VectorIndex(model=model, dimensions=dimensions)
        self.app.settings = self.config.memory_settings()

    def wait_embedded(self, *ids: str) -> None:
        from venom_mem_adapters.embeddings.vector_index import RowMeta, VectorIndex
        from venom_mem_core.embedding_text import embedding_input

        index, embedder = self.app.vectors, self.app.embedder
        assert isinstance(index, VectorIndex)
        assert embedder is not None
        limit = self.config.embeddings.max_input_bytes
        for id_ in ids:
            with self.app.store.read() as tx:
                memory = tx.get_memory(int(id_[1:]))
            assert memory is not None, id_
            (vector,) = embedder.embed([embedding_input(memory.title, memory.content, limit)],
                                       timeout_s=10)  # fmt: skip
            unit = np.asarray(vector, dtype=np.float64)
            meta = RowMeta(space=memory.space, author=memory.author.principal,
                           kind=memory.kind, tags=tuple(memory.tags),
                           session=memory.session)  # fmt: skip
            index.upsert(memory.id, (unit / np.linalg.norm(unit)).astype(np.float32), meta)


@contextmanager
def rfc_on(store: str, postgres: PostgresServer | None) -> Iterator[Rfc]:
    """A fresh store of the kind named, with a default config."""
    if store == "in-memory":
        from venom_mem_core.clock import SystemClock
        from venom_mem_core.inmemory import InMemoryStore

        config = Config.defaults()
        backing = InMemoryStore()
        try:
            app = App(store=backing, clock=SystemClock(), settings=config.memory_settings())
            yield LibraryRfc(app=app, config=config)
        finally:
            backing.close()
        return
    with make_world() as world:
        base = ""
        if store == "postgresql":
            assert postgres is not None
            options = postgres.fresh_url("rfc").split("&options=", 1)[1]
            world.env.update(postgres.environ)
            base = f'.store = .{{ .url = "postgresql:///postgres?options={options}" }}'
            world.write_config(f".{{ {base} }}\n")
        yield DaemonRfc(world=world, store=store, base_config=base)
