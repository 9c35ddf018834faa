"""inmanta.plugins: `@plugin`, `Context`, `PluginException`, and the runtime that calls plugins
for modelc and converts values both ways."""

import os
import sys

from inmanta._inert import UnsupportedApi, is_stand_in, stand_in
from inmanta.ast import NotFoundException, OptionalValueException, RuntimeException
from inmanta.execute.proxy import (
    _new,
    _set_dict,
    _set_id,
    _set_runtime,
    _set_type,
    FinalInstanceProxy,
    InstanceProxy,
    Named,
    UnknownException,
    new_final_proxy,
    new_proxy,
)
from inmanta.execute.util import NoneValue, Unknown


class PluginException(Exception):
    """Raised by a plugin on purpose: the compile fails with its message."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class _Suspend(BaseException):
    """A value the plugin read is not complete yet: the call ends and is made again later."""


class _Entry:
    __slots__ = ("function", "_context")

    def __init__(self, function):
        self.function = function
        self._context = _UNREAD

    @property
    def context(self):
        """Where the plugin takes its `Context`, read at its first call (a handler host imports
        the modules' plugins but never calls them)."""
        if self._context is _UNREAD:
            self._context = _context_parameter(self.function)
        return self._context


_UNREAD = object()


_registry = {}


def _namespace(module_name):
    parts = module_name.split(".")
    if parts[0] == "inmanta_plugins":
        parts = parts[1:]
    return "::".join(parts)


def _context_parameter(function):
    """The parameter that takes the `Context`: (its name, its position)."""
    annotations = getattr(function, "__annotations__", None)
    if isinstance(annotations, dict) and not any(_is_context(a) for a in annotations.values()):
        # Most plugins take none: `inspect` is imported only for those that may.
        return None
    import inspect

    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    for position, parameter in enumerate(parameters):
        if _is_context(parameter.annotation):
            positional = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            return (parameter.name, position if positional else None)
    return None


def _is_context(annotation):
    # A string under `from __future__ import annotations`: `Context`, `plugins.Context`.
    return annotation is Context or (isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] == "Context")


def plugin(function=None, commands=None, emits_statements=False, allow_unknown=False, name=None):
    """`@plugin`, `@plugin("name")`, `@plugin(allow_unknown=True)`: registers a plugin."""

    def register(fn, plugin_name):
        _registry[_namespace(fn.__module__) + "::" + (plugin_name or fn.__name__)] = _Entry(fn)
        return fn

    if callable(function):
        return register(function, name)
    if isinstance(function, str):
        name = function
    return lambda fn: register(fn, name)


def deprecated(function=None, **kwargs):
    """`@deprecated`, `@deprecated(replaced_by=...)`: modelc reads it from the source; here it is inert."""
    if callable(function):
        return function
    return lambda fn: fn


def allow_reference_values(function):
    return function


# Names real modules import only for annotations and base classes.
Plugin = stand_in("inmanta.plugins.Plugin")
PluginMeta = stand_in("inmanta.plugins.PluginMeta")
CheckedArgs = stand_in("inmanta.plugins.CheckedArgs")
ModelType = stand_in("inmanta.plugins.ModelType")


class _Located:
    """`Context.owner` (the call) and `Context.plugin`: only their namespace is known."""

    def __init__(self, namespace):
        self.namespace = Named(namespace)


class Context:
    """What a plugin that asks for it receives: the compile's environment and data directory,
    the namespaces of the plugin and of its caller. A server is never there at compile time in
    modelc."""

    def __init__(self, namespace, caller):
        self._namespace = namespace
        self.plugin = _Located(namespace)
        self.owner = _Located(caller)

    def get_environment_id(self):
        # As the reference: the configured environment, "None" without one.
        return str(_runtime.environment)

    def get_data_dir(self):
        path = os.path.join(_runtime.base, "data", self._namespace)
        os.makedirs(path, exist_ok=True)
        return path

    def _no_server(self, what):
        raise PluginException("modelc compiles without an Inmanta server: Context." + what + " is not available")

    def get_client(self):
        self._no_server("get_client()")

    def get_sync_client(self):
        self._no_server("get_sync_client()")

    def run_sync(self, function, timeout=5):
        self._no_server("run_sync()")

    def get_compiler(self):
        self._no_server("get_compiler()")

    def get_queue_scheduler(self):
        self._no_server("get_queue_scheduler()")

    def get_resolver(self):
        self._no_server("get_resolver()")

    def get_type(self, name):
        self._no_server("get_type()")


class _Unconvertible(Exception):
    pass


_SCALARS = frozenset((str, int, float, bool, type(None)))


class _Decoded:
    """A final value, decoded (see `_Runtime.attribute`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Failed:
    """modelc's answer to a read that gave no value (see `_Runtime.attribute`)."""

    __slots__ = ("reply",)

    def __init__(self, reply):
        self.reply = reply


_MISSING = object()

# How many resources of a batch go in one part of its answer.
_PART = 1000


class _Runtime:
    # While resources are mapped (the model is final): instance → attribute → modelc's answer
    # (or the value, once decoded).
    final = None
    items = None
    proxies = None

    """Calls plugins for modelc: decodes arguments, reads instances back through modelc, encodes
    results."""

    def configure(self, send, receive, init):
        self.send = send
        self.receive = receive
        self.modules = {m["module"]: m for m in init["modules"]}
        self.base = init.get("base") or os.getcwd()
        self.module_roots = init.get("module_roots", {})
        self.environment = init.get("environment")
        self.loaded = {}

    def load(self, module):
        """Imports a module's Python once, all its files (each may define plugins). `None`, or
        why it did not load, as the answer to every call of its plugins."""
        if module not in self.loaded:
            import importlib

            try:
                importlib.import_module("inmanta_plugins." + module)
                for sub in self.modules.get(module, {}).get("submodules", []):
                    importlib.import_module("inmanta_plugins." + sub)
                if "inmanta.resources" in sys.modules:
                    # Its resources will be mapped: what the exporter needs is imported now,
                    # while modelc is still checking the model.
                    importlib.import_module("inmanta.export")
                self.loaded[module] = None
            except BaseException as error:
                message = "the Python of module %s did not load: %s" % (module, _describe(error))
                if isinstance(error, ImportError) and (error.name or "").split(".")[0] == "inmanta":
                    message += " (modelc's own inmanta API: docs/python-plugins.md lists what it provides)"
                self.loaded[module] = {"failed": message, "detail": _traceback(error)}
        return self.loaded[module]

    def call(self, message):
        fqn = message["p"]
        module = fqn.split("::")[0]
        failed = self.load(module)
        if failed is not None:
            return failed
        entry = _registry.get(fqn)
        if entry is None:
            return {"failed": "the Python of module %s defines no plugin %s when it runs" % (module, fqn)}
        try:
            args = [self.decode(a) for a in message["args"]]
            kwargs = {k: self.decode(v) for k, v in message["kwargs"].items()}
            if entry.context is not None:
                # In its place among the positional arguments the model passes, or by name.
                context = Context(fqn.rsplit("::", 1)[0], message.get("caller", "__config__"))
                name, position = entry.context
                if position is not None and position <= len(args):
                    args.insert(position, context)
                else:
                    kwargs[name] = context
            result = entry.function(*args, **kwargs)
            return {"result": self.encode(result, fqn)}
        except _Suspend:
            return {"wait": 1}
        except UnknownException:
            # It read an unknown: its result is unknown, as in the reference.
            return {"result": {"$u": 1}}
        except _Unconvertible as error:
            return {"failed": str(error)}
        except UnsupportedApi as error:
            detail = _traceback(error)
            return {"failed": "it used %s, which modelc does not provide at compile time" % error.name, "detail": detail}
        except BaseException as error:
            text = _traceback(error)
            explicit = isinstance(error, PluginException)
            message = str(getattr(error, "message", error)) if explicit else str(error)
            return {"raised": {"kind": type(error).__name__, "message": message, "traceback": text, "explicit": explicit}}

    def map(self, message):
        """Runs the mappers of a module's resource class for a batch of instances (the
        reference's `Resource.create_from_model`, but for the fields modelc cannot read itself):
        per instance, the mapped fields' values, its id's value when the id is mapped, that a
        mapper asked to ignore it, or what a mapper raised."""
        from inmanta.resources import resource

        failed = self.load(message["module"])
        if failed is not None:
            return failed
        entity = message["entity"]
        cls, options = resource.get_class(entity)
        if cls is None:
            return {"failed": "the Python of module %s registers no resource class for %s when it runs"
                    % (message["module"], entity)}
        self.uploaded = {}
        self.final = {}
        self.proxies = {}
        # Which attributes of the instances themselves the mappers read, when modelc asks: it
        # sends those with the next batch.
        self.items = {item[0] for item in message["items"]} if message.get("reads") else None
        self.read_names = set()
        try:
            answer = self._map(message, cls, entity)
            if self.items is not None and "values" in answer:
                answer["reads"] = sorted(self.read_names)
            return answer
        finally:
            self.final = None
            self.items = None
            self.proxies = None

    def _map(self, message, cls, entity):
        """The batch's outcomes, sent in parts of `_PART` items as they are mapped (modelc reads
        each while the next is mapped), the last one returned: `values`, per item, the mapped
        fields' values (after the id's, when the id is mapped), or `null` for an item whose
        outcome is in `outcomes` instead (`[position in the part, {"ignored" | "unknown_id" |
        "raised": …}]`), and the files uploaded since the last part. The loop is the hot path of
        an export: a field whose mapper is the attribute, a value that needs no conversion and
        an instance read before are handled in line."""
        from inmanta.export import Exporter
        from inmanta.resources import IgnoreResourceException, Resource

        exporter = Exporter(self)
        # A class that keeps the reference's `map_field` is run without a call per field.
        custom = getattr(cls.map_field, "__func__", None) is not Resource.map_field.__func__
        fields = [(field, cls._mapper(field)) for field in message["fields"]]
        id_field = message.get("id")
        id_mapper = cls._mapper(id_field) if id_field is not None else None
        types = message["types"]
        # Each item is [instance, its entity in types, the value of each attribute in send]:
        # most mappers read only those, and find them in the proxy's own dict. How a column is
        # written (`columns`: plain, instance or tagged) tells what an item's value needs.
        send = message["send"]
        if any(hasattr(FinalInstanceProxy, name) for name in send):
            # Names the proxy's class defines are dropped (the class's own wins).
            send = [None if hasattr(FinalInstanceProxy, name) else name for name in send]
        proxies = self.proxies
        for instance, entity_type in message["instances"]:
            proxies[instance] = new_final_proxy(self, instance, entity_type, {})
        columns = message["columns"]
        instance_columns = [name for name, kind in zip(send, columns) if kind == "instance" and name is not None]
        tagged_columns = [name for name, kind in zip(send, columns) if kind == "tagged" and name is not None]
        dropped = None in send
        final = self.final
        values_out = []
        outcomes = []
        for item in message["items"]:
            instance = item[0]
            attributes = dict(zip(send, item[2:]))
            for name in instance_columns:
                attributes[name] = proxies[attributes[name]]
            for name in tagged_columns:
                raw = attributes[name]
                if raw.__class__ in _SCALARS:
                    continue
                del attributes[name]
                if raw.__class__ is dict and "$m" in raw:
                    # Asked when read (and told why it has no value).
                    continue
                value = self.decode(raw)
                if isinstance(value, Unknown):
                    # Where a read finds it, and raises.
                    final.setdefault(instance, {})[name] = _Decoded(value)
                else:
                    attributes[name] = value
            if dropped:
                del attributes[None]
            model_object = proxies.get(instance)
            if model_object is None:
                # `new_final_proxy`, in line.
                model_object = proxies[instance] = _new(FinalInstanceProxy)
                _set_runtime(model_object, self)
                _set_id(model_object, instance)
                _set_type(model_object, types[item[1]])
                _set_dict(model_object, "__dict__", attributes)
            else:
                # Made earlier, as what another item's relation holds.
                model_object.__dict__.update(attributes)
            field = id_field
            try:
                out = []
                if id_field is not None:
                    # As the reference: the id is mapped on its own, without the exporter.
                    value = cls.map_field(None, entity, id_field, model_object, id_mapper)
                    if isinstance(value, Unknown):
                        outcomes.append([len(values_out), {"unknown_id": 1}])
                        values_out.append(None)
                        continue
                    out.append(str(value))
                for field, mapper in fields:
                    if custom:
                        value = cls.map_field(exporter, entity, field, model_object, mapper)
                    else:
                        try:
                            value = getattr(model_object, field) if mapper is None else mapper(exporter, model_object)
                        except UnknownException as unknown:
                            value = unknown.unknown
                    if value.__class__ is not str or not value.isascii():
                        value = self.encode(value, entity, "its mapper returned")
                    out.append(value)
                values_out.append(out)
                if len(values_out) == _PART:
                    self.send(self._part(values_out, outcomes, op="part"))
                    values_out = []
                    outcomes = []
                continue
            except _Suspend:
                return {"wait": 1}
            except IgnoreResourceException:
                outcome = {"ignored": 1}
            except _Unconvertible as error:
                outcome = {"raised": {"field": field, "kind": "TypeError", "message": str(error),
                                      "traceback": "", "explicit": False}}
            except BaseException as error:
                explicit = isinstance(error, PluginException)
                text = str(getattr(error, "message", error)) if explicit else str(error)
                outcome = {"raised": {"field": field, "kind": type(error).__name__, "message": text,
                                      "traceback": _traceback(error), "explicit": explicit}}
            outcomes.append([len(values_out), outcome])
            values_out.append(None)
        return self._part(values_out, outcomes)

    def _part(self, values, outcomes, **extra):
        """A part of a batch's answer, with the files uploaded since the last one (as text, or
        `None` for content that is not UTF-8). Its `op` comes first, as in every question: modelc
        tells questions and parts from the final answer by their first bytes."""
        files = {}
        for digest, data in self.uploaded.items():
            if data.__class__ is not str:
                try:
                    data = data.decode("utf-8")
                except UnicodeDecodeError:
                    data = None
            files[digest] = data
        self.uploaded = {}
        return dict(extra, values=values, outcomes=outcomes, files=files)

    def depend(self, message):
        """Runs the dependency managers modelc names (`[module, function]`) over the exported
        resources (`[id, instance, fields, requires]`), as the reference's exporter does, and
        cleans up what they leave in `requires` as it does. The resources whose requires
        changed, with what they require now (ids), or why the managers failed."""
        from inmanta.export import _dependency_managers
        from inmanta.resources import Id, Resource, resource

        wanted = [tuple(manager) for manager in message["managers"]]
        for module in dict.fromkeys(module for module, _ in wanted):
            failed = self.load(module)
            if failed is not None:
                return failed
        managers = [f for f in _dependency_managers if (_module_of(f), f.__name__) in wanted]
        self.final = {}
        self.proxies = {}
        try:
            resources = {}
            order = []
            for resource_id, model, fields, requires in message["resources"]:
                ident = Id.parse_id(resource_id)
                cls, _ = resource.get_class(ident.entity_type)
                obj = (cls or Resource)(ident)
                for name, value in fields.items():
                    setattr(obj, name, value)
                obj.requires = {Id.parse_id(r) for r in requires}
                obj.model = self.decode(model)
                resources[ident] = obj
                order.append(obj)
            before = [{str(r) for r in obj.requires} for obj in order]
            types = stand_in("inmanta.export.ModelDict (the model's types, a dependency manager's first argument)")
            for function in managers:
                try:
                    function(types, resources)
                except UnknownException:
                    # As the reference: a manager that read an unknown adds nothing more.
                    pass
                except BaseException as error:
                    return {
                        "failed": "the dependency manager `%s` of module %s raised %s"
                        % (function.__name__, _module_of(function), _describe(error)),
                        "detail": _traceback(error),
                    }
            changed = []
            for at, obj in enumerate(order):
                after = set()
                for required in obj.requires:
                    required = _requirement(required, Id, Resource)
                    if required is None or required not in resources:
                        return {"failed": "a dependency manager made %s require %r, which is not an exported resource"
                                % (obj.id, required)}
                    after.add(str(required))
                if after != before[at]:
                    changed.append([at, sorted(after)])
            return {"changed": changed}
        finally:
            self.final = None
            self.proxies = None

    def decode(self, value):
        if value.__class__ in _SCALARS:
            return value
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if isinstance(value, dict):
            if "$i" in value:
                instance = value["$i"]
                proxies = self.proxies
                if proxies is None:
                    return new_proxy(self, instance, value["t"])
                # While mapping, one proxy per instance, which keeps what is read of it.
                proxy = proxies.get(instance)
                if proxy is None:
                    proxy = proxies[instance] = new_final_proxy(self, instance, value["t"], {})
                return proxy
            if "$u" in value:
                return Unknown(None)
            return {k: self.decode(v) for k, v in value["$d"].items()}
        return value

    def encode(self, value, fqn, what="it returned"):
        if value is None or isinstance(value, bool):
            return value
        if value.__class__ is str and value.isascii():
            return value
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _Unconvertible("%s %r, which is not text (a lone surrogate)" % (what, value)) from None
            return value
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise _Unconvertible("%s %r, which the model's float can not hold" % (what, value))
            return value
        if isinstance(value, int):
            if -(2**63) <= value < 2**63:
                return value
            raise _Unconvertible("%s %d, too large for the model's int" % (what, value))
        if isinstance(value, (list, tuple)):
            return [self.encode(v, fqn, what) for v in value]
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _Unconvertible("%s a dict with a key that is not a string: %r" % (what, key))
                out[key] = self.encode(item, fqn, what)
            return {"$d": out}
        if isinstance(value, InstanceProxy):
            return {"$i": value._modelc_id}
        if isinstance(value, Unknown):
            return {"$u": 1}
        if isinstance(value, NoneValue):
            return None
        if is_stand_in(value):
            raise _Unconvertible(
                "%s modelc's stand-in for %s: modelc does not provide it at compile time" % (what, value._modelc_name)
            )
        raise _Unconvertible("%s a %s, which the model can not hold" % (what, type(value).__name__))

    def attribute(self, instance, name):
        final = self.final
        if final is None:
            self.send({"op": "get", "i": instance, "a": name})
            return self.answer()
        # At export every value is final: each is asked (or was sent) once, and decoded once.
        # A batch's attributes are their encoded values; what was asked is kept as the answer.
        attributes = final.get(instance)
        if attributes is None:
            attributes = final[instance] = {}
        found = attributes.get(name, _MISSING)
        if found is _MISSING:
            if self.items is not None and instance in self.items:
                self.read_names.add(name)
            self.send({"op": "get", "i": instance, "a": name})
            reply = self.receive()
            if "v" not in reply:
                attributes[name] = _Failed(reply)
                return self.reply(reply)
            found = reply["v"]
        elif found.__class__ is _Decoded:
            return found.value
        elif found.__class__ is _Failed:
            return self.reply(found.reply)
        value = self.decode(found)
        attributes[name] = _Decoded(value)
        return value

    def entity_type(self, entity):
        """An entity's parents (all of them) and attributes (`[name, is_relation]`, its own
        first), as the reference lists them; asked once per entity."""
        cache = self.__dict__.setdefault("_entity_types", {})
        if entity not in cache:
            self.send({"op": "entity", "t": entity})
            cache[entity] = self.answer()
        return cache[entity]

    def std(self, name, args, kwargs):
        """A std plugin called from Python (`inmanta_plugins.std.<name>`): modelc runs it."""
        self.send(
            {
                "op": "std",
                "p": name,
                "args": [self.encode(a, "std::" + name, "it passed std::" + name) for a in args],
                "kwargs": {k: self.encode(v, "std::" + name, "it passed std::" + name) for k, v in kwargs.items()},
            }
        )
        return self.answer()

    def answer(self):
        return self.reply(self.receive())

    def reply(self, reply):
        if "v" in reply:
            return self.decode(reply["v"])
        if "wait" in reply:
            raise _Suspend()
        if "notfound" in reply:
            raise NotFoundException(None, "", reply["notfound"])
        if "optional" in reply:
            raise OptionalValueException(None, None, reply["optional"])
        raise RuntimeException(None, reply.get("error", "modelc could not answer"))


def _module_of(function):
    """The module whose Python defines `function` (`inmanta_plugins.<module>.…`)."""
    parts = function.__module__.split(".")
    return parts[1] if parts[0] == "inmanta_plugins" and len(parts) > 1 else parts[0]


def _requirement(required, id_class, resource_class):
    """What a dependency manager put in `requires`, as an id (the reference's clean-up: an id, a
    resource, or an id's text with a version); `None` for anything else."""
    if isinstance(required, str):
        try:
            parsed = id_class.parse_id(required)
        except ValueError:
            return None
        return parsed if parsed.version != 0 else None
    if isinstance(required, resource_class):
        return required.id
    if isinstance(required, id_class):
        return required
    return None


def _traceback(error):
    """Python's traceback without modelc's and importlib's own frames: the module's code only,
    most recent call last."""
    import traceback

    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<")
        and not frame.filename.endswith(os.path.join("importlib", "__init__.py"))
    ]
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames) if frames else []
    return "".join(lines + traceback.format_exception_only(type(error), error))


def _describe(error):
    return "%s: %s" % (type(error).__name__, error)


_runtime = _Runtime()
