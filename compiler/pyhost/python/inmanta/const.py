"""inmanta.const: the states and kinds of change handlers report, as the reference names them
(a handler compares and returns these); other names are inert (see inmanta._inert)."""
import enum

from inmanta._inert import inert_module


class ResourceState(str, enum.Enum):
    unavailable = "unavailable"
    skipped = "skipped"
    dry = "dry"
    deployed = "deployed"
    failed = "failed"
    deploying = "deploying"
    available = "available"
    cancelled = "cancelled"
    undefined = "undefined"
    skipped_for_undefined = "skipped_for_undefined"


class HandlerResourceState(str, enum.Enum):
    skipped = "skipped"
    skipped_for_dependency = "skipped_for_dependency"
    deployed = "deployed"
    failed = "failed"
    dry = "dry"


class Change(str, enum.Enum):
    nochange = "nochange"
    created = "created"
    purged = "purged"
    updated = "updated"


class ParameterSource(str, enum.Enum):
    fact = "fact"
    plugin = "plugin"
    user = "user"
    report = "report"


class ResourceAction(str, enum.Enum):
    store = "store"
    push = "push"
    pull = "pull"
    deploy = "deploy"
    dryrun = "dryrun"
    getfact = "getfact"
    other = "other"


class LogLevel(str, enum.Enum):
    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"
    INFO = "INFO"
    DEBUG = "DEBUG"
    TRACE = "TRACE"


RESOURCE_ATTRIBUTE_SEND_EVENTS = "send_event"
RESOURCE_ATTRIBUTE_RECEIVE_EVENTS = "receive_events"

__getattr__ = inert_module(__name__)
