"""The C extension (traceinsight/analysis/_native.c); everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("traceinsight.analysis._native", ["traceinsight/analysis/_native.c"],
                             extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra",
                                                 "-Wno-unused-parameter"])])
