"""The rich-click application, generated from the manifest: one group per noun, one command
per verb, one option per param, help text from the summaries."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import rich_click as click

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Param, Verb

from .argv import convert
from .run import call_daemon, print_error, print_json, result_exit_code

__all__ = ["build_cli", "run_app"]

click.rich_click.USE_MARKDOWN = False
click.rich_click.SHOW_ARGUMENTS = True


def _option(param: Param) -> Callable[[Any], Any]:
    help_text = param.summary
    if param.default is not None:
        help_text += f" [default: {str(param.default).lower()}]"
    if param.type.kind in ("array", "object"):
        help_text += " (JSON)"
    if param.type.kind == "boolean":
        return click.option(
            param.flag, param.name, is_flag=False, flag_value="true", default=None, help=help_text
        )
    return click.option(
        param.flag, param.name, default=None, required=False, help=help_text, metavar=_meta(param)
    )


def _meta(param: Param) -> str:
    if param.type.choices:
        return "|".join(param.type.choices)
    return {"integer": "INT", "number": "NUMBER", "array": "JSON", "object": "JSON"}.get(
        param.type.kind, "TEXT"
    )


def _invoke(verb: Verb, raw: dict[str, Any], as_json: bool) -> None:
    try:
        params = {
            name: convert(param, value)
            for name, value in raw.items()
            if value is not None and (param := verb.param(name)) is not None
        }
        result = call_daemon(verb, params, os.environ)
    except VenomError as error:
        if as_json:
            print_json({"error": error.to_json()})
        else:
            print_error(error)
        sys.exit(error.exit_code)
    if as_json:
        print_json(result)
    else:
        from .render import render

        render(verb, result)
    code = result_exit_code(verb, result)
    if code:
        sys.exit(code)


def _command(verb: Verb, name: str) -> click.Command:
    def callback(**raw: Any) -> None:
        as_json = bool(raw.pop("json_output", False))
        if verb.name == "events" and _follow(verb, raw, as_json):
            return
        _invoke(verb, raw, as_json)

    command = click.Command(
        name=name,
        callback=callback,
        help=verb.summary,
        short_help=verb.summary.split(". ")[0].rstrip("."),
    )
    for param in reversed(verb.params):
        command = _option(param)(command)
    return click.option("--json", "json_output", is_flag=True, help="Print one line of JSON")(
        command
    )


# -- events --follow streams until interrupted; the loop is in follow.py -----------------------


def _follow(verb: Verb, raw: dict[str, Any], as_json: bool) -> bool:
    """Run ``events --follow`` and exit; ``False`` when ``--follow`` wasn't asked for."""
    from .follow import run_follow, wants_follow

    if not wants_follow(verb, raw):
        return False
    sys.exit(run_follow(verb, raw, as_json, os.environ))


# ---------------------------------------------------------------------------------------------


def _serve_command() -> click.Command:
    @click.command(name="serve", help=MANIFEST.verb("serve").summary)  # type: ignore[union-attr]
    @click.option("--on-demand", is_flag=True, hidden=True)
    @click.option("--status-fd", type=int, default=None, hidden=True)
    def serve(on_demand: bool, status_fd: int | None) -> None:
        from .bootstrap import run_serve

        sys.exit(run_serve(os.environ, on_demand=on_demand, status_fd=status_fd))

    return serve


def _mcp_command() -> click.Command:
    @click.command(name="mcp", help=MANIFEST.verb("mcp").summary)  # type: ignore[union-attr]
    def mcp() -> None:
        from venom_mem_adapters.mcp_server import run_stdio

        run_stdio(os.environ)

    return mcp


def build_cli() -> click.Group:
    """The whole command tree, from the manifest."""
    root = click.Group(name="venom-mem", help=MANIFEST.summary)
    groups: dict[str, click.Group] = {}
    for verb in MANIFEST.verbs:
        if verb.name == "hello":
            continue
        if verb.local:
            root.add_command(_serve_command() if verb.name == "serve" else _mcp_command())
            continue
        if verb.noun is None:
            if root.commands.get(verb.name) is None:
                root.add_command(_command(verb, verb.name))
            continue
        group = groups.get(verb.noun)
        if group is None:
            bare = MANIFEST.verb(verb.noun)
            if bare is not None:
                # "skill" is a verb and the group of "skill install": running the group runs it.
                group = click.Group(
                    name=verb.noun,
                    help=bare.summary,
                    invoke_without_command=True,
                    callback=None,
                )
                _attach_bare(group, bare)
            else:
                group = click.Group(name=verb.noun, help=f"{verb.noun.capitalize()} verbs")
            groups[verb.noun] = group
            root.add_command(group)
        group.add_command(_command(verb, verb.action))
    return root


def _attach_bare(group: click.Group, verb: Verb) -> None:
    @click.pass_context
    def callback(ctx: click.Context, json_output: bool) -> None:
        if ctx.invoked_subcommand is None:
            _invoke(verb, {}, json_output)

    group.callback = callback
    group.params.append(click.Option(["--json", "json_output"], is_flag=True, help="Print JSON"))


def run_app(argv: Sequence[str]) -> None:
    build_cli().main(args=list(argv), prog_name="venom-mem")
