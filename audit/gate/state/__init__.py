"""The gate's state and replay evidence: random state a fitted model keeps, found by walking the model
(:mod:`~audit.gate.state.walk`), decoded in any encoding (:mod:`~audit.gate.state.codec`), replayed against the
published noise (:mod:`~audit.gate.state.replay`) and judged (:mod:`~audit.gate.state.probe`);
:mod:`~audit.gate.state.model` reads the numbers a fitted model publishes."""
