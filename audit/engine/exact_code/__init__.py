"""The exact privacy loss of a user's own code on a tiny public domain (``check --exact``): the code's NumPy
randomness intercepted (:mod:`.intercept`), its noise kept as affine forms over atoms of known law
(:mod:`.symbolic`), every path of its randomness followed (:mod:`.explore`), and the loss of each neighbouring
pair bounded below by the release law and above by a complete law or a shift coupling (:mod:`.loss`)."""
