from inmanta.plugins import plugin

@plugin
def fine() -> "string"
    return "no colon above"
