"""inmanta.ast: the compiler's exceptions, as plugins raise and catch them."""
from inmanta._inert import inert_module


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


__getattr__ = inert_module(__name__, ("inmanta.ast.entity", "inmanta.ast.attribute"))
