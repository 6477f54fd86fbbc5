# pip install ./python: the pure-Python package (it loads libh2o.so, built
# or installed separately; see h2o/__init__.py). setuptools only, offline.
from setuptools import setup

setup(name="h2o", version="0.1.0", description="h2o.cpp over its C interface (ctypes)",
      packages=["h2o"], python_requires=">=3.9")
