"""The shape of the verb manifest (RFC-0004): verbs, params, types, results, errors, rights.

Plain frozen classes that import nothing at all: the CLI's ``--json`` path reads the manifest,
and dataclasses (with inspect) or typing would cost it more than a third of its budget.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self

__all__ = ["ErrorDoc", "Field", "Manifest", "Param", "Type", "Verb"]


class _Frozen:
    """Attributes are set once, in ``__init__``; equality and repr come from ``_fields``.

    They live in the instance's ``__dict__``, not in slots: the manifest builds some 500 of
    these on the CLI's ``--json`` path, and one ``dict.update`` per :meth:`_set` costs half
    as much as an ``object.__setattr__`` per attribute."""

    _fields: tuple[str, ...] = ()

    def _set(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def replace(self, **changes: Any) -> Self:
        """A copy with some attributes changed (the classes take their fields as keywords)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Frozen)
            and type(other) is type(self)
            and (self._values() == other._values())
        )

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({inner})"


class Type(_Frozen):
    """A JSON value's type: ``string``, ``integer``, ``number``, ``boolean``, ``array``,
    ``object`` or ``any``, with the constraints the dispatch enforces. ``open``: an object
    whose members are not enumerated. ``id_prefix``: a string that is a record ID, ``m<N>``,
    ``s<N>`` or ``g<N>``.

    The grammar of a string or an array (RFC-0020 sections 2, 3, 4 and 7), published in the
    MCP input schemas and checked by :func:`venom_mem_core.validation.check_value`:

    - ``pattern``: an ECMA-262 regular expression the whole string matches (``^...$``);
    - ``min_bytes``/``max_bytes``: its length in UTF-8 bytes;
    - ``secret_free``: it may not hold a venom token (RFC-0020 section 2);
    - ``code``: the ``invalid_params.<code>`` of a value outside ``pattern`` or ``choices``
      (``type`` when unset); a length out of bounds is always ``invalid_params.range``;
    - ``rule``: what ``pattern`` asks, in words, for the error message;
    - ``min_items``/``max_items``/``unique``: an array's count and whether items repeat
      (a repeat is the items' ``code``).
    """

    _fields = (
        "choices",
        "code",
        "fields",
        "id_prefix",
        "items",
        "kind",
        "max",
        "max_bytes",
        "max_items",
        "min",
        "min_bytes",
        "min_items",
        "nullable",
        "open",
        "pattern",
        "rule",
        "secret_free",
        "unique",
    )
    kind: str
    items: Type | None
    choices: tuple[str, ...]
    min: int | None
    max: int | None
    max_items: int | None
    fields: tuple[Field, ...]
    nullable: bool
    open: bool
    id_prefix: str | None
    code: str | None
    max_bytes: int | None
    min_bytes: int | None
    min_items: int | None
    pattern: str | None
    rule: str | None
    secret_free: bool
    unique: bool

    def __init__(
        self,
        kind: str,
        items: Type | None = None,
        choices: tuple[str, ...] = (),
        min: int | None = None,
        max: int | None = None,
        max_items: int | None = None,
        fields: tuple[Field, ...] = (),
        nullable: bool = False,
        open: bool = False,
        id_prefix: str | None = None,
        *,
        code: str | None = None,
        max_bytes: int | None = None,
        min_bytes: int | None = None,
        min_items: int | None = None,
        pattern: str | None = None,
        rule: str | None = None,
        secret_free: bool = False,
        unique: bool = False,
    ) -> None:
        self._set(
            kind=kind,
            id_prefix=id_prefix,
            items=items,
            choices=choices,
            min=min,
            max=max,
            max_items=max_items,
            fields=fields,
            nullable=nullable,
            open=open,
            code=code,
            max_bytes=max_bytes,
            min_bytes=min_bytes,
            min_items=min_items,
            pattern=pattern,
            rule=rule,
            secret_free=secret_free,
            unique=unique,
        )


class Field(_Frozen):
    _fields = ("name", "required", "summary", "type")
    name: str
    summary: str
    type: Type
    required: bool

    def __init__(self, name: str, summary: str, type: Type, required: bool = False) -> None:
        self._set(name=name, summary=summary, type=type, required=required)


class Param(_Frozen):
    """One param. ``cli_only``: the command line's own switch (``events --follow``), which
    the CLI acts on itself by running the function of :mod:`venom_mem_cli.local` it names
    (``"follow"``): never sent to the daemon, never an MCP tool's input.
    ``pairs_with``: given exactly when that other param is (RFC-0020 section 7's ``relation``
    and ``parent``): the other alone is ``invalid_params.missing`` naming this one, this one
    alone is its type's ``code``."""

    _fields = ("cli_only", "default", "name", "pairs_with", "required", "summary", "type")
    name: str
    summary: str
    type: Type
    required: bool
    default: Any
    cli_only: str | None
    pairs_with: str | None

    def __init__(
        self,
        name: str,
        summary: str,
        type: Type,
        required: bool = False,
        default: Any = None,
        cli_only: str | None = None,
        *,
        pairs_with: str | None = None,
    ) -> None:
        self._set(name=name, summary=summary, type=type, required=required, default=default)
        self._set(cli_only=cli_only, pairs_with=pairs_with)

    @property
    def flag(self) -> str:
        """The CLI flag: ``harness_session`` is ``--harness-session``."""
        return "--" + self.name.replace("_", "-")


class ErrorDoc(_Frozen):
    _fields = ("code", "summary")
    code: str
    summary: str

    def __init__(self, code: str, summary: str) -> None:
        self._set(code=code, summary=summary)


class Verb(_Frozen):
    """One verb. ``right`` is what dispatch checks (``None``: anyone, e.g. ``hello``).
    ``resource`` is what it is checked on: the name of a param holding it (``space``, ``id``,
    ``session``), or a fixed resource (``*``, ``session:*``). With none, rows are filtered
    per caller instead. Admin verbs are always checked on ``*``.

    ``starts_daemon``: a CLI call may launch a missing daemon (RFC-0020 section 8).
    ``reply_ms``: how long a client waits for the reply before it reports
    ``unavailable.daemon_timeout``; ``0`` means the default for the verb's right
    (:attr:`reply_budget_ms`).
    ``one_of``: a call names at least one of these params (memory.update's changes); with
    none, ``invalid_params.missing`` names the first.

    Where it runs, the one table every host builds its dispatch from (docs/adr/0033); each
    names a function as ``module.function`` in its layer's package, imported by the host
    that runs it, which refuses to start when one is missing:

    - ``use_case``: a core use case in ``venom_mem_core.usecases`` (``"memories.add_memory"``),
      ``use_case(app, who, command)``; the daemon runs it on its writer when the verb's
      right is ``write`` or ``admin``, on its reader pool otherwise (:attr:`runs`);
    - ``op``: an operations verb the daemon answers from its own state, in
      ``venom_mem_adapters.daemon.ops`` (``"doctor.doctor_verb"``);
    - ``local``: runs in the CLI's process, not on the daemon: a function of
      ``venom_mem_cli.local`` (``"serve"``);
    - ``handshake``: the connection's own (``hello``), answered by the connection before
      any dispatch, so no host looks for its function;
    - none of them: a verb no host answers yet (a daemon refuses to start on one).

    ``audited``: the use case issues or revokes a token, so a daemon keeping an audit log
    refuses it when the log can't be written (docs/adr/0009). ``embeds``: the function (in
    ``venom_mem_core.usecases``) giving the text the use case will embed, so a host may
    embed it ahead of time (docs/adr/0026). ``mcp``: the MCP server offers it as a tool;
    by default every verb the daemon answers (a use case or an op) is one.
    """

    _fields = (
        "audited",
        "embeds",
        "errors",
        "examples",
        "handshake",
        "local",
        "mcp",
        "name",
        "one_of",
        "op",
        "params",
        "reply_ms",
        "resource",
        "result",
        "right",
        "starts_daemon",
        "summary",
        "use_case",
    )
    name: str
    summary: str
    params: tuple[Param, ...]
    result: Type
    errors: tuple[ErrorDoc, ...]
    right: str | None
    resource: str | None
    starts_daemon: bool
    local: str | None
    examples: tuple[dict[str, Any], ...]
    reply_ms: int
    one_of: tuple[str, ...]
    use_case: str | None
    op: str | None
    audited: bool
    embeds: str | None
    mcp: bool
    handshake: bool

    def __init__(
        self,
        name: str,
        summary: str,
        params: tuple[Param, ...] = (),
        result: Type | None = None,
        errors: tuple[ErrorDoc, ...] = (),
        right: str | None = "read",
        resource: str | None = None,
        starts_daemon: bool = False,
        local: str | None = None,
        examples: tuple[dict[str, Any], ...] = (),
        reply_ms: int = 0,
        *,
        one_of: tuple[str, ...] = (),
        use_case: str | None = None,
        op: str | None = None,
        audited: bool = False,
        embeds: str | None = None,
        mcp: bool | None = None,
        handshake: bool = False,
    ) -> None:
        served = use_case is not None or op is not None
        if (use_case is not None) + (op is not None) + (local is not None) > 1:
            raise ValueError(f"verb {name} runs in one place: a use_case, an op or local")
        if (audited or embeds is not None) and use_case is None:
            raise ValueError(f"verb {name}: only a use case is audited or embeds")
        if mcp and not served:
            raise ValueError(f"verb {name}: an MCP tool is a verb the daemon answers")
        if handshake and (served or local is not None):
            raise ValueError(f"verb {name}: the handshake runs on the connection, nowhere else")
        self._set(one_of=one_of, use_case=use_case, op=op, audited=audited, embeds=embeds)
        self._set(mcp=served if mcp is None else mcp, handshake=handshake)
        self._set(
            name=name,
            summary=summary,
            params=params,
            result=result if result is not None else Type("object", open=True),
            errors=errors,
            right=right,
            resource=resource,
            starts_daemon=starts_daemon,
            local=local,
            examples=examples,
            reply_ms=reply_ms,
        )

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def reply_budget_ms(self) -> int:
        """The reply deadline: ``reply_ms``, else 30 s for a verb that writes (it may wait on
        the store's busy timeout behind other writes) and 10 s for one that reads."""
        if self.reply_ms:
            return self.reply_ms
        return 30_000 if self.right in ("write", "admin", "files") else 10_000

    @property
    def runs(self) -> str | None:
        """Where a call runs: ``writer`` or ``reader`` (a use case on the daemon's one writer
        or its reader pool: every ``write`` and ``admin`` verb on the writer, so client.list
        and grant.list run there too), ``daemon`` (an op), ``cli`` (local), or ``None``
        (the connection's handshake)."""
        if self.use_case is not None:
            return "writer" if self.right in ("write", "admin") else "reader"
        if self.op is not None:
            return "daemon"
        return "cli" if self.local is not None else None

    @property
    def read_only(self) -> bool:
        """Whether a call can change nothing (MCP's ``readOnlyHint``)."""
        return self.right in (None, "read")

    @property
    def noun(self) -> str | None:
        return self.name.split(".", 1)[0] if "." in self.name else None

    @property
    def action(self) -> str:
        return self.name.split(".", 1)[-1]

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


class Manifest(_Frozen):
    """The verbs, and an index of them by name (built once; not a field, so equality, repr
    and :meth:`_Frozen.replace` leave it out)."""

    _fields = ("format", "summary", "tool", "verbs")
    format: int
    tool: str
    summary: str
    verbs: tuple[Verb, ...]
    _by_name: dict[str, Verb]

    def __init__(self, format: int, tool: str, summary: str, verbs: tuple[Verb, ...]) -> None:
        self._set(format=format, tool=tool, summary=summary, verbs=verbs)
        self._set(_by_name={v.name: v for v in verbs})

    def __hash__(self) -> int:
        return hash(self.tool)

    def verb(self, name: str) -> Verb | None:
        """Every request looks its verb up here: a dict, not a scan of the tuple."""
        return self._by_name.get(name)
