"""Import paths of modules that moved (issue 20's layout): the old path is the new module itself.

``import reference.privatree_batch`` still works and gives the very module
``reference.privatree.batch`` (same object, so attributes set on one are seen
on the other). :func:`install` puts a finder for the table below on
``sys.meta_path``; the packages ``reference`` and ``audit`` install their own
tables when they are imported.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED", "install"]

#: old module -> the module that holds its code now (``None``: an old package that only holds old paths)
MOVED = {
    "reference._validation": "reference.validation",
    "reference.jointexp": "reference.mechanisms.jointexp",
    "reference.discrete_noise": "reference.mechanisms.discrete_noise",
    "reference.grid": "reference.mechanisms.grid",
    "reference.privatree_batch": "reference.privatree.batch",
    "reference.diprime_tree": "reference.diprime.grower",
    "reference.diprime_batch": "reference.diprime.batch",
    "reference.diprime_batch_medians": "reference.diprime.batch_medians",
    "reference.diprime_mechanisms": "reference.diprime.mechanisms",
    "reference.random_trees_core": "reference.random_trees.core",
    "reference.lpdt_partition": "reference.lpdt.partition",
    "reference.lpdt_randomizer": "reference.lpdt.randomizer",
    "reference.data_loaders": None,  # a package of old paths only: its loaders are in each paper's ``data``
    "reference.data_loaders.privatree": "reference.privatree.data",
    "reference.data_loaders.diprime": "reference.diprime.data",
    "reference.data_loaders.random_trees": "reference.random_trees.data",
    "reference.data_loaders.lpdt": "reference.lpdt.data",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of ``table`` and loads them as their new module."""

    def __init__(self, table: dict):
        self.table = table

    def find_spec(self, name, path=None, target=None):
        if name not in self.table:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=any(k.startswith(name + ".") for k in self.table))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        new = self.table[module.__spec__.name]
        if new is None:
            module.__doc__ = "Old import paths only: see reference._moved."
            return
        # the import system returns whatever sys.modules holds under the name once this returns
        sys.modules[module.__spec__.name] = importlib.import_module(new)


def install(table: dict) -> None:
    """Make every old path of ``table`` importable (once per table)."""
    if not any(isinstance(f, _Alias) and f.table is table for f in sys.meta_path):
        # first in line: an old path is the moved module even where another finder (an editable install of
        # another checkout, a stale file) would find a module under that name
        sys.meta_path.insert(0, _Alias(table))
