"""The rich-click application, generated from the manifest: one group per noun, one command
per verb, one option per param, help text from the summaries and examples under each verb.

Help is rich-click's own (RichGroup, RichCommand): panels at the terminal's width, colour
only on a terminal and never with NO_COLOR (rich decides both). Completion is click's
(``_VENOM_MEM_COMPLETE=bash_source venom-mem``); choices complete from the manifest.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import rich_click as click
from click import exceptions as usage
from click.shell_completion import CompletionItem

import venom_mem_core
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Param, Verb

from .argv import CLI_FLAGS, Extra, add_extra, convert, extra_flags, missing_value
from .harness_setup import HARNESSES
from .helptext import example_epilog, json_example
from .here import HERE_FLAG, HERE_HELP, HERE_VERBS
from .run import call_daemon, print_error, print_json, result_exit_code, situate

__all__ = ["build_cli", "run_app"]

click.rich_click.USE_MARKDOWN = False
click.rich_click.USE_RICH_MARKUP = False  # summaries are plain text: "[required]" stays
click.rich_click.SHOW_ARGUMENTS = True
click.rich_click.STYLE_OPTIONS_TABLE_BOX = "SIMPLE"
click.rich_click.OPTIONS_PANEL_TITLE = "Options"
click.rich_click.ERRORS_EPILOGUE = ""

# The words this process was run with, for fixes that repeat the command (run_app sets it).
COMMAND_LINE: list[str] = []
FULL_TIMES_HELP = "Show times in full (RFC 3339 UTC) instead of relative local times"


def _choices(param: Param) -> Callable[..., list[CompletionItem]]:
    def complete(_ctx: Any, _param: Any, incomplete: str) -> list[CompletionItem]:
        words = param.type.choices or (("true", "false") if param.type.kind == "boolean" else ())
        return [CompletionItem(word) for word in words if word.startswith(incomplete)]

    return complete


def _help(verb: Verb, param: Param) -> str:
    help_text = param.summary
    if param.type.kind in ("array", "object"):
        help_text += f". JSON such as {json_example(verb, param.name)}"
        items = param.type.items
        if items is not None and items.kind == "string":
            help_text += ", or a,b"
    if param.name in ("content",):
        help_text += "; - reads standard input"
    if param.required:
        help_text += " [required]"
    if param.default is not None:
        help_text += f" [default: {str(param.default).lower()}]"
    return help_text


def _option(verb: Verb, param: Param) -> Callable[[Any], Any]:
    complete = _choices(param) if param.type.choices or param.type.kind == "boolean" else None
    if param.type.kind == "boolean":
        return click.option(
            param.flag,
            param.name,
            is_flag=False,
            flag_value="true",
            default=None,
            help=_help(verb, param),
            metavar=_meta(param),
            shell_complete=complete,
        )
    return click.option(
        param.flag,
        param.name,
        default=None,
        required=False,
        help=_help(verb, param),
        metavar=_meta(param),
        shell_complete=complete,
    )


def _extra_option(extra: Extra) -> Callable[[Any], Any]:
    if extra.repeat:
        items = extra.param.type.items
        grant = items is not None and items.kind == "object"
        choices = items.choices if items is not None else ()
        return click.option(
            extra.flag,
            extra.dest,
            multiple=True,
            metavar="RIGHT:SCOPE" if grant else "|".join(choices) or "TEXT",
            shell_complete=_choices(Param(extra.dest, "", items)) if items and choices else None,
            help=f"One item of {extra.param.flag}; repeat it"
            + (", such as --grant read:* --grant write:*" if grant else ""),
        )
    return click.option(
        extra.flag,
        extra.dest,
        default=None,
        metavar="PATH",
        type=click.Path(dir_okay=False, allow_dash=True),
        help=f"Read {extra.param.flag} from a file (- is standard input)",
    )


def _meta(param: Param) -> str:
    if param.type.choices:
        return "|".join(param.type.choices)
    return {
        "integer": "INT",
        "number": "NUMBER",
        "array": "JSON",
        "object": "JSON",
        "boolean": "true|false",
    }.get(param.type.kind, "TEXT")


def _fail(error: VenomError, *, as_json: bool) -> NoReturn:
    if as_json:
        print_json({"error": error.to_json()})
    else:
        print_error(error)
    sys.exit(error.exit_code)


def _params(verb: Verb, raw: dict[str, Any]) -> dict[str, Any]:
    """The click values as the verb's params, habit flags folded in as argv.py does."""
    extras = {e.dest: e for e in extra_flags(verb)}
    params: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None or name in extras:
            continue
        param = verb.param(name)
        if param is not None:
            params[name] = convert(param, value)
    for dest, extra in extras.items():
        values = raw.get(dest)
        if not values:
            continue
        for value in values if extra.repeat else (values,):
            add_extra(params, extra, value)
    return params


def _invoke(verb: Verb, raw: dict[str, Any], as_json: bool, *, full_times: bool = False) -> None:
    here = bool(raw.pop("here", False))
    try:
        params = _params(verb, raw)
        if here:
            from .here import apply_here

            params = apply_here(verb.name, params)
        result = call_daemon(verb, params, os.environ)
    except VenomError as error:
        _fail(situate(error, verb, os.environ, COMMAND_LINE), as_json=as_json)
    if as_json:
        print_json(result)
    else:
        from .render import render

        render(verb, result, full_times=full_times, params=params)
    code = result_exit_code(verb, result)
    if code:
        sys.exit(code)


def _command(verb: Verb, name: str) -> click.RichCommand:
    def callback(**raw: Any) -> None:
        as_json = bool(raw.pop("json_output", False))
        full_times = bool(raw.pop("full_times", False))
        for param_name, value in raw.items():
            if value in CLI_FLAGS and (param := verb.param(param_name)) is not None:
                # "--limit --json": click took --json as the value; the caller wanted JSON.
                _fail(missing_value(param), as_json=True)
        if verb.name == "events" and _follow(verb, raw, as_json, full_times):
            return
        _invoke(verb, raw, as_json, full_times=full_times)

    command = click.RichCommand(
        name=name,
        callback=callback,
        help=verb.summary,
        short_help=_short(verb),
        epilog=_epilog(verb),
    )
    options = [_option(verb, param) for param in verb.params]
    options += [_extra_option(extra) for extra in extra_flags(verb)]
    if verb.name in HERE_VERBS:
        options.append(click.option(HERE_FLAG, "here", is_flag=True, help=HERE_HELP[verb.name]))
    options += [
        click.option("--json", "json_output", is_flag=True, help="Print one line of JSON"),
        click.option("--full-times", "full_times", is_flag=True, help=FULL_TIMES_HELP),
    ]
    for option in options:  # each appends to the command: --help keeps manifest order
        command = option(command)
    return command


def _short(verb: Verb) -> str:
    """The first sentence, for the list of commands."""
    return verb.summary.split(". ")[0].rstrip(".")


def _epilog(verb: Verb) -> Any:
    """The examples, as rich Text: rich-click prints Text as it is, where it would run a
    plain string's lines together into one paragraph."""
    from rich.text import Text

    text = example_epilog(verb)
    if not text:
        return None
    epilog = Text("Examples\n", style="bold")
    for line in text.splitlines():
        epilog.append(line + "\n", style="dim" if not line.startswith("$") else "")
    epilog.rstrip()
    return epilog


# -- events --follow streams until interrupted; the loop is in follow.py -----------------------


def _follow(verb: Verb, raw: dict[str, Any], as_json: bool, full_times: bool) -> bool:
    """Run ``events --follow`` and exit; ``False`` when ``--follow`` wasn't asked for."""
    from .follow import run_follow, wants_follow

    if not wants_follow(verb, raw):
        return False
    sys.exit(run_follow(verb, raw, as_json, os.environ, full_times=full_times))


# -- local verbs: they run in this process -----------------------------------------------------


def _serve_command() -> click.RichCommand:
    @click.command(name="serve", help=MANIFEST.verb("serve").summary)  # type: ignore[union-attr]
    @click.option("--on-demand", is_flag=True, hidden=True)
    @click.option("--status-fd", type=int, default=None, hidden=True)
    def serve(on_demand: bool, status_fd: int | None) -> None:
        from .bootstrap import run_serve

        sys.exit(run_serve(os.environ, on_demand=on_demand, status_fd=status_fd))

    return serve


def _mcp_command() -> click.RichCommand:
    @click.command(name="mcp", help=MANIFEST.verb("mcp").summary)  # type: ignore[union-attr]
    def mcp() -> None:
        from venom_mem_adapters.mcp_server import run_stdio

        run_stdio(os.environ)

    return mcp


def _restart_command() -> click.RichCommand:
    @click.command(name="restart", help=MANIFEST.verb("restart").summary)  # type: ignore[union-attr]
    @click.option("--json", "json_output", is_flag=True, help="Print one line of JSON")
    def restart(json_output: bool) -> None:
        from .lifecycle import restart_daemon

        try:
            result = restart_daemon(os.environ)
        except VenomError as error:
            verb = MANIFEST.verb("restart")
            _fail(situate(error, verb, os.environ, COMMAND_LINE), as_json=json_output)
        if json_output:
            print_json(result)
        else:
            from .render import render

            render(MANIFEST.verb("restart"), result)  # type: ignore[arg-type]

    return restart


def _setup_command() -> click.RichCommand:
    verb = MANIFEST.verb("setup")
    assert verb is not None
    replace = verb.param("replace")
    assert replace is not None

    @click.command(name="setup", help=verb.summary)
    @click.argument("harnesses", nargs=-1, required=True, type=click.Choice(HARNESSES))
    @click.option("--replace", is_flag=True, help=replace.summary)
    @click.option("--json", "json_output", is_flag=True, help="Print one line of JSON")
    def setup(harnesses: tuple[str, ...], replace: bool, json_output: bool) -> None:
        from .harness_setup import render_setup, run_setup

        try:
            result = run_setup(harnesses, replace=replace, environ=os.environ)
        except VenomError as error:  # its fixes already name the setup command to run
            _fail(error, as_json=json_output)
        if json_output:
            print_json(result)
        else:
            sys.stdout.write(render_setup(result))

    return setup


def _ui_command() -> click.RichCommand:
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


LOCAL_COMMANDS: dict[str, Callable[[], click.RichCommand]] = {
    "serve": _serve_command,
    "mcp": _mcp_command,
    "restart": _restart_command,
    "setup": _setup_command,
    "ui": _ui_command,
}


def build_cli() -> click.RichGroup:
    """The whole command tree, from the manifest."""
    root = click.RichGroup(
        name="venom-mem",
        help=MANIFEST.summary,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    click.version_option(venom_mem_core.__version__, "--version", prog_name="venom-mem")(root)
    groups: dict[str, click.RichGroup] = {}
    for verb in MANIFEST.verbs:
        if verb.name == "hello":
            continue
        if verb.local:
            make = LOCAL_COMMANDS.get(verb.name)
            if make is not None:
                command = make()
                command.short_help = _short(verb)
                root.add_command(command)
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
                group = click.RichGroup(
                    name=verb.noun,
                    help=bare.summary,
                    invoke_without_command=True,
                    callback=None,
                    epilog=_epilog(bare),
                )
                _attach_bare(group, bare)
            else:
                group = click.RichGroup(name=verb.noun, help=f"{verb.noun.capitalize()} verbs")
            groups[verb.noun] = group
            root.add_command(group)
        group.add_command(_command(verb, verb.action))
    for noun, group in groups.items():
        bare = MANIFEST.verb(noun)
        if bare is not None:
            group.short_help = _short(bare)
        else:  # what the group holds, for the list of commands
            group.help = f"{noun.capitalize()} verbs: {', '.join(group.commands)}"
    return root


def _attach_bare(group: click.RichGroup, verb: Verb) -> None:
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
    COMMAND_LINE[:] = argv
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
