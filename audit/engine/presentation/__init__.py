"""Presentation: outcomes, figures and theorem rows written for a reader."""
