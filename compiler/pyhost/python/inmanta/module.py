"""inmanta.module: `Project.get()` with the project's directory and its modules' directories, as
plugins read them to find module files; the rest is inert at compile time (see inmanta._inert)."""
from inmanta._inert import inert_module


class _Module:
    def __init__(self, name, path):
        self.name = name
        self._path = path

    @property
    def path(self):
        return self._path


class Project:
    """The compile's project, as plugins see it."""

    _project = None

    def __init__(self, project_path, modules):
        self.project_path = project_path
        self.modules = modules

    @classmethod
    def get(cls, main_file="main.cf"):
        if cls._project is None:
            from inmanta.plugins import _runtime

            modules = {name: _Module(name, path) for name, path in _runtime.module_roots.items()}
            cls._project = Project(_runtime.base, modules)
        return cls._project


__getattr__ = inert_module(__name__)
