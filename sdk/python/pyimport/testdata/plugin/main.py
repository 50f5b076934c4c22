"""A plugin of our own that imports what it can and what it cannot load.

import notamodule  (in the docstring: not an import)
"""
import os, json as j  # the standard library
import exocortex as exo
from exocortex.v1 import hooks_pb2
import grpc
import litellm
from langchain_core.messages import (
    SystemMessage,
    HumanMessage,
)
import mylocal
from mypkg import thing
from . import sibling
try:
    import openai
except ImportError:
    openai = None
try:
    import tiktoken
finally:
    pass
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import anthropic


def later():
    import exo_not_installed_xyz  # fails when called
    return exo_not_installed_xyz


from helpers import files, extension
from helpers.extension import Extension
from python.helpers.log import Log
from agent import LoopData, Mystery
x = "import litellm"  # a string, not an import
import importlib
memory = importlib.import_module("helpers.memory")  # an Agent Zero internal, loaded by name
vectors = __import__("not_installed_vectorlib_xyz")
mine = importlib.import_module("mylocal")
computed = importlib.import_module("helpers." + "x")  # not a literal name: not read
