"""A correct noisy-count classifier that talks: it prints a line and warns on every fit, as many do
(a timing line, a "weak guarantee" warning). The gate fits it tens of thousands of times."""
import warnings

from subjects.noisy_counts import NoisyCounts


class ChattyCounts(NoisyCounts):
    def fit(self, X, y):
        print("ChattyCounts: fitted")
        warnings.warn("epsilon >= 1 gives a weak guarantee", UserWarning)
        return super().fit(X, y)
