"""The rich-click application, generated from the manifest: one group per noun, one command
per verb (local ones too), one option per param, help text from the summaries and examples
under each verb. The options are for help, usage and completion only: a command hands its
words to the manifest's parser and runner (:func:`.run.run_command`), as the ``--json``
path does without building this tree (ADR 0027).

Help is rich-click's own (RichGroup, RichCommand): panels at the terminal's width, colour
only on a terminal and never with NO_COLOR (rich decides both). Completion is click's
(``_VENOM_MEM_COMPLETE=bash_source venom-mem``); choices complete from the manifest.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import rich_click as click
from click import exceptions as usage
from click import get_current_context
from click.shell_completion import CompletionItem

import venom_mem_core
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Param, Verb

from .argv import FILE_PARAMS, HELP_FLAGS, Extra, extra_flags, positional
from .helptext import example_epilog, json_example
from .here import HERE_FLAG, HERE_HELP, HERE_VERBS
from .local import check_local
from .run import print_error, print_json, run_command

__all__ = ["build_cli", "run_app"]

click.rich_click.USE_MARKDOWN = False
click.rich_click.USE_RICH_MARKUP = False  # summaries are plain text: "[required]" stays
click.rich_click.SHOW_ARGUMENTS = True
click.rich_click.STYLE_OPTIONS_TABLE_BOX = "SIMPLE"
click.rich_click.OPTIONS_PANEL_TITLE = "Options"
click.rich_click.ERRORS_EPILOGUE = ""

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
    if param.name in FILE_PARAMS:
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


class VerbCommand(click.RichCommand):
    """One verb's command. Its options are there for help, usage and completion: a call
    hands its words to the manifest's parser (:func:`.argv.parse_words`), which is the one
    place flag text becomes values, for this path and the ``--json`` path alike."""

    def __init__(self, verb: Verb, **kwargs: Any) -> None:
        super().__init__(callback=self.run_verb, **kwargs)
        self.verb = verb

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_WORDS] = list(args)
        if ctx.resilient_parsing or HELP_FLAGS.intersection(args):
            return super().parse_args(ctx, args)  # completion, or --help: click's own
        return []

    def run_verb(self, **_shown: Any) -> int:  # click passes what it parsed for --help
        ctx = get_current_context()  # ctx.obj: the whole command line, for fixes that repeat it
        return run_command(self.verb, ctx.meta[_WORDS], os.environ, ctx.obj)


_WORDS = "venom_mem.words"


def _command(verb: Verb, name: str) -> VerbCommand:
    command = VerbCommand(
        verb,
        name=name,
        help=verb.summary,
        short_help=_short(verb),
        epilog=_epilog(verb),
    )
    bare = positional(verb)
    if bare is not None:  # bare words are its items: setup claude-code codex
        choices = bare.type.items.choices if bare.type.items is not None else ()
        words = click.Argument(
            [bare.name + "_words"],  # a name of its own: click warns when two share one
            nargs=-1,
            type=click.Choice(choices) if choices else None,
            metavar=None if choices else bare.name.upper() + "...",
        )
        words.opts = [bare.name]  # what the help shows
        command.params.append(words)
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
    def callback(ctx: click.Context, json_output: bool) -> int | None:
        if ctx.invoked_subcommand is not None:
            return None
        return run_command(verb, ["--json"] if json_output else [], os.environ, ctx.obj)

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
        check_local(MANIFEST)
    except VenomError as error:  # a local verb or switch the manifest names is missing
        print_error(error)
        sys.exit(error.exit_code)
    try:
        code = build_cli().main(
            args=list(argv), prog_name="venom-mem", standalone_mode=False, obj=list(argv)
        )
    except usage.NoArgsIsHelpError as error:
        error.show()
        sys.exit(error.exit_code)
    except usage.UsageError as error:
        failed = usage_error(error)
        if "--json" in argv:
            print_json({"error": failed.to_json()})
        else:
            print_error(failed)
        sys.exit(failed.exit_code)
    except usage.Abort:
        sys.exit(130)  # interrupted, as a shell reports SIGINT
    sys.exit(code if isinstance(code, int) else 0)
