"""The validated configuration (RFC-0020 sections 5 and 11), as frozen records. No file I/O.

:meth:`Config.from_mapping` is the one way in from parsed text: it rejects unknown keys,
wrong types and out-of-range values with ``invalid_params.config`` (``data.key`` is the
dotted key; with a filename and the parser's lines, the message starts ``<file>:<line>:``).
A refused ``embeddings.base_url`` is ``invalid_params.embeddings_url`` with
``data.param = "embeddings.base_url"``.

``embeddings.api_key`` is a secret: it is left out of ``repr``, shown as ``"<secret>"`` by
:meth:`Config.get` and :meth:`Config.to_json`, and never quoted in an error message.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlsplit

import attrs

from .errors import VenomError
from .grammar import MAX_ISSUED_TTL_S
from .grants import parse_grants
from .records import Grant
from .search_options import FUSION_NAMES, QUERY_MODES
from .usecases.settings import MemorySettings

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "CONFIG_KEYS",
    "RESTART_KEYS",
    "SECRET_MASK",
    "STORE_URL_SECRETS",
    "Config",
    "DaemonConfig",
    "EmbeddingsConfig",
    "GrantsConfig",
    "MemoryConfig",
    "SearchConfig",
    "StoreConfig",
    "check_embeddings_url",
    "check_store_url",
    "is_loopback_url",
    "restart_required",
]

SECRET_MASK = "<secret>"
MAX_CONTENT_BYTES = 262_144
_SPEC = "venom_mem.spec"

Startup = Literal["on-demand", "explicit"]
Provider = Literal["off", "http"]


class _Invalid(VenomError):
    """A validation failure about one dotted key, before the file and line are known.

    It is a :class:`VenomError`, so building a record directly fails with a proper code;
    :meth:`Config.from_mapping` re-raises it with the location.
    """

    def __init__(
        self,
        key: str,
        what: str,
        *,
        code: str = "invalid_params.config",
        at: str | None = None,
        near: tuple[str, ...] = (),
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """The line named is that of ``at`` (a more precise path, such as a tuple item),
        else ``key``, else one of ``near``, else the nearest parent that has a line."""
        message = f"{key} {what}" if key else what
        super().__init__(code, message, {**(data or {}), "key": key})
        self.key = key
        self.at = at
        self.near = near

    def located(self, filename: str | None, lines: Mapping[str, int]) -> VenomError:
        line = None
        at = () if self.at is None else (self.at,)
        for key in (*at, self.key, *self.near, *_ancestors(self.key)):
            if key in lines:
                line = lines[key]
                break
        data: dict[str, Any] = dict(self.data)
        prefix = ""
        if filename is not None:
            data["file"] = filename
            prefix = f"{filename}: "
            if line is not None:
                data["line"] = line
                prefix = f"{filename}:{line}: "
        return VenomError(self.code, prefix + self.message, data)


def _ancestors(key: str) -> Iterable[str]:
    parts = key.split(".")
    for n in range(len(parts) - 1, 0, -1):
        yield ".".join(parts[:n])
    yield ""


# -- leaf fields -----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Spec:
    """What a leaf accepts: its kind, and a range or a set of choices."""

    kind: Literal["int", "float", "str", "grants"]
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    secret: bool = False

    def describe_range(self) -> str:
        return f"must be {_num(self.lo)} to {_num(self.hi)}"


def _num(value: float | None) -> str:
    return str(int(value)) if value is not None and value == int(value) else str(value)


def _check_leaf(inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """attrs validator for every leaf: type, range and choices from the field's spec."""
    spec: _Spec = attribute.metadata[_SPEC]
    key = f"{_section_names()[type(inst)]}.{attribute.name}"
    if spec.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Invalid(key, "must be an integer")
    elif spec.kind == "float":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _Invalid(key, "must be a number")
    elif spec.kind == "str":
        if not isinstance(value, str):
            raise _Invalid(key, "must be a string")
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value):
            # A path, URL, model name or key: a control character (a NUL above all, which
            # no path can hold) is a mistake, refused here rather than at serve.
            raise _Invalid(key, "must not contain control characters")
        if spec.choices and value not in spec.choices:
            raise _Invalid(key, "must be one of " + ", ".join(f'"{c}"' for c in spec.choices))
    elif not (isinstance(value, tuple) and all(isinstance(g, Grant) for g in value)):
        raise _Invalid(key, "must be a tuple of grants")
    if spec.lo is not None and spec.hi is not None and not spec.lo <= value <= spec.hi:
        raise _Invalid(key, spec.describe_range())


def _as_float(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _leaf(
    default: Any,
    kind: Literal["int", "float", "str", "grants"],
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple[str, ...] = (),
    secret: bool = False,
) -> Any:
    spec = _Spec(kind=kind, lo=lo, hi=hi, choices=choices, secret=secret)
    converter: Callable[[Any], Any] | None = _as_float if kind == "float" else None
    return attrs.field(
        default=default,
        validator=_check_leaf,
        converter=converter,
        repr=not secret,
        metadata={_SPEC: spec},
    )


# -- sections --------------------------------------------------------------------------------

# The keys the use cases read take their defaults from the use cases' own settings.
_USED = MemorySettings()

_STORE_URL_SCHEMES = ("postgresql", "postgres")
# libpq's parameters that carry a password; config.public_url (adapters) leaves them out too.
STORE_URL_SECRETS = frozenset({"password", "sslpassword"})
_STORE_URL_FIX = (
    "keep the password out of config.zon: put it in ~/.pgpass (chmod 600), a service file"
    ' (store.url = "postgresql:///?service=NAME") or PGPASSWORD in the daemon\'s environment'
)


def check_store_url(url: str) -> str:
    """``url`` if it names a PostgreSQL database with no password in it, else
    ``invalid_params.store_url`` (docs/adr/0028). Credentials come from libpq's own
    conventions only (service file, ~/.pgpass, PG* variables); the message never repeats
    what it refused."""

    def refuse(what: str) -> _Invalid:
        return _Invalid(
            "store.url", what, code="invalid_params.store_url", data={"fix": _STORE_URL_FIX}
        )

    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in _STORE_URL_SCHEMES:
        raise refuse("must be a postgresql:// URL (or empty for the SQLite store)")
    try:
        parts = urlsplit(url)
        _ = parts.port  # a malformed port raises here
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        raise refuse("is not a valid URL") from None
    if parts.password is not None:
        raise refuse("carries a password; venom-mem keeps none in config.zon")
    if any(key.lower() in STORE_URL_SECRETS for key, _ in query):
        raise refuse("carries a password parameter; venom-mem keeps none in config.zon")
    return url


@attrs.frozen(kw_only=True)
class StoreConfig:
    path: str = _leaf("", "str")
    # Extension (docs/adr/0028): a PostgreSQL database instead of the SQLite file.
    url: str = _leaf("", "str")

    def __attrs_post_init__(self) -> None:
        # RFC-0020 section 6: the root MUST be absolute. A relative one would be resolved
        # against the daemon's cwd, which is / for an on-demand daemon.
        if self.path and not self.path.startswith("/"):
            raise _Invalid("store.path", "must be an absolute path (or empty for the default)")
        if self.url:
            check_store_url(self.url)
            if self.path:
                raise _Invalid("store.url", "and store.path name two stores: set one of them")


@attrs.frozen(kw_only=True)
class DaemonConfig:
    # RUF009: _leaf returns an attrs field (like attrs.field), not a shared default value.
    startup: Startup = _leaf("on-demand", "str", choices=("on-demand", "explicit"))  # noqa: RUF009
    startup_timeout_ms: int = _leaf(5000, "int", lo=1, hi=600_000)
    idle_timeout_ms: int = _leaf(300_000, "int", lo=1000, hi=86_400_000)
    # Extension (docs/adr/0038): whether ``venom-mem mcp``, finding no daemon at its start,
    # spawns a standby that loads the daemon's modules for the first call's launch. No
    # daemon starts before that call either way (RFC-0020 section 8).
    mcp_standby: str = _leaf("on", "str", choices=("on", "off"))


@attrs.frozen(kw_only=True)
class MemoryConfig:
    max_content_bytes: int = _leaf(_USED.max_content_bytes, "int", lo=1, hi=MAX_CONTENT_BYTES)
    max_versions: int = _leaf(_USED.max_versions, "int", lo=1, hi=1000)
    tombstone_days: int = _leaf(_USED.tombstone_days, "int", lo=1, hi=36_500)
    # Extension (docs/adr/0043): memory.add's and memory.update's ``similar`` at or over this
    # score; 0 switches it off (no ranking at all).
    similar_threshold: float = _leaf(_USED.similar_threshold, "float", lo=0.0, hi=1.0)


@attrs.frozen(kw_only=True)
class SearchConfig:
    min_similarity: float = _leaf(_USED.min_similarity, "float", lo=-1.0, hi=1.0)
    # Extensions (docs/adr/0015, 0016): a store's default for memory.search's params.
    query_mode: str = _leaf(_USED.query_mode, "str", choices=QUERY_MODES)
    fusion: str = _leaf(_USED.fusion, "str", choices=FUSION_NAMES)


@attrs.frozen(kw_only=True)
class EmbeddingsConfig:
    """Off by default. ``provider = "http"`` needs base_url, model and dimensions >= 1."""

    provider: Provider = _leaf("off", "str", choices=("off", "http"))  # noqa: RUF009 (as above)
    base_url: str = _leaf("", "str")
    model: str = _leaf("", "str")
    dimensions: int = _leaf(0, "int", lo=0, hi=65_536)
    api_key: str = _leaf("", "str", secret=True)
    max_input_bytes: int = _leaf(_USED.embed_input_bytes, "int", lo=1, hi=1_048_576)
    query_timeout_ms: int = _leaf(_USED.query_timeout_ms, "int", lo=1, hi=600_000)
    batch_timeout_ms: int = _leaf(30000, "int", lo=1, hi=3_600_000)
    warn_vectors: int = _leaf(100_000, "int", lo=1, hi=10**12)

    def __attrs_post_init__(self) -> None:
        if self.base_url:
            problem = _url_problem(self.base_url)
            if problem is not None:
                raise _Invalid(
                    "embeddings.base_url",
                    problem,
                    code="invalid_params.embeddings_url",
                    data={"param": "embeddings.base_url"},
                )
        if self.provider != "http":
            return
        near = ("embeddings.provider",)
        if not self.base_url:
            raise _Invalid("embeddings.base_url", 'must be set when provider is "http"', near=near)
        if not self.model:
            raise _Invalid("embeddings.model", 'must be set when provider is "http"', near=near)
        if self.dimensions < 1:
            raise _Invalid(
                "embeddings.dimensions", 'must be at least 1 when provider is "http"', near=near
            )


@attrs.frozen(kw_only=True)
class GrantsConfig:
    """Rights of the ``unknown`` principal, and the longest life of a ``grant.issue`` token."""

    unknown: tuple[Grant, ...] = _leaf((Grant(right="read", scope="*"),), "grants")
    max_token_ttl: int = _leaf(_USED.max_token_ttl, "int", lo=1, hi=MAX_ISSUED_TTL_S)


RESTART_KEYS: frozenset[str] = frozenset(
    {
        "store.path",
        "store.url",
        "daemon.startup",
        "daemon.startup_timeout_ms",
        "daemon.idle_timeout_ms",
        "embeddings.provider",
        "embeddings.base_url",
        "embeddings.model",
        "embeddings.dimensions",
        "embeddings.api_key",
    }
)


def restart_required(key: str) -> bool:
    """True when a change to ``key`` (a leaf, a section, or ``""`` for all) needs a restart."""
    if key in RESTART_KEYS:
        return True
    return any(k.startswith(key + ".") for k in RESTART_KEYS) or key == ""


def _split_key(key: str, *, param: str | None = None) -> tuple[str, str | None]:
    """``"memory.max_versions"`` -> ``("memory", "max_versions")``; a section -> ``(s, None)``.

    An unknown key is ``invalid_params.config``; ``param`` names the caller's parameter.
    """
    section, dot, leaf = key.partition(".")
    if section not in _sections():
        known = f"the sections are {', '.join(_sections())}"
    elif dot and leaf not in _leaves(section):
        known = f"{section} has {', '.join(_leaves(section))}"
    else:
        return section, leaf if dot else None
    data = {"param": param} if param else None
    raise _Invalid(key, f"is an unknown key ({known})", data=data)


# -- the config ------------------------------------------------------------------------------


def _structure_leaf(key: str, spec: _Spec, value: Any) -> Any:
    """Turn a parsed value into what the record holds; the validators check the rest."""
    if spec.kind != "grants":
        return value
    if isinstance(value, Mapping) and not value:
        return ()  # .{} is an empty tuple here
    if not isinstance(value, list | tuple):
        raise _Invalid(key, 'must be a tuple of grants .{ .{ .right = "read", .scope = "*" } }')
    grants: list[Grant] = []
    for i, item in enumerate(value):
        try:
            # unknown "can only read" (RFC-0020, Motivation): no write, admin or spawn for
            # every process on the machine that has no token.
            grants.extend(parse_grants([item], param=key, allowed_rights=("read",)))
        except VenomError as err:
            at = f"{key}.{i}"
            raise _Invalid(key, f"item {i + 1} is a bad grant: {err.message}", at=at) from None
    return tuple(grants)


def _leaf_json(spec: _Spec, value: Any, *, reveal: bool) -> Any:
    if spec.kind == "grants":
        return [{"right": g.right, "scope": g.scope} for g in value]
    if spec.secret and value and not reveal:
        return SECRET_MASK
    return value


@attrs.frozen(kw_only=True)
class Config:
    """The whole configuration. Build it with :meth:`from_mapping` or :meth:`defaults`."""

    store: StoreConfig = attrs.field(factory=StoreConfig)
    daemon: DaemonConfig = attrs.field(factory=DaemonConfig)
    memory: MemoryConfig = attrs.field(factory=MemoryConfig)
    search: SearchConfig = attrs.field(factory=SearchConfig)
    embeddings: EmbeddingsConfig = attrs.field(factory=EmbeddingsConfig)
    grants: GrantsConfig = attrs.field(factory=GrantsConfig)

    def __attrs_post_init__(self) -> None:
        for name, cls in _sections().items():
            if not isinstance(getattr(self, name), cls):
                raise TypeError(f"Config.{name} must be a {cls.__name__}")

    @classmethod
    def defaults(cls) -> Config:
        """Section 11's defaults, with RFC-0005's grants defaults."""
        return cls()

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Any],
        *,
        lines: Mapping[str, int] | None = None,
        filename: str | None = None,
    ) -> Config:
        """Validate parsed config text; a missing key takes its default.

        ``lines`` maps dotted keys to the line they were read from (``""`` is the whole
        document); with ``filename`` every error message starts ``<file>:<line>:``.
        """
        try:
            config: Config = _converter().structure(data, Config)
        except _Invalid as err:
            raise err.located(filename, lines or {}) from None
        return config

    @classmethod
    def launch_view(
        cls,
        data: Mapping[str, Any],
        *,
        lines: Mapping[str, int] | None = None,
        filename: str | None = None,
    ) -> Config:
        """The ``store`` and ``daemon`` sections of parsed config text, checked as
        :meth:`from_mapping` checks them, every other section at its defaults, unread.

        What the command line reads to find or launch the daemon, without cattrs: neither
        section holds a leaf that needs structuring, so their records take the values as
        they are. The daemon loads the whole file when it starts, and a launched daemon's
        refusal reaches the launching command as its error (client/_launcher.py)."""
        try:
            top = _fields_of(data, "")
            return cls(
                **{
                    name: _sections()[name](**_fields_of(top.get(name, {}), name))
                    for name in _LAUNCH
                }
            )
        except _Invalid as err:
            raise err.located(filename, lines or {}) from None

    def _mapping(self, *, reveal: bool) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = {}
        for name in _sections():
            section = getattr(self, name)
            result[name] = {
                leaf: _leaf_json(spec, getattr(section, leaf), reveal=reveal)
                for leaf, spec in _leaves(name).items()
            }
        return result

    def to_json(self) -> dict[str, dict[str, Any]]:
        """Every section as JSON-ready values; a nonempty secret is ``"<secret>"``."""
        return self._mapping(reveal=False)

    def get(self, key: str | None = None) -> Any:
        """One key, one section, or (no key) everything, JSON-ready and secrets masked."""
        data = self.to_json()
        if not key:
            return data
        section, leaf = _split_key(key, param="key")
        return data[section] if leaf is None else data[section][leaf]

    def with_value(self, key: str, value: Any) -> Config:
        """A copy with one leaf changed, validated like a file (``config set``)."""
        section, leaf = _split_key(key, param="key")
        if leaf is None:
            raise _Invalid(key, "is a section; set one of its keys", data={"param": "key"})
        data = self._mapping(reveal=True)
        data[section][leaf] = value
        return Config.from_mapping(data)

    def diff(self, other: Config) -> list[str]:
        """The leaf keys whose values differ between two configs, in file order."""
        return [key for key in CONFIG_KEYS if _value(self, key) != _value(other, key)]

    def reloaded(self, new: Config) -> tuple[Config, list[str]]:
        """What a reload applies: ``new``, but keeping this config's value of every restart
        key; and the changed keys that wait for a restart."""
        pending = [key for key in self.diff(new) if key in RESTART_KEYS]
        overrides: dict[str, dict[str, Any]] = {}
        for key in RESTART_KEYS:
            section, leaf = key.split(".")
            overrides.setdefault(section, {})[leaf] = _value(self, key)
        effective = attrs.evolve(
            new,
            **{name: attrs.evolve(getattr(new, name), **kw) for name, kw in overrides.items()},
        )
        return effective, pending

    def memory_settings(self) -> MemorySettings:
        return MemorySettings(
            max_content_bytes=self.memory.max_content_bytes,
            max_versions=self.memory.max_versions,
            tombstone_days=self.memory.tombstone_days,
            similar_threshold=self.memory.similar_threshold,
            min_similarity=self.search.min_similarity,
            query_mode=self.search.query_mode,
            fusion=self.search.fusion,
            max_token_ttl=self.grants.max_token_ttl,
            query_timeout_ms=self.embeddings.query_timeout_ms,
            embed_input_bytes=self.embeddings.max_input_bytes,
        )


@functools.cache
def _sections() -> dict[str, type[Any]]:
    """Each section's name (its field in :class:`Config`, in file order) and record."""
    return {f.name: f.default.factory for f in attrs.fields(Config) if f.default is not None}


@functools.cache
def _section_names() -> dict[type[Any], str]:
    return {cls: name for name, cls in _sections().items()}


def _leaves(section: str) -> dict[str, _Spec]:
    return {a.name: a.metadata[_SPEC] for a in attrs.fields(_sections()[section])}


CONFIG_KEYS: tuple[str, ...] = tuple(f"{s}.{leaf}" for s in _sections() for leaf in _leaves(s))
_LAUNCH = ("store", "daemon")  # what the command line reads (Config.launch_view)


def _fields_of(value: Any, key: str) -> Mapping[str, Any]:
    """A struct's fields (``.{}`` is an empty one), each key known: the first unknown one
    in file order is refused. ``key`` is the struct's dotted key, ``""`` for the file."""
    if isinstance(value, list | tuple) and not value:
        return {}
    if not isinstance(value, Mapping):
        if not key:
            raise _Invalid("", "the config must be a struct .{ .section = .{ ... }, ... }")
        raise _Invalid(key, "must be a struct .{ .key = value, ... }")
    for name in value:
        _split_key(f"{key}.{name}" if key else str(name))
    return value


@functools.cache
def _converter() -> cattrs.Converter:
    """The one structurer of config text, built on the first full load so that cattrs stays
    off the command line's path. Every record's hook comes from its fields: a section's
    field is structured by that section's hook, a leaf by its spec's (:func:`_structure_leaf`,
    which hands the value to the validators as read); what a file leaves out takes the
    field's default."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, override

    converter = cattrs.Converter()

    def hook(cls: type[Any], key: str) -> Callable[[Any, Any], Any]:
        leaves: dict[str, Any] = {
            a.name: override(struct_hook=_leaf_hook(f"{key}.{a.name}", a.metadata[_SPEC]))
            for a in attrs.fields(cls)
            if _SPEC in a.metadata
        }
        made = make_dict_structure_fn(
            cls,
            converter,
            _cattrs_forbid_extra_keys=False,  # _fields_of refuses them first, in file order
            _cattrs_detailed_validation=False,
            **leaves,
        )
        return lambda value, _: made(_fields_of(value, key), cls)

    for name, cls in _sections().items():
        converter.register_structure_hook(cls, hook(cls, name))
    converter.register_structure_hook(Config, hook(Config, ""))
    return converter


def _leaf_hook(key: str, spec: _Spec) -> Callable[[Any, Any], Any]:
    return lambda value, _: _structure_leaf(key, spec, value)


def _value(config: Config, key: str) -> Any:
    section, leaf = key.split(".")
    return getattr(getattr(config, section), leaf)


# -- embeddings URL --------------------------------------------------------------------------


def _loopback_host(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("127.0.0.0/8")
    return address == ipaddress.IPv6Address("::1")


def _url_problem(url: str) -> str | None:
    """Why ``url`` can't be an embeddings base URL, or None. Never quotes credentials."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not a valid URL"
    del port
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return "must be an https:// URL, or http:// to a loopback host"
    if parts.username is not None or parts.password is not None:
        return "must not carry credentials; put the key in embeddings.api_key"
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        return "must not have a query or fragment"
    if parts.scheme == "http" and not _loopback_host(parts.hostname):
        return (
            "must be https, or http only for a loopback host (127.0.0.0/8, ::1, localhost); "
            f"{parts.hostname} is not loopback"
        )
    return None


def check_embeddings_url(url: str) -> None:
    """Raise ``invalid_params.embeddings_url`` unless ``url`` is https, or http to loopback."""
    problem = _url_problem(url)
    if problem is not None:
        raise VenomError.param(
            "embeddings_url", "embeddings.base_url", f"embeddings.base_url {problem}"
        )


def is_loopback_url(url: str) -> bool:
    """True when the URL's host is loopback, so memory text stays on this machine (doctor)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host is not None and _loopback_host(host)
