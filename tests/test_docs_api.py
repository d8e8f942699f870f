"""The API reference covers every public name and the command line (issue 45 item 4).

The public names: ``__all__`` of ``audit``, ``reference``, ``audit.frontends.doors`` and the gate's modules, and the names
the guides import from elsewhere (the pair builders, the pytest plugin's fixture, the randomness warning). Each must
be the object of a ``::: path`` directive of ``docs/api/*.md`` (or a member of a module documented whole). The
command line page is generated from the parser at build time (``docs_hooks.py``, :mod:`audit.frontends.cli_doc`); every
subcommand and every option ``--help`` prints is on it. Deterministic: no false alarm possible.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from audit.__main__ import build_parser
from audit.frontends.cli_doc import _subparsers, cli_markdown

ROOT = Path(__file__).resolve().parents[1]
API = sorted((ROOT / "docs" / "api").glob("*.md"))

#: module -> its public names (``__all__``, or the names the guides use)
PUBLIC = {"audit": None, "reference": None, "audit.frontends.doors": None, "audit.gate.observe": None,
          "audit.gate.determinism": None,
          "audit.engine.estimation.neighbours": ["add_remove_pairs", "substitute_pairs", "NeighbourPair"],
          "audit.frontends.pytest_plugin": ["dp_samples"], "reference.randomness": ["SeedIgnoredWarning"]}


def _resolve(path: str):
    """The object a mkdocstrings path names (a module, or an attribute of the longest importable prefix)."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for name in parts[k:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def _documented() -> set[int]:
    """``id`` of every object a directive documents (a whole module: its ``__all__`` too, unless ``members: false``)."""
    seen = set()
    for page in API:
        text = page.read_text()
        for m in re.finditer(r"^::: ([\w.]+)\n((?:[ \t]+.*\n)*)", text, flags=re.M):
            obj = _resolve(m.group(1))
            seen.add(id(obj))
            if isinstance(obj, ModuleType) and "members: false" not in m.group(2):
                seen.update(id(getattr(obj, n)) for n in getattr(obj, "__all__", ()))
    return seen


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_is_in_the_api_reference(module):
    mod = importlib.import_module(module)
    names = PUBLIC[module] or mod.__all__
    documented = _documented()
    missing = [n for n in names if id(getattr(mod, n)) not in documented]
    assert not missing, f"docs/api/*.md documents none of {module}.{missing}"


def _helps(parser, prog="python -m audit"):
    """``(prog, --help text, subparser)`` of the parser and every subcommand, nested ones included."""
    yield prog, parser.format_help(), parser
    for name, _, sub in _subparsers(parser):
        yield from _helps(sub, f"{prog} {name}")


def test_the_command_line_page_has_every_subcommand_and_option_help_prints():
    page = cli_markdown()
    helps = list(_helps(build_parser()))
    assert {"python -m audit run", "python -m audit check", "python -m audit compare", "python -m audit certify",
            "python -m audit reproduce"} <= {prog for prog, _, _ in helps}
    for prog, text, parser in helps:
        assert f"`{prog}`" in page, prog
        options = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text)) - {"-h", "--help"}
        flags = {s for a in parser._actions for s in a.option_strings}
        for option in options & flags:  # every flag --help lists is on the page, spelled out with its help
            assert re.search(rf"^- `{re.escape(option)}[ ,`]", page, flags=re.M) or f", {option}" in page, \
                (prog, option)
    check = page.split("## `python -m audit check`")[1].split("\n## ")[0]
    assert "- `--scale-records N`: estimators: the largest size the scale family reaches" in check
    assert "- `--scale-seconds S`: estimators: safety cap" in check


def test_the_docs_hook_puts_the_generated_page_in_place():
    import docs_hooks

    config = {"config_file_path": str(ROOT / "mkdocs.yml")}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="api/cli.md"))
    assert docs_hooks.on_page_markdown((ROOT / "docs" / "api" / "cli.md").read_text(), page, config, None) == \
        cli_markdown()
    other = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"))
    assert docs_hooks.on_page_markdown("text", other, config, None) == "text"
    assert "api/cli.md" in (ROOT / "mkdocs.yml").read_text()
