"""The command line's reference page, generated from the parser itself (:func:`audit.__main__.build_parser`).

The documentation site's page ``api/cli.md`` is this text: ``docs_hooks.py`` puts it in place at build time, so
every subcommand and option ``python -m audit COMMAND --help`` prints is on the page, with its help, and the
page cannot fall behind the code (``tests/test_docs_api.py`` holds it against ``--help``).
"""
from __future__ import annotations

import argparse

__all__ = ["cli_markdown"]

INTRO = ("Every subcommand of `python -m audit` and its options, generated from the parser when the site is "
         "built (the same text as `python -m audit COMMAND --help`). Exit codes: 0 when every verdict is the "
         "expected one (or, for `check`, no claim is refuted), 1 when one is not, 2 for a usage error or a "
         "subject that could not be audited.")


def _subparsers(parser: argparse.ArgumentParser):
    """``[(name, help, subparser)]`` of ``parser``'s subcommands, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return []


def _text(value: str) -> str:
    """Help text as Markdown: stars escaped (``**params`` is not emphasis), whitespace joined."""
    return " ".join(str(value).split()).replace("*", r"\*")


def _option(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    if action.option_strings:
        spelled = ", ".join(action.option_strings)
        if action.nargs != 0:
            spelled += " " + formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    else:
        spelled = formatter._format_args(action, formatter._get_default_metavar_for_positional(action))
    helped = formatter._expand_help(action) if action.help else ""
    return f"- `{spelled}`" + (f": {_text(helped)}" if helped else "")


def _section(prog: str, parser: argparse.ArgumentParser, level: int, help_text: str) -> list[str]:
    lines = [f"{'#' * level} `{prog}`", ""]
    if help_text:
        lines += [_text(help_text) + ".", ""]
    lines += ["```", " ".join(parser.format_usage().split()).removeprefix("usage: "), "```", ""]
    options = [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    lines += [_option(parser, a) for a in options]
    lines.append("")
    for name, sub_help, sub in _subparsers(parser):
        lines += _section(f"{prog} {name}", sub, min(level + 1, 4), sub_help)
    return lines


def cli_markdown() -> str:
    """The command line reference as one Markdown page (module docstring)."""
    from audit.__main__ import build_parser

    parser = build_parser()
    lines = ["# Command line", "", INTRO, ""]
    lines += ["```", " ".join(parser.format_usage().split()).removeprefix("usage: "), "```", ""]
    lines += [_option(parser, a) for a in parser._actions
              if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    lines.append("")
    for name, help_text, sub in _subparsers(parser):
        lines += _section(f"python -m audit {name}", sub, 2, help_text)
    return "\n".join(lines).rstrip() + "\n"
