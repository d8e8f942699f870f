"""The statistical auditor: does a mechanism or learner keep its privacy claim?"""
from .exact import exact_loss, privacy_loss

__all__ = ["exact_loss", "privacy_loss"]
