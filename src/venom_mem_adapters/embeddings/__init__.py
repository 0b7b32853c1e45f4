"""Embeddings (RFC-0020 section 5): the HTTP provider, the in-daemon vector index, the
background worker and the service that ties them to the store and the daemon.

Only the daemon imports this package: it pulls in httpx and numpy, which the CLI's ``--json``
path must not pay for. Importing it constructs nothing.
"""

from .http_embedder import EmbeddingError as EmbeddingError
from .http_embedder import EmbedHealth as EmbedHealth
from .http_embedder import HttpEmbedder as HttpEmbedder
from .vector_index import RowMeta as RowMeta
from .vector_index import VectorIndex as VectorIndex

__all__ = ["EmbedHealth", "EmbeddingError", "HttpEmbedder", "RowMeta", "VectorIndex"]
