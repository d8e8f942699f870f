import numpy as np
from reference.mechanisms import TwoSidedGeometric  # exact integer noise: no float lattice to leak through


class NoisyMajority:
    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def fit(self, X, y):
        counts = np.array([np.sum(np.asarray(y) == c) for c in self.classes])
        self.noisy_counts_ = TwoSidedGeometric(self.epsilon)(counts, np.random.default_rng())
        self.label_ = self.classes[int(np.argmax(self.noisy_counts_))]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)
