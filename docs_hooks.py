"""MkDocs hook: Sphinx cross-reference roles in docstrings (``:class:`Foo```) rendered as plain code.

The project's docstrings are numpydoc and use Sphinx roles; mkdocstrings renders them verbatim, so
``:func:<code>x</code>`` would show its role. This hook keeps the code span and drops the role.
"""
import re

_ROLE = re.compile(r":(?:py:)?(?:func|mod|class|meth|attr|data|obj|exc|const):(?=<code>)")
#: a role left as plain text (in a parameter's type, which is not parsed as Markdown)
_RAW = re.compile(r":(?:py:)?(?:func|mod|class|meth|attr|data|obj|exc|const):`([^`<]+)`")


def on_page_content(html, page, config, files):
    """Drop the role prefix before every inline code span of a rendered page."""
    return _RAW.sub(r"<code>\1</code>", _ROLE.sub("", html))


def on_page_markdown(markdown, page, config, files):
    """The changelog page is the repository's ``CHANGELOG.md`` itself (one text, two places); the command line
    page is generated from the parser (:func:`audit.frontends.cli_doc.cli_markdown`), so it lists every option."""
    if page.file.src_uri == "changelog.md":
        from pathlib import Path

        return (Path(config["config_file_path"]).parent / "CHANGELOG.md").read_text()
    if page.file.src_uri == "api/cli.md":  # the parser of this checkout, not of an installed copy
        import importlib
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(config["config_file_path"]).parent))
        try:
            return importlib.import_module("audit.frontends.cli_doc").cli_markdown()
        finally:
            sys.path.pop(0)
    return markdown
