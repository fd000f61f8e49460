"""The one thing pyproject.toml cannot say to the setuptools of every supported install: an optional C extension.

`fairdice.bots.optimal._walks` computes the optimal table's lattice walks (bit for bit the numpy walks of
programme.py, which stay the reference and the fallback).  `optional=True`: without a C compiler the install
still succeeds and the build uses numpy.  -O3 and no -march: one built module runs on every machine of its
architecture (on x86-64 the C picks AVX-512, AVX2 or the baseline at load time).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("fairdice.bots.optimal._walks", ["fairdice/bots/optimal/_walks.c"],
                             extra_compile_args=["-O3"], optional=True)])
