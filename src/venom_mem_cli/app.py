"""The rich-click application, generated from the manifest: one group per noun, one command
per verb, one option per param, help text from the summaries."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import rich_click as click
from click import exceptions as usage

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Param, Verb

from .argv import CLI_FLAGS, convert, missing_value
from .harness_setup import HARNESSES
from .here import HERE_FLAG, HERE_HELP, HERE_VERBS
from .run import call_daemon, print_error, print_json, result_exit_code

__all__ = ["build_cli", "run_app"]

click.rich_click.USE_MARKDOWN = False
click.rich_click.SHOW_ARGUMENTS = True


def _option(param: Param) -> Callable[[Any], Any]:
    help_text = param.summary
    if param.required:
        help_text += " [required]"
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


def _fail(error: VenomError, *, as_json: bool) -> NoReturn:
    if as_json:
        print_json({"error": error.to_json()})
    else:
        print_error(error)
    sys.exit(error.exit_code)


def _invoke(verb: Verb, raw: dict[str, Any], as_json: bool) -> None:
    here = bool(raw.pop("here", False))
    try:
        params = {
            name: convert(param, value)
            for name, value in raw.items()
            if value is not None and (param := verb.param(name)) is not None
        }
        if here:
            from .here import apply_here

            params = apply_here(verb.name, params)
        result = call_daemon(verb, params, os.environ)
    except VenomError as error:
        _fail(error, as_json=as_json)
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
        for param_name, value in raw.items():
            if value in CLI_FLAGS and (param := verb.param(param_name)) is not None:
                # "--limit --json": click took --json as the value; the caller wanted JSON.
                _fail(missing_value(param), as_json=True)
        if verb.name == "events" and _follow(verb, raw, as_json):
            return
        _invoke(verb, raw, as_json)

    command = click.Command(
        name=name,
        callback=callback,
        help=verb.summary,
        short_help=verb.summary.split(". ")[0].rstrip("."),
    )
    for param in verb.params:  # each decorator appends: --help lists them in manifest order
        command = _option(param)(command)
    if verb.name in HERE_VERBS:
        command = click.option(
            HERE_FLAG,
            "here",
            is_flag=True,
            help=HERE_HELP[verb.name],
        )(command)
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


def _setup_command() -> click.Command:
    verb = MANIFEST.verb("setup")
    assert verb is not None

    @click.command(name="setup", help=verb.summary)
    @click.argument("harnesses", nargs=-1, required=True, type=click.Choice(HARNESSES))
    @click.option("--replace", is_flag=True, help=verb.param("replace").summary)  # type: ignore[union-attr]
    @click.option("--json", "json_output", is_flag=True, help="Print one line of JSON")
    def setup(harnesses: tuple[str, ...], replace: bool, json_output: bool) -> None:
        from .harness_setup import render_setup, run_setup

        try:
            result = run_setup(harnesses, replace=replace, environ=os.environ)
        except VenomError as error:
            _fail(error, as_json=json_output)
        if json_output:
            print_json(result)
        else:
            sys.stdout.write(render_setup(result))

    return setup


def _ui_command() -> click.Command:
    verb = MANIFEST.verb("ui")
    assert verb is not None

    @click.command(name="ui", help=verb.summary)
    @click.option("--port", "port", type=int, default=0, help=verb.params[0].summary)
    def ui(port: int) -> None:
        from venom_mem_adapters.web.serve import run_ui

        try:
            code = run_ui(os.environ, port=port)
        except VenomError as error:
            _fail(error, as_json=False)
        sys.exit(code)

    return ui


_LOCAL_COMMANDS: dict[str, Callable[[], click.Command]] = {
    "serve": _serve_command,
    "mcp": _mcp_command,
    "setup": _setup_command,
    "ui": _ui_command,
}


def build_cli() -> click.Group:
    """The whole command tree, from the manifest."""
    root = click.Group(
        name="venom-mem",
        help=MANIFEST.summary,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    groups: dict[str, click.Group] = {}
    for verb in MANIFEST.verbs:
        if verb.name == "hello":
            continue
        if verb.local:
            root.add_command(_LOCAL_COMMANDS[verb.name]())
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


# click's usage errors, as the invalid_params codes the --json path gives the same mistakes.
_USAGE_CODES: tuple[tuple[type[usage.ClickException], str], ...] = (
    (usage.NoSuchCommand, "verb"),
    (usage.NoSuchOption, "unknown"),
    (usage.BadOptionUsage, "missing"),  # "Option '--query' requires an argument."
    (usage.MissingParameter, "missing"),
    (usage.BadParameter, "type"),
)


def usage_error(error: usage.UsageError) -> VenomError:
    """A click usage error as ``invalid_params.*`` with the flag's param name, as CONTRACT
    section 3 has every CLI usage error."""
    code = next((c for kind, c in _USAGE_CODES if isinstance(error, kind)), "unknown")
    flag = getattr(error, "option_name", None)
    param = getattr(error, "param", None)
    if isinstance(error, usage.NoSuchCommand):
        return VenomError(
            "invalid_params.verb", error.format_message(), {"fix": "venom-mem --help"}
        )
    name = param.name if param is not None and param.name else (flag or "argv").lstrip("-")
    return VenomError.param(code, name.replace("-", "_"), error.format_message())


def run_app(argv: Sequence[str]) -> None:
    try:
        code = build_cli().main(args=list(argv), prog_name="venom-mem", standalone_mode=False)
    except usage.NoArgsIsHelpError as error:
        error.show()
        sys.exit(error.exit_code)
    except usage.UsageError as error:
        _fail(usage_error(error), as_json="--json" in argv)
    except usage.Abort:
        sys.exit(130)  # interrupted, as a shell reports SIGINT
    sys.exit(code if isinstance(code, int) else 0)
