"""inmanta.export: the exporter that resource mappers receive (`upload_file`,
`get_environment_id`), and the decorators of export plugins and dependency managers."""

import hashlib

from inmanta._inert import inert_module


class Exporter:
    """What a `get_<field>` mapper gets as its first argument at export."""

    def __init__(self, runtime):
        self._runtime = runtime

    def upload_file(self, content):
        """Stores a file's content for the agent; returns its hash, the way the reference names it."""
        if isinstance(content, str):
            # Kept as the text it is: modelc stores text.
            digest = hashlib.sha1(content.encode("utf-8")).hexdigest()
        else:
            content = bytes(content)
            digest = hashlib.sha1(content).hexdigest()
        self._runtime.uploaded[digest] = content
        return digest

    def get_environment_id(self):
        return str(self._runtime.environment)


# The registered dependency managers, in the order their modules registered them.
_dependency_managers = []


class dependency_manager:  # noqa: N801
    """`@dependency_manager`: a function that modelc's export calls with the model's types and
    the exported resources (id → resource), after it maps them; it may change what each
    resource `requires`."""

    def __init__(self, function):
        self.function = function
        _dependency_managers.append(function)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class export:  # noqa: N801
    """`@export("name", "mod::Entity", …)`: an export plugin, run only when a project names it."""

    def __init__(self, name, *types):
        self.name = name
        self.types = types

    def __call__(self, function):
        return function


__getattr__ = inert_module(__name__)
