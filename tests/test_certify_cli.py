"""``python -m audit certify``'s command line: the help lists every target it accepts."""
from __future__ import annotations

import subprocess
import sys

from audit.results.certify import CERTIFY_TARGETS


def test_certify_help_lists_every_target_it_accepts():
    out = subprocess.run([sys.executable, "-m", "audit", "certify", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split("targets:\n", 1)[1].split()
    assert listed == list(CERTIFY_TARGETS)
    assert {"privatree", "diprime", "random-trees", "lpdt"} <= set(listed)


def test_an_unknown_target_is_refused_with_the_list():
    out = subprocess.run([sys.executable, "-m", "audit", "certify", "no-such-target", "--quiet"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "no-such-target" in out.stderr + out.stdout
    assert all(t in out.stderr + out.stdout for t in CERTIFY_TARGETS)
