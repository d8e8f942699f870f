"""The quick subset's list (tests/conftest.py QUICK) names test modules and functions that exist, and ``-m quick``
selects tests of every listed module. Deterministic."""
import ast
import subprocess
import sys
from pathlib import Path

from conftest import QUICK

HERE = Path(__file__).resolve().parent


def test_every_listed_module_and_left_out_test_exists():
    for module, left_out in QUICK.items():
        path = HERE / f"{module}.py"
        assert path.is_file(), module
        names = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
        assert left_out <= names, (module, left_out - names)


def test_the_marker_is_registered_and_selects_every_listed_module():
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "quick", "--collect-only", "-q", "-p",
                           "no:cacheprovider", str(HERE)], capture_output=True, text=True, cwd=HERE.parent,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    chosen = {line.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py") for line in proc.stdout.splitlines()
              if "::" in line}
    assert chosen == set(QUICK)
