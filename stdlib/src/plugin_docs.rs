//! What each std plugin does, in a sentence or a few: shown by `modelc doc std`, in the
//! language server's hover, and in `docs/std.md`. Kept beside the signatures, one entry per
//! plugin (a test checks that none is missing).

/// The documentation of each std plugin, sorted by name.
pub static DOCS: &[(&str, &str)] = &[
    (
        "add_to_ip",
        "The address `n` places after `addr` (before it when `n` is negative), of the same IP version; an error when that leaves the version's range. `std::add_to_ip(\"10.0.0.1\", 3)` is `\"10.0.0.4\"`.",
    ),
    ("assert", "Fails the compile with `message` when `expression` is false; returns null otherwise."),
    ("at", "The element at `index` of `objects`; a negative index counts from the end."),
    (
        "attr",
        "The attribute called `attr` of the instance `obj`, read as an attribute written in the model would be (the call waits for its value).",
    ),
    ("capitalize", "The string with its first character in upper case and the others in lower case."),
    ("contains", "Whether the dictionary `dct` has the key `key`. Write `key in dct` instead."),
    (
        "count",
        "The number of elements of the list, unknown ones included. See `len`, whose result is unknown when an element is.",
    ),
    (
        "dict_get",
        "The value of `key` in the dictionary `dct`; an error when the key is missing. Write `dct[key]` instead.",
    ),
    (
        "environment",
        "The id of the orchestration environment the model is compiled for. modelc compiles without a server, so there is none and the call fails; a model that needs an id can take it from `std::get_env`.",
    ),
    (
        "environment_name",
        "The name of the orchestration environment; unknown with modelc, which compiles without a server.",
    ),
    (
        "environment_server",
        "The address of the orchestration server; unknown with modelc, which compiles without a server.",
    ),
    ("equals", "Fails the compile with `desc` when the two values differ. Write `std::assert(a == b, desc)` instead."),
    (
        "familyof",
        "Whether the operating system `member` is the family `family` or a member of it, following `family` links (`std::familyof(std::linux, \"linux\")` is true). As in the reference, the last OS of the chain is not compared: `std::familyof(std::linux, \"unix\")` is false.",
    ),
    (
        "file",
        "A reference to a file of a module's `files/` directory, `\"module/path\"`, that the runtime reads when it deploys: for a file resource's content without storing it in the model.",
    ),
    (
        "filter",
        "The list without the elements equal to `not_item`. Write a list comprehension instead: `[x for x in values if x != item]`.",
    ),
    (
        "flatten",
        "The elements of the list's elements, one level deep: `std::flatten(std::json_loads(\"[[1, 2], [3]]\"))` is `[1, 2, 3]`. A list literal already splices the lists written in it, so nested lists come from plugins.",
    ),
    (
        "format",
        "Python's `str.format`: `std::format(\"{}-{name}\", 1, name=\"a\")` is `\"1-a\"`. Fields may read attributes (`{0.name}`) and indexes (`{0[1]}`), with conversions (`!r`) and format specs (`{:>8}`).",
    ),
    (
        "generate_password",
        "The password stored under `pw_id` in the project's password file, or a new random one of `length` letters and digits, which is stored there for later compiles.",
    ),
    (
        "get_env",
        "The environment variable `name` of the compile, else `default_value`; unknown (with a warning) when neither is there.",
    ),
    (
        "get_env_int",
        "The environment variable `name` read as an integer, else `default_value`. Write `int(std::get_env(name))` instead.",
    ),
    (
        "getattr",
        "The attribute `attribute_name` of `entity`, or `default_value` when the entity has no such attribute. When the value is unknown, `default_value` too, unless `no_unknown` is false.",
    ),
    (
        "getfact",
        "A fact a deploy learnt about `resource` (its `fact_name`: a handler's `set_fact` or `facts`), as the store the compile reads keeps it (the project's, `MODELC_STORE`, `--store` or `--server`), else `default_value`, else unknown. Facts are text. Unlike the reference, no environment id is needed: the store is the environment. A resource whose id a module's Python mapper computes has no fact.",
    ),
    ("hostname", "The part of a fully qualified name before its first dot: `\"web.example.com\"` gives `\"web\"`."),
    ("inlineif", "`a` when `conditional` is true, else `b`. Write `conditional ? a : b` instead."),
    ("invert", "The negation of `value`. Write `not value` instead."),
    ("ip_address_from_interface", "The address part of an interface: `\"10.0.0.5/24\"` gives `\"10.0.0.5\"`."),
    (
        "ipindex",
        "The address at `position` in the network `addr` (negative from the end), with the network's prefix length when `keep_prefix` is true: `std::ipindex(\"10.0.0.0/24\", 1)` is `\"10.0.0.1\"`.",
    ),
    ("is_base64_encoded", "Whether `s` is strict base64: only the alphabet's characters, with correct padding."),
    (
        "is_instance",
        "Whether `obj` is an instance of the entity named `cls` (fully qualified) or of one that extends it.",
    ),
    (
        "is_unknown",
        "Whether `value` is unknown at compile time (a fact not yet discovered, an unset environment variable): the one plugin that sees unknowns instead of returning unknown.",
    ),
    ("isset", "Whether `value` is not null."),
    (
        "item",
        "The element at `index` of each list of `objects`: `std::item(std::json_loads(\"[[1, 2], [3, 4]]\"), 0)` is `[1, 3]`.",
    ),
    ("json_dumps", "The value as JSON text."),
    ("json_loads", "The JSON text `s` as a value: objects become dictionaries, arrays lists."),
    (
        "key_sort",
        "The instances sorted by the attribute `key`, or by a list of attribute names compared in turn. The sort is stable.",
    ),
    ("len", "The number of elements of the list; unknown when an element is unknown. See `count`."),
    ("length", "The number of characters of the string."),
    ("limit", "The first `length` characters of the string; a negative length drops that many from the end."),
    (
        "list_files",
        "The names of the files in a directory of a module's `files/` directory (`\"module/dir\"`, or `\"module\"` for its top), sorted.",
    ),
    ("lower", "The string in lower case."),
    ("netmask", "The netmask of an interface or network: `\"10.0.0.5/24\"` gives `\"255.255.255.0\"`."),
    ("network_address", "The network address of an interface: `\"10.0.0.5/24\"` gives `\"10.0.0.0\"`."),
    (
        "objid",
        "An identifier of the instance, unique within one compile: for debugging only, as it changes between compiles.",
    ),
    ("password", "The password stored under `pw_id` in the project's password file; an error when there is none."),
    ("prefixlen", "The prefix length of an interface or network: `\"10.0.0.5/24\"` gives 24."),
    ("prefixlength_to_netmask", "The IPv4 netmask of a prefix length: 24 gives `\"255.255.255.0\"`."),
    ("print", "Prints the value on the compiler's output, as a plugin sees it (`True`, `None`); returns null."),
    ("replace", "The string with every `old` replaced by `new`."),
    ("select", "The attribute `attr` of each instance of the list. Write `[o.attr for o in objects]` instead."),
    ("sequence", "The integers from `start`, `i` of them: `std::sequence(3, 1)` is `[1, 2, 3]`."),
    (
        "server_ca",
        "The path of the CA certificate the compiler uses to reach the orchestration server; empty with modelc, which compiles without a server.",
    ),
    ("server_port", "The port of the orchestration server; 0 with modelc, which compiles without a server."),
    (
        "server_ssl",
        "Whether the orchestration server is reached over TLS; false with modelc, which compiles without a server.",
    ),
    (
        "server_token",
        "An authentication token for the given client types from the orchestration server. Without a server (modelc compiles without one) it is `\"\"`, as in the reference.",
    ),
    (
        "source",
        "The text of a file of a module's `files/` directory, `\"module/path\"`, read at compile time. `\"./path\"` is in the module of the file that calls it, `\"/path\"` in the project's own `files/`.",
    ),
    ("split", "The parts of `string_list` between the occurrences of `delim`."),
    (
        "template",
        "Renders the Jinja2 template `\"module/path.j2\"` from a module's `templates/` directory (`\"./path.j2\"`: the calling file's module; `\"/path.j2\"`: the project's own `templates/`). With keyword arguments, the template sees those; without, it sees the caller's variables and, in an implementation, the instance's attributes. Reading an unknown value makes the result unknown. Rendered with minijinja: Jinja2's syntax and filters (`tojson` included) and Python's common string, list and dict methods (`.items()`, `.upper()`, `.format()`, …); `%` formatting is not supported. std's plugins are filters named `std.<plugin>`, as in the reference (`{{ name | std.upper }}`, `{{ hosts | std.key_sort(\"name\") }}`, `{{ none | std.timestamp }}`), except those that read files, passwords or the environment.",
    ),
    ("timestamp", "The time of the compile, in seconds since the Unix epoch."),
    ("type", "Fails, as in the reference: it is kept for models that name it but never call it."),
    ("unique", "Whether the elements of the list are all different (`1`, `1.0` and `true` count as the same)."),
    (
        "unique_file",
        "A file name unique for `seed`: `prefix`, the MD5 hex digest of `seed`, then `suffix`. As in the reference, `length` is ignored.",
    ),
    ("upper", "The string in upper case."),
    (
        "validate_type",
        "Whether `value` is valid for the named type (`\"ipaddress.IPv4Address\"`, `\"pydantic.PositiveInt\"`, `\"pydantic.constr\"` with `validation_parameters`, …): std's typedefs are built on it.",
    ),
];

/// The documentation of the std plugin called `name`.
pub fn doc(name: &str) -> Option<&'static str> {
    DOCS.binary_search_by(|(n, _)| n.cmp(&name)).ok().map(|i| DOCS[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signatures::SIGNATURES;

    #[test]
    fn every_plugin_has_a_doc_and_every_doc_a_plugin() {
        assert!(DOCS.windows(2).all(|w| w[0].0 < w[1].0), "keep DOCS sorted by name");
        let names: Vec<&str> = SIGNATURES.iter().map(|s| s.name).collect();
        let documented: Vec<&str> = DOCS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, documented);
        for (name, text) in DOCS {
            assert!(text.ends_with('.'), "{name}: a doc is sentences");
            assert_eq!(doc(name), Some(*text));
        }
    }
}
