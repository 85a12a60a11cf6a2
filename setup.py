"""The C extension ``traceinsight.analysis._native``: its protobuf decoder
(traceinsight/analysis/_native_decode.c) and its event kernels (_native_kernels.c), sharing
_native.h; everything else is in pyproject.toml."""

from setuptools import Extension, setup

NATIVE = "traceinsight/analysis/"

setup(ext_modules=[Extension("traceinsight.analysis._native",
                             [NATIVE + "_native_decode.c", NATIVE + "_native_kernels.c"],
                             depends=[NATIVE + "_native.h"],
                             extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra",
                                                 "-Wno-unused-parameter"])])
