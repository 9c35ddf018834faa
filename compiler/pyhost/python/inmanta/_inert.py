"""Inert stand-ins for the parts of inmanta-core that only a server or an agent uses.

Any name of an inert module exists: it can be imported, subclassed (also as `Name[T]`), used
as a decorator (`@provider("x", name="y")`, `@cache`), and put in an annotation. Only using
it for a value fails, with its name, because modelc does not provide it at compile time.
"""

import importlib
import sys


class _InertMeta(type):
    def __call__(cls, *args, **kwargs):
        if not cls.__dict__.get("_modelc_inert"):
            # A class of the module's own that derives from a stand-in.
            return super().__call__(*args, **kwargs)
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return Decorator(cls._modelc_name + "(...)")

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return stand_in(cls._modelc_name + "." + name)

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __repr__(cls):
        return "<modelc stand-in for " + cls._modelc_name + ">"


class Decorator:
    """What a stand-in returns when called: as a decorator, it leaves what it decorates as it is."""

    def __init__(self, name):
        self._modelc_name = name

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return Decorator(self._modelc_name + "(...)")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return stand_in(self._modelc_name + "." + name)

    def __repr__(self):
        return "<modelc stand-in for " + self._modelc_name + ">"


def stand_in(name):
    return _InertMeta(name.rsplit(".", 1)[-1], (), {"_modelc_inert": True, "_modelc_name": name})


def is_stand_in(value):
    return isinstance(value, Decorator) or (isinstance(value, type) and value.__dict__.get("_modelc_inert", False))


def inert_module(module_name, shim_modules=()):
    """A module's `__getattr__`: submodules modelc ships are imported, any other name is a stand-in."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if module_name + "." + name in shim_modules:
            return importlib.import_module(module_name + "." + name)
        value = stand_in(module_name + "." + name)
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__
