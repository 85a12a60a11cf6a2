"""Test workload: data() raises (bad input: capture must refuse before writing anything)."""

import keras


def model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


def data():
    raise RuntimeError("the dataset file is missing")
