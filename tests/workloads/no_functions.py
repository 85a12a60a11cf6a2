"""Test workload: defines model() but not data()."""


def model():
    return None
