"""inmanta.util: the JSON encoders plugins pass to `json.dumps`; `dict_path` imports (see
inmanta.util.dict_path); the rest is inert at compile time (see inmanta._inert)."""
import datetime
import enum
import sys

from inmanta._inert import inert_module


def internal_json_encoder(value):
    """What `json.dumps(default=...)` calls for values JSON has no form for."""
    # Not imported here (it costs a host's start milliseconds): a UUID exists only once
    # something imported `uuid`.
    uuid = sys.modules.get("uuid")
    if uuid is not None and isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError("%s is not JSON serializable" % type(value).__name__)


api_boundary_json_encoder = internal_json_encoder

__getattr__ = inert_module(__name__, ("inmanta.util.dict_path",))
