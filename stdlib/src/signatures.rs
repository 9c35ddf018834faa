//! The declared signatures of the std plugins, as the model sees them: parameter names, DSL
//! types, defaults and kinds. Name resolution and call checking read these; the executor binds
//! arguments with them before calling the Rust implementation.
//!
//! Types are DSL type strings resolved in the `std` namespace (`"string"`, `"int[]"`,
//! `"std::Entity"`), or `"any"` (anything, unknowns included), `"list"`, `"dict"` and `"null"`.

/// How a parameter binds, as in a Python signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Positional or keyword.
    Normal,
    /// `*args`: the remaining positional arguments.
    VarArgs,
    /// After `*args`: keyword only.
    KeywordOnly,
    /// `**kwargs`: the remaining keyword arguments.
    VarKeywords,
}

/// One parameter of a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: &'static str,
    pub kind: ParamKind,
    /// The default as a DSL literal (`20`, `null`, `true`, `""`), if the parameter has one.
    pub default: Option<&'static str>,
}

/// A plugin's signature and the properties that change how it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginSignature {
    /// The namespace that defines it: `std` for the plugins modelc implements, the Python
    /// module's namespace (`exec`, `files::json`) for a module's plugin written in Python.
    pub namespace: &'static str,
    /// The name within its namespace: `print`, `template`.
    pub name: &'static str,
    pub params: &'static [Param],
    /// The DSL type of the result; `"any"` when the plugin declares none, `"null"` for none.
    pub returns: &'static str,
    /// Called even when an argument is unknown (otherwise the result is unknown).
    pub allows_unknown: bool,
    /// Using it earns a deprecation warning.
    pub deprecated: bool,
    /// A Python plugin's docstring, cleaned (std's documentation is in `plugin_docs`).
    pub doc: Option<&'static str>,
}

impl PluginSignature {
    /// The parameters that must be given: no default, not `*args`/`**kwargs`.
    pub fn required(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|p| p.default.is_none() && matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly))
    }

    /// The signature as a reader sees it: `std::replace(string string, string old, string new)
    /// -> string`, with `*args`, `**kwargs` and defaults as declared.
    pub fn written(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let name = match p.kind {
                    ParamKind::VarArgs => format!("*{}", p.name),
                    ParamKind::VarKeywords => format!("**{}", p.name),
                    ParamKind::Normal | ParamKind::KeywordOnly => p.name.to_owned(),
                };
                match p.default {
                    Some(default) => format!("{} {name} = {default}", p.ty),
                    None => format!("{} {name}", p.ty),
                }
            })
            .collect();
        format!("{}::{}({}) -> {}", self.namespace, self.name, params.join(", "), self.returns)
    }

    /// What the plugin does, as its author wrote it: std's from `plugin_docs`, a Python
    /// plugin's docstring.
    pub fn documentation(&self) -> Option<&'static str> {
        if self.is_builtin() { crate::plugin_docs::doc(self.name) } else { self.doc }
    }

    /// The fully qualified name: `std::print`, `exec::in_shell`.
    pub fn fqn(&self) -> String {
        format!("{}::{}", self.namespace, self.name)
    }

    /// Implemented in Rust by modelc (std's plugins), rather than a module's Python.
    pub fn is_builtin(&self) -> bool {
        self.namespace == "std"
    }

    /// The largest number of positional arguments, or `None` with `*args`.
    pub fn max_positional(&self) -> Option<usize> {
        if self.params.iter().any(|p| p.kind == ParamKind::VarArgs) {
            return None;
        }
        Some(self.params.iter().filter(|p| p.kind == ParamKind::Normal).count())
    }
}

const fn p(name: &'static str, ty: &'static str) -> Param {
    Param { name, ty, kind: ParamKind::Normal, default: None }
}

const fn opt(name: &'static str, ty: &'static str, default: &'static str) -> Param {
    Param { name, ty, kind: ParamKind::Normal, default: Some(default) }
}

const fn var_args(name: &'static str, ty: &'static str) -> Param {
    Param { name, ty, kind: ParamKind::VarArgs, default: None }
}

const fn var_keywords(name: &'static str, ty: &'static str) -> Param {
    Param { name, ty, kind: ParamKind::VarKeywords, default: None }
}

const fn plugin(name: &'static str, params: &'static [Param], returns: &'static str) -> PluginSignature {
    PluginSignature { namespace: "std", name, params, returns, allows_unknown: false, deprecated: false, doc: None }
}

const fn deprecated(sig: PluginSignature) -> PluginSignature {
    PluginSignature { deprecated: true, ..sig }
}

const fn allows_unknown(sig: PluginSignature) -> PluginSignature {
    PluginSignature { allows_unknown: true, ..sig }
}

/// Every std plugin, sorted by name.
pub static SIGNATURES: &[PluginSignature] = &[
    plugin("add_to_ip", &[p("addr", "std::ipv_any_address"), p("n", "int")], "std::ipv_any_address"),
    plugin("assert", &[p("expression", "bool"), opt("message", "string", "\"\"")], "null"),
    plugin("at", &[p("objects", "list"), p("index", "int")], "any"),
    plugin("attr", &[p("obj", "any"), p("attr", "string")], "any"),
    plugin("capitalize", &[p("string", "string")], "string"),
    deprecated(plugin("contains", &[p("dct", "dict"), p("key", "string")], "bool")),
    plugin("count", &[p("item_list", "list")], "int"),
    deprecated(plugin("dict_get", &[p("dct", "dict"), p("key", "string")], "string")),
    plugin("environment", &[], "string"),
    plugin("environment_name", &[], "string"),
    plugin("environment_server", &[], "string"),
    deprecated(plugin("equals", &[p("arg1", "any"), p("arg2", "any"), opt("desc", "string", "null")], "null")),
    plugin("familyof", &[p("member", "std::OS"), p("family", "string")], "bool"),
    plugin("file", &[p("path", "string")], "string"),
    deprecated(plugin("filter", &[p("values", "list"), p("not_item", "std::Entity")], "list")),
    plugin("flatten", &[p("item_list", "list")], "list"),
    plugin("format", &[p("__string", "string"), var_args("args", "any"), var_keywords("kwargs", "any")], "string"),
    plugin("generate_password", &[p("pw_id", "string"), opt("length", "int", "20")], "string"),
    plugin("get_env", &[p("name", "string"), opt("default_value", "string?", "null")], "string"),
    deprecated(plugin("get_env_int", &[p("name", "string"), opt("default_value", "int?", "null")], "int")),
    allows_unknown(plugin(
        "getattr",
        &[
            p("entity", "std::Entity"),
            p("attribute_name", "string"),
            opt("default_value", "any", "null"),
            opt("no_unknown", "bool", "true"),
        ],
        "any",
    )),
    plugin("getfact", &[p("resource", "any"), p("fact_name", "string"), opt("default_value", "any", "null")], "any"),
    plugin("hostname", &[p("fqdn", "string")], "string"),
    plugin("inlineif", &[p("conditional", "bool"), p("a", "any"), p("b", "any")], "any"),
    deprecated(plugin("invert", &[p("value", "bool")], "bool")),
    plugin("ip_address_from_interface", &[p("ip_interface", "std::ipv_any_interface")], "std::ipv_any_address"),
    plugin(
        "ipindex",
        &[p("addr", "std::ipv_any_network"), p("position", "int"), opt("keep_prefix", "bool", "false")],
        "string",
    ),
    plugin("is_base64_encoded", &[p("s", "string")], "bool"),
    plugin("is_instance", &[p("obj", "any"), p("cls", "string")], "bool"),
    allows_unknown(plugin("is_unknown", &[p("value", "any")], "bool")),
    plugin("isset", &[p("value", "any")], "bool"),
    plugin("item", &[p("objects", "list"), p("index", "int")], "list"),
    plugin("json_dumps", &[p("obj", "any")], "string"),
    plugin("json_loads", &[p("s", "string")], "any"),
    plugin("key_sort", &[p("items", "list"), p("key", "any")], "list"),
    plugin("len", &[p("item_list", "list")], "int"),
    plugin("length", &[p("value", "string")], "int"),
    plugin("limit", &[p("string", "string"), p("length", "int")], "string"),
    plugin("list_files", &[p("path", "string")], "list"),
    plugin("lower", &[p("string", "string")], "string"),
    plugin("netmask", &[p("addr", "std::ipv_any_interface")], "std::ipv_any_address"),
    plugin("network_address", &[p("addr", "std::ipv_any_interface")], "std::ipv_any_address"),
    plugin("objid", &[p("value", "any")], "string"),
    plugin("password", &[p("pw_id", "string")], "string"),
    plugin("prefixlen", &[p("addr", "std::ipv_any_interface")], "int"),
    plugin("prefixlength_to_netmask", &[p("prefixlen", "int")], "std::ipv4_address"),
    plugin("print", &[p("message", "any")], "null"),
    plugin("replace", &[p("string", "string"), p("old", "string"), p("new", "string")], "string"),
    deprecated(plugin("select", &[p("objects", "list"), p("attr", "string")], "list")),
    plugin("sequence", &[p("i", "int"), opt("start", "int", "0")], "list"),
    plugin("server_ca", &[], "string"),
    plugin("server_port", &[], "int"),
    plugin("server_ssl", &[], "bool"),
    plugin("server_token", &[opt("client_types", "string[]", "[\"agent\"]")], "string"),
    plugin("source", &[p("path", "string")], "string"),
    plugin("split", &[p("string_list", "string"), p("delim", "string")], "list"),
    plugin("template", &[p("path", "string"), var_keywords("kwargs", "any")], "string"),
    plugin("timestamp", &[opt("dummy", "any", "null")], "int"),
    plugin("type", &[p("obj", "any")], "any"),
    plugin("unique", &[p("item_list", "list")], "bool"),
    plugin(
        "unique_file",
        &[p("prefix", "string"), p("seed", "string"), p("suffix", "string"), opt("length", "int", "20")],
        "string",
    ),
    plugin("upper", &[p("string", "string")], "string"),
    plugin(
        "validate_type",
        &[p("fq_type_name", "string"), p("value", "any"), opt("validation_parameters", "dict", "null")],
        "bool",
    ),
];

/// The std plugin called `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static PluginSignature> {
    SIGNATURES.binary_search_by(|s| s.name.cmp(name)).ok().map(|i| &SIGNATURES[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_sorted_and_unique_so_lookup_finds_each() {
        assert!(SIGNATURES.windows(2).all(|w| w[0].name < w[1].name), "keep SIGNATURES sorted by name");
        for sig in SIGNATURES {
            assert_eq!(lookup(sig.name).map(|s| s.name), Some(sig.name));
        }
        assert!(lookup("nosuch").is_none());
    }

    #[test]
    fn defaults_follow_required_parameters() {
        for sig in SIGNATURES {
            let normal: Vec<&Param> = sig.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
            let first_default = normal.iter().position(|p| p.default.is_some()).unwrap_or(normal.len());
            assert!(normal[first_default..].iter().all(|p| p.default.is_some()), "{}", sig.name);
        }
    }
}
