"""Names bound before a patch: ``from numpy.random import default_rng`` is the same constructor under another name.

The gate patches the constructors of randomness for one fit (:func:`audit.gate.state.entropy.fed` feeds them
chosen entropy, :func:`audit.gate.state.reseed.reseeded` swaps their seeds). Code that imported a constructor by
name before the patch (``from numpy.random import default_rng`` at the top of a module) holds the original in
its module's globals, and the patch would not reach it. :func:`rebound` patches those names too: every global of
an imported module (NumPy's and the gate's own apart) that *is* one of the originals, found by identity, is set
to its replacement for the block and restored after it.

The scan of the modules' globals is cached, per set of originals, while ``sys.modules`` keeps its size.
"""
from __future__ import annotations

import sys
import types
from contextlib import contextmanager

__all__ = ["rebound", "sites"]

#: modules whose globals are never rebound: the library patched itself and the gate
_SKIP = ("numpy", "audit.gate", "random", "secrets", "os", "uuid")
#: (number of modules, ids of the originals) -> sites: one entry per set of originals (the seeds' recorder and
#: the replays patch different sets, fit after fit), all dropped when the modules change
_CACHE: dict = {}


def sites(originals) -> list:
    """``(module, name, original)`` for every global of an imported module that is one of ``originals``."""
    ids = {id(o): o for o in originals}
    key = (len(sys.modules), frozenset(ids))
    if key not in _CACHE:
        found = []
        for mod_name, module in list(sys.modules.items()):
            if type(module) is not types.ModuleType or any(mod_name == m or mod_name.startswith(m + ".")
                                                           for m in _SKIP):
                continue
            try:
                items = list(vars(module).items())
            except TypeError:
                continue
            found += [(module, name, value) for name, value in items if id(value) in ids and value is ids[id(value)]]
        if len(_CACHE) >= 8 or any(k[0] != key[0] for k in _CACHE):
            _CACHE.clear()
        _CACHE[key] = found
    return _CACHE[key]


@contextmanager
def rebound(replacements: dict):
    """Within the block, every module global that is a key of ``replacements`` (an original constructor or
    function, by identity) is its value; restored after the block."""
    done = []
    try:
        for module, name, original in sites(list(replacements)):
            if vars(module).get(name) is original:
                setattr(module, name, replacements[original])
                done.append((module, name, original))
        yield
    finally:
        for module, name, original in done:
            setattr(module, name, original)
