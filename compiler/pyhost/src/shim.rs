//! The Python side, embedded: the host's main loop and modelc's `inmanta` API. They are sent
//! to the interpreter when it starts, so nothing is written to disk or to the environment.

/// The host's main loop, run with `python -c`.
pub(crate) const HOST: &str = include_str!("../python/host.py");

/// Each module of modelc's plugin API: its dotted name, whether it is a package, its source.
pub(crate) const MODULES: &[(&str, bool, &str)] = &[
    ("inmanta", true, include_str!("../python/inmanta/__init__.py")),
    ("inmanta._inert", false, include_str!("../python/inmanta/_inert.py")),
    ("inmanta.plugins", false, include_str!("../python/inmanta/plugins.py")),
    ("inmanta.ast", true, include_str!("../python/inmanta/ast/__init__.py")),
    ("inmanta.ast.entity", false, include_str!("../python/inmanta/ast/entity.py")),
    ("inmanta.ast.attribute", false, include_str!("../python/inmanta/ast/attribute.py")),
    ("inmanta.execute", true, include_str!("../python/inmanta/execute/__init__.py")),
    ("inmanta.execute.util", false, include_str!("../python/inmanta/execute/util.py")),
    ("inmanta.execute.proxy", false, include_str!("../python/inmanta/execute/proxy.py")),
    ("inmanta.util", true, include_str!("../python/inmanta/util/__init__.py")),
    ("inmanta.util.dict_path", false, include_str!("../python/inmanta/util/dict_path.py")),
    ("inmanta.agent", true, include_str!("../python/inmanta/agent/__init__.py")),
    ("inmanta.agent.handler", false, include_str!("../python/inmanta/agent/handler.py")),
    ("inmanta.agent.agent", false, include_str!("../python/inmanta/agent/agent.py")),
    ("inmanta.protocol", true, include_str!("../python/inmanta/protocol/__init__.py")),
    ("inmanta.protocol.endpoints", false, include_str!("../python/inmanta/protocol/endpoints.py")),
    ("inmanta.protocol.common", false, include_str!("../python/inmanta/protocol/common.py")),
    ("inmanta.data", true, include_str!("../python/inmanta/data/__init__.py")),
    ("inmanta.data.model", false, include_str!("../python/inmanta/data/model.py")),
    ("inmanta.compiler", true, include_str!("../python/inmanta/compiler/__init__.py")),
    ("inmanta.resources", false, include_str!("../python/inmanta/resources.py")),
    ("inmanta.export", false, include_str!("../python/inmanta/export.py")),
    ("inmanta.module", false, include_str!("../python/inmanta/module.py")),
    ("inmanta.const", false, include_str!("../python/inmanta/const.py")),
    ("inmanta.config", false, include_str!("../python/inmanta/config.py")),
    ("inmanta.references", false, include_str!("../python/inmanta/references.py")),
    ("inmanta.validation_type", false, include_str!("../python/inmanta/validation_type.py")),
    ("inmanta.stable_api", false, include_str!("../python/inmanta/stable_api.py")),
    ("inmanta_plugins.std", true, include_str!("../python/inmanta_plugins/std/__init__.py")),
];

/// What a deploy's handler host has besides: its loop, and the mitogen module's proxy, whose
/// operations modelc does (a compile uses the module's own package, whose mappers shape the
/// `via` it exports).
pub(crate) const HANDLER_MODULES: &[(&str, bool, &str)] = &[
    ("inmanta.agent._host", false, include_str!("../python/inmanta/agent/_host.py")),
    ("inmanta_plugins.mitogen", true, include_str!("../python/inmanta_plugins/mitogen/__init__.py")),
    ("inmanta_plugins.mitogen.abc", false, include_str!("../python/inmanta_plugins/mitogen/abc.py")),
];

/// The sources the host installs ahead of the environment's: modelc's `inmanta` API, std's
/// plugins by name, and for a handler host `HANDLER_MODULES`.
pub(crate) fn sources(handlers: bool) -> serde_json::Map<String, serde_json::Value> {
    let std_names: Vec<&str> = modelc_stdlib::signatures::SIGNATURES.iter().map(|s| s.name).collect();
    let names = serde_json::json!(std_names).to_string();
    let extra: &[(&str, bool, &str)] = if handlers { HANDLER_MODULES } else { &[] };
    MODULES
        .iter()
        .chain(extra)
        .map(|(name, is_package, source)| {
            ((*name).to_owned(), serde_json::json!([is_package, source.replace("__PLUGIN_NAMES__", &names)]))
        })
        .collect()
}

/// A digest of everything that makes the API's compiled code: the host and every module's
/// source. It names the file a host keeps the API compiled in (`CodeCache` in `host.py`), so a
/// file another build of modelc wrote is never read.
pub(crate) fn digest() -> &'static str {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| {
        let sources = serde_json::Value::Object(sources(true)).to_string();
        let digest = xxhash_rust::xxh3::xxh3_128(format!("{HOST}\0{sources}").as_bytes());
        format!("{digest:032x}")
    })
}

/// Whether a host may write the API's compiled code (see [`digest`]): not when the user set
/// PYTHONDONTWRITEBYTECODE, Python's own switch for bytecode files (a host always has it set, to
/// keep modules' directories as they are, so the host cannot read the user's).
pub(crate) fn keeps_code() -> bool {
    std::env::var_os("PYTHONDONTWRITEBYTECODE").is_none_or(|value| value.is_empty())
}
