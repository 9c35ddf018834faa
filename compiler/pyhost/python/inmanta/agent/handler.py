"""inmanta.agent.handler: the handler API modules write their handlers against, with modelc's
behaviour (docs/runtime.md, "Handlers written in Python"): `@provider` registers a handler
class for a resource type, `CRUDHandler` and `ResourceHandler` compare and apply, the
`HandlerContext` collects the changes, logs and facts modelc reports, `@cache` keeps values
for the run. At compile time these classes are only defined, never run.

Names the reference's agent has and modelc does not provide are inert (see inmanta._inert).
"""

import functools
import json
import logging
import time
import typing

from inmanta import const
from inmanta._inert import inert_module

LOGGER = logging.getLogger("inmanta.agent.handler")

T = typing.TypeVar("T")
TResource = typing.TypeVar("TResource")
TPurgeableResource = typing.TypeVar("TPurgeableResource")
TDiscovery = typing.TypeVar("TDiscovery")
TDiscovered = typing.TypeVar("TDiscovered")


class SkipResource(Exception):
    """Raised by a handler: the resource is not deployed now (modelc reports it `skipped`, and
    its retries try it again)."""


class SkipResourceForDependencies(SkipResource):
    """Skipped because of what it depends on."""


class ResourcePurged(Exception):
    """Raised by `read_resource`: the resource does not exist."""


class InvalidOperation(Exception):
    """An operation the handler does not support for this resource."""


class HandlerNotAvailableException(Exception):
    """No handler can deploy this resource here."""


class provider:  # noqa: N801
    """`@provider("mod::Entity", name="...")`: the class deploys resources of that type. The
    last one registered for a type is the one used, as in the reference."""

    _registry = {}

    def __init__(self, resource_type, name=None):
        self._resource_type = resource_type
        self._name = name

    def __call__(self, cls):
        provider._registry[self._resource_type] = cls
        cls.__modelc_provider__ = (self._resource_type, self._name)
        return cls

    @classmethod
    def get(cls, resource_type):
        return cls._registry.get(resource_type)

    @classmethod
    def types(cls):
        return sorted(cls._registry)

    @classmethod
    def reset(cls):
        cls._registry = {}


class Commander:
    """The reference's registry of providers, as modules that look into it see it."""

    @classmethod
    def get_handlers(cls):
        return dict(provider._registry)

    @classmethod
    def get_providers(cls):
        return iter(provider._registry.items())

    @classmethod
    def get_provider_class(cls, resource_type, name=None):
        return provider._registry.get(resource_type)

    @classmethod
    def add_provider(cls, resource_type, handler_class):
        provider._registry[resource_type] = handler_class

    @classmethod
    def reset(cls):
        provider.reset()


# --- @cache -------------------------------------------------------------------------------


class AgentCache:
    """Values handlers keep (`@cache`): by method and arguments, until their time is up or, for
    `for_version` entries, until the run ends; `call_on_delete` is called for each value dropped."""

    def __init__(self):
        self._entries = {}

    def get_or_else(
        self,
        key,
        function,
        for_version=True,
        timeout=5000,
        ignore=(),
        cache_none=True,
        call_on_delete=None,
        evict_after_creation=0,
        evict_after_last_access=0,
        **kwargs
    ):
        parts = [key] + ["%s=%r" % (name, kwargs[name]) for name in sorted(kwargs) if name not in ignore]
        entry_key = "|".join(parts)
        now = time.monotonic()
        entry = self._entries.get(entry_key)
        if entry is not None and (entry["expires"] is None or entry["expires"] > now):
            entry["accessed"] = now
            return entry["value"]
        if entry is not None:
            self._drop(entry_key)
        value = function(**kwargs)
        if value is None and not cache_none:
            return value
        lifetime = evict_after_creation or evict_after_last_access or (None if for_version else timeout)
        self._entries[entry_key] = {
            "value": value,
            "expires": None if lifetime is None else now + lifetime,
            "for_version": for_version,
            "call_on_delete": call_on_delete,
            "accessed": now,
        }
        return value

    def _drop(self, entry_key):
        entry = self._entries.pop(entry_key)
        if entry["call_on_delete"] is not None:
            try:
                entry["call_on_delete"](entry["value"])
            except Exception:
                LOGGER.exception("a cached value could not be dropped")

    def close_run(self):
        """The run ended: what was kept for it goes."""
        for entry_key in [k for k, e in self._entries.items() if e["for_version"]]:
            self._drop(entry_key)

    def close(self):
        for entry_key in list(self._entries):
            self._drop(entry_key)


def _parameters(function):
    """Each parameter of `function` as (name, default, whether it has one). Read from its code
    for a plain function (`inspect` costs a handler host's start a few milliseconds)."""
    code = getattr(function, "__code__", None)
    if code is None or hasattr(function, "__wrapped__") or code.co_flags & (_VARARGS | _VARKEYWORDS):
        import inspect

        listed = inspect.signature(function).parameters.values()
        return [(p.name, p.default, p.default is not p.empty) for p in listed]
    positional = code.co_varnames[: code.co_argcount]
    keyword_only = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    defaults = function.__defaults__ or ()
    first_default = len(positional) - len(defaults)
    keyword_defaults = function.__kwdefaults__ or {}
    listed = [
        (name, defaults[i - first_default] if i >= first_default else None, i >= first_default)
        for i, name in enumerate(positional)
    ]
    listed += [(name, keyword_defaults.get(name), name in keyword_defaults) for name in keyword_only]
    return listed


# The flags of a code object that takes `*args` / `**kwargs` (`inspect.CO_VARARGS`, …).
_VARARGS, _VARKEYWORDS = 0x04, 0x08


def cache(
    func=None,
    ignore=(),
    timeout=5000,
    for_version=True,
    cache_none=True,
    cacheNone=True,  # noqa: N803 (the reference's old spelling)
    call_on_delete=None,
    evict_after_creation=0,
    evict_after_last_access=0,
):
    """A handler method whose result is kept in the handler's cache, by its arguments (those
    named in `ignore` do not count)."""

    def decorate(method):
        parameters = []

        @functools.wraps(method)
        def cached(self, *args, **kwargs):
            if not parameters:
                # Read at the first call, not when the class is made: a compile imports the
                # modules' handlers too.
                parameters.append(_parameters(method)[1:])
            # The arguments by name, as `inspect.Signature.bind` would give them, defaults included.
            arguments = dict(zip((name for name, _, _ in parameters[0]), args))
            arguments.update(kwargs)
            for name, default, has_default in parameters[0]:
                if has_default and name not in arguments:
                    arguments[name] = default

            def compute(**named):
                return method(self, **named)

            return self.cache.get_or_else(
                method.__name__,
                compute,
                for_version=for_version,
                timeout=timeout,
                ignore=ignore,
                cache_none=cache_none and cacheNone,
                call_on_delete=call_on_delete,
                evict_after_creation=evict_after_creation,
                evict_after_last_access=evict_after_last_access,
                **arguments
            )

        return cached

    if func is not None:
        return decorate(func)
    return decorate


# --- logging --------------------------------------------------------------------------------


class LoggerABC:
    """What handlers log through: a message with `%(name)s` placeholders and keyword values."""

    def critical(self, msg, *args, exc_info=False, **kwargs):
        self._log_msg(logging.CRITICAL, msg, *args, exc_info=exc_info, **kwargs)

    def error(self, msg, *args, exc_info=False, **kwargs):
        self._log_msg(logging.ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def warning(self, msg, *args, exc_info=False, **kwargs):
        self._log_msg(logging.WARNING, msg, *args, exc_info=exc_info, **kwargs)

    def info(self, msg, *args, exc_info=False, **kwargs):
        self._log_msg(logging.INFO, msg, *args, exc_info=exc_info, **kwargs)

    def debug(self, msg, *args, exc_info=False, **kwargs):
        self._log_msg(logging.DEBUG, msg, *args, exc_info=exc_info, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs):
        self._log_msg(logging.ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def _log_msg(self, level, msg, *args, exc_info=False, **kwargs):
        raise NotImplementedError()


def _format(msg, kwargs):
    """The message with its placeholders filled; as written when they do not fit."""
    try:
        return msg % kwargs if kwargs else msg
    except (KeyError, TypeError, ValueError):
        return msg


class PythonLogger(LoggerABC):
    """Logs to a Python logger."""

    def __init__(self, logger):
        self.logger = logger

    def _log_msg(self, level, msg, *args, exc_info=False, **kwargs):
        if args:
            raise Exception("Args not supported")
        self.logger.log(level, _format(msg, kwargs), exc_info=exc_info)


_ENCODER = json.JSONEncoder()
_SCALARS = (str, int, float, bool, type(None))


def _loggable(value):
    """A keyword value as the report keeps it: as JSON has it, else its text."""
    if type(value) in _SCALARS:
        return value
    try:
        _ENCODER.encode(value)
        return value
    except (TypeError, ValueError):
        return str(value)


class HandlerContext(LoggerABC):
    """What one handler run reports: its status, the changes it found or made, its logs and
    the facts it learnt; values the handler's methods pass to each other (`set`/`get`)."""

    # The lowest level kept: DEBUG lines (each of a mitogen proxy's calls, say) only when the
    # deploy asks for them.
    level = logging.DEBUG

    def __init__(self, resource, dry_run=False, action_id=None, logger=None):
        self._resource = resource
        self._dry_run = dry_run
        self._action_id = action_id
        self._logger = logger
        self._cache = {}
        self._status = None
        self._created = False
        self._purged = False
        self._updated = False
        self._change = const.Change.nochange
        self._changes = {}
        self._logs = []
        self._facts = []

    # Status and values.
    @property
    def action_id(self):
        return self._action_id

    @property
    def status(self):
        return self._status

    def set_status(self, status):
        self._status = const.ResourceState(status)

    def is_dry_run(self):
        return self._dry_run

    def get(self, name):
        return self._cache[name]

    def contains(self, key):
        return key in self._cache

    def set(self, name, value):
        self._cache[name] = value

    # Facts.
    def set_fact(self, fact_id, value, expires=True):
        self._facts.append(
            {"id": str(self._resource.id), "name": fact_id, "value": str(value), "expires": bool(expires)}
        )

    @property
    def facts(self):
        return self._facts

    # Changes.
    def set_created(self):
        self._created = True
        self._change = const.Change.created

    def set_purged(self):
        self._purged = True
        self._change = const.Change.purged

    def set_updated(self):
        self._updated = True
        self._change = const.Change.updated

    @property
    def changed(self):
        return self._created or self._updated or self._purged

    @property
    def change(self):
        return self._change

    def add_change(self, name, desired, current=None):
        self._changes[name] = {"current": current, "desired": desired}

    def add_changes(self, **kwargs):
        for name, value in kwargs.items():
            self._changes[name] = {"current": None, "desired": value}

    def fields_updated(self, fields):
        pass

    def update_changes(self, changes):
        """Changes as `{field: {"current": .., "desired": ..}}` or `{field: (current, desired)}`."""
        for name, change in changes.items():
            if isinstance(change, dict):
                self.add_change(name, desired=change.get("desired"), current=change.get("current"))
            elif isinstance(change, (tuple, list)) and len(change) == 2:
                self.add_change(name, desired=change[1], current=change[0])
            elif hasattr(change, "desired"):
                self.add_change(name, desired=change.desired, current=getattr(change, "current", None))
            else:
                raise InvalidOperation("Reported changes are not in a supported format: %r" % (change,))

    @property
    def changes(self):
        return self._changes

    # Logs.
    @property
    def logs(self):
        return self._logs

    def _log_msg(self, level, msg, *args, exc_info=False, **kwargs):
        if args:
            raise Exception("Args not supported")
        if level < HandlerContext.level:
            return
        if exc_info:
            import traceback

            kwargs["traceback"] = traceback.format_exc()
        kwargs = {name: _loggable(value) for name, value in kwargs.items()}
        self._logs.append(
            {"level": logging.getLevelName(level), "message": _format(msg, kwargs), "kwargs": kwargs}
        )
        if self._logger is not None:
            self._logger.log(level, _format(msg, kwargs))


# --- handlers -------------------------------------------------------------------------------


class HandlerAPI(typing.Generic[TResource]):
    """The base of every handler: `pre` and `post` around each operation, `facts`, a refresh
    (`can_reload`/`do_reload`) when something it requires changed, file contents by hash."""

    def __init__(self, agent, io=None):
        self._agent = agent
        self._io = io if io is not None else getattr(agent, "io", None)
        self.cache = getattr(agent, "cache", None)

    def set_cache(self, cache):
        self.cache = cache

    def close(self):
        pass

    def pre(self, ctx, resource):
        pass

    def post(self, ctx, resource):
        pass

    def can_reload(self):
        return False

    def do_reload(self, ctx, resource):
        pass

    def facts(self, ctx, resource):
        return {}

    def check_facts(self, ctx, resource):
        facts = {}
        try:
            self.pre(ctx, resource)
            facts = self.facts(ctx, resource)
        finally:
            try:
                self.post(ctx, resource)
            except Exception as error:
                _failed_after(ctx, resource, error, "getting facts about")
        return facts

    def execute(self, ctx, resource, dry_run=False):
        raise NotImplementedError()

    def _operation(self, ctx, resource, operation, what="deployment of"):
        """`pre`, then `operation()`, then `post` whatever happened: a `SkipResource` is the
        status `skipped`, any other exception `failed`, each logged with why."""
        try:
            self.pre(ctx, resource)
            operation()
        except SkipResource as error:
            _skipped(ctx, resource, error)
        except Exception as error:
            _failed(ctx, resource, error)
        finally:
            try:
                self.post(ctx, resource)
            except Exception as error:
                _failed_after(ctx, resource, error, what)

    def deploy(self, ctx, resource, requires):
        """The resources it requires deployed (modelc runs it only then): applies it."""
        self.execute(ctx, resource, dry_run=False)

    def get_file(self, hash_id):
        """A file's content by its hash, from the version being deployed; `None` if it has none."""
        return self._agent.get_file(hash_id)

    def stat_file(self, hash_id):
        return self.get_file(hash_id) is not None

    def upload_file(self, hash_id, content):
        raise InvalidOperation("modelc's handlers do not upload files to a server")

    def run_sync(self, func):
        raise InvalidOperation("modelc's handlers have no server to call")

    def get_client(self):
        raise InvalidOperation("modelc's handlers have no server to call")


def _failed_after(ctx, resource, error, what):
    ctx.exception(
        "An error occurred after %(what)s %(resource_id)s (exception: %(exception)s)",
        what=what,
        resource_id=str(resource.id),
        exception="%s('%s')" % (error.__class__.__name__, error),
    )


def _skipped(ctx, resource, error):
    ctx.set_status(const.ResourceState.skipped)
    ctx.warning(
        msg="Resource %(resource_id)s was skipped: %(reason)s", resource_id=str(resource.id), reason=error.args
    )


def _failed(ctx, resource, error):
    ctx.set_status(const.ResourceState.failed)
    ctx.exception(
        "An error occurred during deployment of %(resource_id)s (exception: %(exception)s)",
        resource_id=str(resource.id),
        exception="%s('%s')" % (error.__class__.__name__, error),
    )


class ResourceHandler(HandlerAPI[TResource]):
    """A handler that reads the current state (`check_resource`), lists what differs
    (`list_changes`) and applies it (`do_changes`)."""

    def _diff(self, current, desired):
        changes = {}
        for field in current.__class__.fields:
            current_value = getattr(current, field)
            desired_value = getattr(desired, field)
            if desired_value is not None and current_value != desired_value:
                changes[field] = {"current": current_value, "desired": desired_value}
        return changes

    def check_resource(self, ctx, resource):
        raise NotImplementedError()

    def list_changes(self, ctx, resource):
        return self._diff(self.check_resource(ctx, resource), resource)

    def do_changes(self, ctx, resource, changes):
        raise NotImplementedError()

    def execute(self, ctx, resource, dry_run=False):
        def operation():
            changes = self.list_changes(ctx, resource)
            ctx.update_changes(changes)
            if dry_run:
                ctx.set_status(const.ResourceState.dry)
            else:
                self.do_changes(ctx, resource, changes)
                ctx.set_status(const.ResourceState.deployed)

        self._operation(ctx, resource, operation)


class CRUDHandler(ResourceHandler[TPurgeableResource]):
    """A handler of a purgeable resource in four steps: `read_resource` on a copy of the desired
    state (raising `ResourcePurged` when it does not exist), then `create_resource`,
    `update_resource` or `delete_resource` with what `calculate_diff` found."""

    def read_resource(self, ctx, resource):
        pass

    def create_resource(self, ctx, resource):
        pass

    def delete_resource(self, ctx, resource):
        pass

    def update_resource(self, ctx, changes, resource):
        pass

    def calculate_diff(self, ctx, current, desired):
        return self._diff(current, desired)

    def execute(self, ctx, resource, dry_run=False):
        self._operation(ctx, resource, lambda: self._apply(ctx, resource, dry_run))

    def _apply(self, ctx, desired, dry_run):
        # Read into a copy that exists unless the read says otherwise: a read that forgets
        # `purged` must not make an existing resource look removed.
        current = desired.clone(purged=False)
        changes = {}
        try:
            ctx.debug("Calling read_resource")
            self.read_resource(ctx, current)
            changes = self.calculate_diff(ctx, current, desired)
        except ResourcePurged:
            if not desired.purged:
                changes["purged"] = {"desired": desired.purged, "current": True}
        for field, values in changes.items():
            ctx.add_change(field, desired=values["desired"], current=values["current"])
        if dry_run:
            ctx.set_status(const.ResourceState.dry)
            return
        if "purged" in changes:
            if changes["purged"]["desired"]:
                ctx.debug("Calling delete_resource")
                self.delete_resource(ctx, desired)
            else:
                ctx.debug("Calling create_resource")
                self.create_resource(ctx, desired)
        elif not desired.purged and changes:
            ctx.debug("Calling update_resource", changes=changes)
            self.update_resource(ctx, dict(changes), desired)
        ctx.set_status(const.ResourceState.deployed)


CRUDHandlerGeneric = CRUDHandler


class DiscoveryHandler(HandlerAPI[TDiscovery], typing.Generic[TDiscovery, TDiscovered]):
    """A handler that discovers resources: modelc has no server to report them to, so its
    deploy runs `discover_resources` and logs what it found."""

    def discover_resources(self, ctx, discovery_resource):
        raise NotImplementedError()

    def execute(self, ctx, resource, dry_run=False):
        def operation():
            found = self.discover_resources(ctx, resource)
            ctx.info("Discovered %(count)s resources", count=len(found or {}))
            ctx.set_status(const.ResourceState.dry if dry_run else const.ResourceState.deployed)

        self._operation(ctx, resource, operation, what="discovery of")


__getattr__ = inert_module(__name__)
