"""inmanta.execute.util: `Unknown` (a value known only once deployed) and `NoneValue`."""


class Unknown:
    """A value that is not known at compile time. Plugins receive it only with
    `@plugin(allow_unknown=True)`, and may return it."""

    def __init__(self, source=None):
        self.source = source

    def __repr__(self):
        return "Unknown"


class NoneValue:
    """The model's `null`, as the reference names it; plugins receive Python's `None`."""

    def __eq__(self, other):
        return other is None or isinstance(other, NoneValue)

    def __hash__(self):
        return hash(None)

