"""inmanta.util: inert at compile time (see inmanta._inert); `dict_path` imports."""
from inmanta._inert import inert_module

__getattr__ = inert_module(__name__, ("inmanta.util.dict_path",))
