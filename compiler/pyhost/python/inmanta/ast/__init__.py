"""inmanta.ast: the compiler's exceptions, as plugins raise and catch them."""
import importlib

from inmanta._inert import stand_in


class CompilerException(Exception):
    def __init__(self, msg=""):
        super().__init__(msg)
        self.msg = msg

    def get_message(self):
        return self.msg


class RuntimeException(CompilerException):
    def __init__(self, stmt=None, msg=""):
        super().__init__(msg)
        self.stmt = stmt


class TypingException(RuntimeException):
    pass


class ExternalException(RuntimeException):
    pass


class ExplicitPluginException(ExternalException):
    pass


class WrappingRuntimeException(RuntimeException):
    pass


class NotFoundException(RuntimeException, AttributeError):
    """A name that does not exist. Also an AttributeError, so `hasattr` and `getattr(x, n, d)`
    work on instances."""

    def __init__(self, stmt=None, name="", msg=None):
        super().__init__(stmt, msg if msg is not None else "could not find value " + str(name))
        self.name = name


class OptionalValueException(RuntimeException):
    """A read of an optional relation that has no value."""

    def __init__(self, instance=None, attribute=None, msg=""):
        super().__init__(None, msg)
        self.instance = instance
        self.attribute = attribute


class UnsetException(RuntimeException):
    pass


class DuplicateException(TypingException):
    pass


class AttributeException(WrappingRuntimeException):
    pass


class TypeNotFoundException(RuntimeException):
    pass


class KeyException(RuntimeException):
    pass


class CompilerRuntimeWarning(Warning):
    pass


# The compiler's own objects: only for annotations and isinstance checks.
Namespace = stand_in("inmanta.ast.Namespace")
LocatableString = stand_in("inmanta.ast.LocatableString")
Location = stand_in("inmanta.ast.Location")
Range = stand_in("inmanta.ast.Range")


def __getattr__(name):
    if name in ("entity", "attribute"):
        return importlib.import_module("inmanta.ast." + name)
    raise AttributeError("modelc's inmanta.ast has no %r" % name)
