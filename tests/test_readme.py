"""The README's and the documentation pages' examples run as written: their Python snippets are executed,
their cheap commands run (``check`` at the quick budget, from ``examples/`` where they name the example
package), the claims file they show is the one shipped in ``examples/``, and the CI snippet installs this
project from a path, not a name. Long commands are skipped with the reason beside them. The texts read are
``README.md`` and every page under ``docs/``: a command that moved from the README to a page is still run."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: the README and the documentation pages, each by its path relative to the project
TEXTS = {"README.md": README} | {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))}
BLOCKS = [block for text in TEXTS.values() for block in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)]

#: commands not run here, and why
LONG = {
    "python -m audit run": "a whole target: minutes (the targets run in CI, .ci/run, at the quick budget)",
    "python -m audit reproduce": "a paper's protocol on the benchmark files: minutes to hours",
    "python -m pytest": "the test suite itself",
    "pip install": "installs packages (CI installs them fresh)",
    "python -m audit check --claims examples/diffprivlib.toml": "needs the diffprivlib extra; about 7 min",
    "python -m audit data fetch": "downloads from the internet (tests/test_data_fetch.py runs it against a local "
                                  "HTTP server)",
    "python -m audit certify": "every domain's exact laws: seconds to a minute (tests/test_*_exact_law.py run "
                               "it, as a slow test)",
    "mkdocs build": "builds the documentation site (CI, .ci/run, with the docs extra installed)",
    "python -m audit check outside_mechanisms:": "needs opendp and the diffprivlib extra (not installed in CI)",
    "python -m audit compare authors_adapter:": "needs the PrivaTree authors' code, which the user fetches (the "
                                                "guide's adapter, a `py` block, is not run for the same reason)",
}


#: commands the README says fail, with the exit status it states
EXPECTED_EXIT = {"python -m audit check mypkg.noise:MyLaplace --params '{\"epsilon\": 1}' --epsilon 1": 1,
                 "python -m audit check mypkg.counts:NoisyCountsHalfNoise --epsilon 1 --exact --bounds '[[0, 1]]' "
                 "--classes 0,1": 1}


def _commands(texts=None):
    """Every command the texts show (default: the README and the docs): lines of bash blocks and inline
    `python -m audit ...` or `mkdocs ...` spans."""
    for text in (TEXTS if texts is None else texts).values():
        for lang, body in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S):
            if lang == "bash":
                for line in body.splitlines():
                    line = line.split("  #")[0].strip()
                    if line:
                        yield from (part.strip() for part in line.split("&&"))
        for span in re.findall(r"`((?:cd examples && )?(?:python -m audit|mkdocs) [^`]+)`", text.replace("\n", " ")):
            yield from (part.strip() for part in span.split("&&"))


#: seconds a README command may take on an idle machine before it counts as hung (the slowest, check at the
#: quick budget, takes about 30 s idle); the limit grows with the machine's load (:func:`time_limit`)
IDLE_LIMIT = 300


def time_limit() -> float:
    """:data:`IDLE_LIMIT` scaled by how loaded the machine is when the command starts: a command sharing its
    cores with L runnable processes on C cores gets about C / L of them, so the limit is multiplied by
    max(1, L / C) (1-minute load average) and doubled for the load that may come while it runs. The README's
    quoted times are held against benchmarks/readme_numbers.json, never against this wall clock."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this system: assume a busy machine
        load = 4.0 * cores
    return IDLE_LIMIT * 2 * max(1.0, load / cores)


def _run(cmd: str, cwd: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = shlex.split(cmd)
    assert argv[:2] == ["python", "-m"], cmd
    return subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=time_limit())


def _is_synopsis(cmd: str) -> bool:
    """``python -m audit check`` or ``... check MODULE:CALLABLE``: a command's name or form, not a command."""
    words = shlex.split(cmd)[3:]
    return words in (["check"], ["compare"], ["run"], ["reproduce"]) or \
        any(re.fullmatch(r"[A-Z][A-Z:_]+", w) for w in words)


RUNNABLE = sorted({c for c in _commands() if c.startswith("python -m audit") and not _is_synopsis(c)
                   and not any(c.startswith(k) for k in LONG)})


def test_the_readme_shows_commands_and_each_long_one_has_a_reason():
    assert "python -m audit run privatree" in list(_commands({"README.md": README}))
    commands = list(_commands())
    assert "python -m audit check --claims dp-claims.toml" in RUNNABLE
    for c in commands:
        assert c in RUNNABLE or c == "cd examples" or _is_synopsis(c) or any(c.startswith(k) for k in LONG), \
            f"README command with no test and no stated reason: {c}"


@pytest.mark.parametrize("cmd", RUNNABLE)
def test_readme_command_runs_as_written(cmd, tmp_path):
    # every command runs from examples/ (where the README's check commands are given) at the budget it
    # states (quick by default and in dp-claims.toml); reports go to a temporary directory
    checks = cmd.startswith("python -m audit check")
    writes = checks or (cmd.startswith("python -m audit compare") and "--reference list" not in cmd)
    proc = _run(cmd + (f" --out {tmp_path}" if writes and "--out" not in cmd else ""), ROOT / "examples")
    assert proc.returncode == EXPECTED_EXIT.get(cmd, 0), proc.stdout + proc.stderr
    if checks and cmd not in EXPECTED_EXIT:
        assert re.search(r"^Budget (quick|exact), seed 0, .* (all verdicts as expected|no claim refuted)\.$", proc.stdout,
                         flags=re.M)


def test_readme_python_snippets_run():
    """Every ``python`` block of the README and the pages runs as written (from ``examples/``'s package), and every
    ``test_*`` function a block defines (the pytest recipe of the check guide) is called, as pytest would."""
    snippets = [body for lang, body in BLOCKS if lang == "python"]
    assert snippets
    called = 0
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        for body in snippets:
            names = {}
            exec(compile(body, "README.md or docs/", "exec"), names)
            for name, fn in names.items():
                if name.startswith("test_") and callable(fn):
                    fn()
                    called += 1
    finally:
        sys.path.remove(str(ROOT / "examples"))
    assert called >= 1  # the check guide's pytest recipe


def test_readme_claims_file_is_the_shipped_example():
    (toml,) = [body for lang, body in BLOCKS if lang == "toml"]
    assert toml == (ROOT / "examples" / "dp-claims.toml").read_text()
    for target in re.findall(r'callable = "([\w.]+):(\w+)"', toml):  # every callable it names exists
        assert (ROOT / "examples" / (target[0].replace(".", "/") + ".py")).read_text().count(f"class {target[1]}")


def test_readme_ci_snippet_installs_this_project_from_a_path_or_url():
    (yaml,) = [body for lang, body in BLOCKS if lang == "yaml"]
    installs = [line.split("#")[0].split("pip install", 1)[1].split() for line in yaml.splitlines()
                if "pip install" in line]
    assert installs
    for words in installs:
        for w in words:
            assert w.startswith(("-", ".", "/", "git+", "http")), f"installs {w!r} by name: no index serves it"


#: the README's commands whose time the issue named (issue 28 item 3): each must be quoted, and measured
NAMED_TIMES = ("run-privatree-quick", "test-suite", "check-privatree-quick")


def test_readme_times_are_the_benchmarks_measurements():
    """Every time the README quotes as ``<!-- bench:ID -->N s`` (or ``N min``) is within 25% of the wall time
    ``benchmarks/bench_readme.py`` recorded for that command in ``benchmarks/readme_numbers.json`` (no timing
    is measured here: the README and the benchmark file must agree)."""
    import json

    numbers = json.loads((ROOT / "benchmarks" / "readme_numbers.json").read_text())["commands"]
    quoted = [q for text in TEXTS.values()
              for q in re.findall(r"<!-- bench:([\w-]+) -->\s*(?:about )?([\d.,]+) (s|min)\b", text)]
    assert {cid for cid, _, _ in quoted} >= set(NAMED_TIMES), "the README must quote these commands' times"
    for cid, value, unit in quoted:
        assert cid in numbers, f"README quotes {cid!r}, which benchmarks/readme_numbers.json does not hold"
        seconds = float(value.replace(",", "")) * (60 if unit == "min" else 1)
        measured = numbers[cid]["wall_s"]
        assert numbers[cid]["exit"] in (0, 1), (cid, numbers[cid])
        assert abs(seconds - measured) <= 0.25 * measured, f"{cid}: README says {value} {unit}, measured {measured} s"


def test_the_check_guides_first_estimator_is_the_shipped_example():
    """The guide's first estimator is ``examples/mine.py`` as shipped, so its command (run above from
    ``examples/``) audits what the page shows."""
    page = TEXTS["docs/guides/check.md"]
    block = re.search(r"Save it as `mine.py`:\n\n```python\n(.*?)```", page, flags=re.S).group(1)
    assert block == (ROOT / "examples" / "mine.py").read_text()
    assert "python -m audit check mine:NoisyMajority --epsilon 1 --bounds '[[0, 1], [0, 1]]' --classes 0,1" in RUNNABLE
