"""modelc's `inmanta` package: the plugin API that modules' Python uses at compile time.

It stands in for inmanta-core inside modelc's plugin host, even where inmanta-core is installed:
plugins get modelc's values and instances, not inmanta-core's compiler objects. The parts only
an Inmanta server or agent uses (handlers, resources, exporters) are inert stand-ins, so that
modules import as they do under the reference.
"""

__modelc__ = True
