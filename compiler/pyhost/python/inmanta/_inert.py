"""Inert stand-ins for the parts of inmanta-core that only a server or an agent uses.

Any name of an inert module exists: it can be imported, subclassed (also as `Name[T]`), used
as a decorator (`@provider("x", name="y")`, `@cache`), and put in an annotation. Only using
it for a value fails, with its name, because modelc does not provide it at compile time.
"""

import importlib
import sys


class UnsupportedApi(Exception):
    """A stand-in was used for a value: modelc does not provide it at compile time."""

    def __init__(self, name):
        super().__init__(
            "modelc's inmanta API does not provide %s at compile time (a stand-in: it can be imported, "
            "subclassed and used as a decorator, not used as a value)" % name
        )
        self.name = name


def _refuse(method):
    def refuse(self, *args, **kwargs):
        raise UnsupportedApi(self._modelc_name)

    refuse.__name__ = method
    return refuse


def _called(name, args, kwargs):
    """A stand-in called: as a decorator (one callable) it returns what it decorates; otherwise
    it returns a decorator, for `@provider("x", name="y")`."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]
    return Decorator(name + "(...)")


def _member(name, attribute):
    """A stand-in's attribute: a stand-in too (dunder names are not, so Python's protocols see
    no such method)."""
    if attribute.startswith("__"):
        raise AttributeError(attribute)
    return stand_in(name + "." + attribute)


def _is_own(cls):
    """Whether `cls` is a stand-in itself, not a class deriving from one."""
    return cls.__dict__.get("_modelc_inert", False)


def _shown(name):
    return "<modelc stand-in for " + name + ">"


class _InertMeta(type):
    # A class of the module's own that derives from a stand-in is an ordinary class: only the
    # stand-in itself is called, read and shown as one.
    def __call__(cls, *args, **kwargs):
        if not _is_own(cls):
            return super().__call__(*args, **kwargs)
        return _called(cls._modelc_name, args, kwargs)

    def __getattr__(cls, name):
        if not _is_own(cls):
            raise AttributeError(name)
        return _member(cls._modelc_name, name)

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __repr__(cls):
        return _shown(cls._modelc_name) if _is_own(cls) else type.__repr__(cls)

    def __str__(cls):
        if not _is_own(cls):
            return type.__repr__(cls)
        raise UnsupportedApi(cls._modelc_name)

    def __format__(cls, spec):
        if not _is_own(cls):
            return format(type.__repr__(cls), spec)
        raise UnsupportedApi(cls._modelc_name)


class Decorator:
    """What a stand-in returns when called: as a decorator, it leaves what it decorates as it is."""

    def __init__(self, name):
        self._modelc_name = name

    def __call__(self, *args, **kwargs):
        return _called(self._modelc_name, args, kwargs)

    def __getattr__(self, name):
        return _member(self._modelc_name, name)

    def __repr__(self):
        return _shown(self._modelc_name)


# Using what a stand-in returned as a value fails, naming it, rather than letting a placeholder
# reach the model.
for _method in ("__str__", "__format__", "__bool__", "__iter__", "__len__", "__int__", "__float__",
                "__getitem__", "__contains__", "__add__", "__radd__", "__eq__", "__lt__", "__gt__"):
    setattr(Decorator, _method, _refuse(_method))
Decorator.__hash__ = object.__hash__


def stand_in(name):
    return _InertMeta(name.rsplit(".", 1)[-1], (), {"_modelc_inert": True, "_modelc_name": name})


def is_stand_in(value):
    return isinstance(value, Decorator) or (isinstance(value, _InertMeta) and _is_own(value))


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
