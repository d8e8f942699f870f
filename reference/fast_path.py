"""The fast-path protocol: a learner's batched sampler of its own releases.

A learner may define ``batched_release_sampler(self, **release_kwargs)``. It
returns a mechanism ``m`` with ``m.batch(data, n, rng)`` giving ``n``
independent releases, each with the law of
``clone(self).fit(X, y).release(**release_kwargs)`` for ``data = (X, y)``
(the law, not the random stream), or ``None`` when it has no fast path for
these parameters or this class. :func:`audit.learner_mechanism` uses it
automatically; ``python -m audit compare CLASS --reference self`` checks it
against the learner's own slow path.

A subclass inherits the method, so a declaring learner must return ``None``
for a subclass that changes a step of the algorithm (an audit mutant, a
user's variant): the fast path then never stands in for code it does not run.
:func:`overrides_nothing` is the conservative test for that.

A learner finds its batched sampler through :func:`registered`, never by importing the module that holds it:
that module imports the learner (its default estimator, its budget rules), so the import runs one way only,
sampler -> learner. The sampler's module registers it (:func:`register`) when it is imported, and the
learner's package imports that module, so the sampler is registered before any learner of the package exists.
"""
from __future__ import annotations

__all__ = ["SAMPLER", "BATCHES", "batched_sampler", "overrides_nothing", "register", "registered"]

#: the name of the protocol's method
SAMPLER = "batched_release_sampler"

#: learner class -> the batched sampler of its releases (filled by :func:`register`)
BATCHES: dict[type, type] = {}


def register(*learners: type):
    """Class decorator: the decorated batched sampler serves each of ``learners`` (see :func:`registered`)."""
    def decorate(sampler: type) -> type:
        for learner in learners:
            BATCHES[learner] = sampler
        return sampler
    return decorate


def registered(learner: type) -> type:
    """The batched sampler registered for the class ``learner`` (a ``LookupError`` naming it when none is)."""
    try:
        return BATCHES[learner]
    except KeyError:
        raise LookupError(f"no batched sampler is registered for {getattr(learner, '__name__', learner)!r}: "
                          "its package registers one when it is imported") from None


def overrides_nothing(cls: type, base: type) -> bool:
    """True when ``cls`` is ``base`` or a subclass that defines no attribute of its own other than
    dunder names (its docstring, module, ...) and scikit-learn's generated ``set_*_request`` methods
    (metadata routing, added to every subclass): the same algorithm under another name."""
    if not (isinstance(cls, type) and issubclass(cls, base)):
        return False
    for klass in cls.__mro__:
        if klass is base:
            return True
        if any(not (k.startswith("__") and k.endswith("__")) and not _routing(k) for k in vars(klass)):
            return False
    return False


def _routing(name: str) -> bool:
    return name.startswith("set_") and name.endswith("_request")


def batched_sampler(estimator, **release_kwargs):
    """``estimator``'s declared batched sampler of ``release(**release_kwargs)``, or ``None``."""
    method = getattr(estimator, SAMPLER, None)
    if not callable(method):
        return None
    return method(**release_kwargs)
