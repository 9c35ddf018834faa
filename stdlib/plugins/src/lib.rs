//! The std plugins, implemented in Rust. The executor binds a call's arguments to the
//! plugin's signature ([`bind`], with the signatures of [`modelc_stdlib::signatures`]) and calls
//! [`call`] with a [`PluginContext`], through which every plugin reaches the instance graph and
//! the world outside; the plugins themselves are pure functions of their arguments and the
//! context.
//!
//! Return values are not validated here against the declared types: that is the executor's
//! job, as is turning a [`PluginError`] into the reference's exception classes.

mod args;
mod bind;
mod collections;
mod context;
mod error;
mod files;
mod format;
mod instances;
mod json;
mod net;
mod strings;
mod system;
mod template;
#[cfg(test)]
mod test_context;
mod validate;

use modelc_value::Value;

pub use bind::{BindError, BoundArgs, bind, parse_default};
pub use context::{AttributeError, EntityType, ModuleDir, PluginContext, ServerSettings};
pub use error::PluginError;

use modelc_stdlib::signatures::lookup;

/// Calls the std plugin `name` (without the `std::` prefix) with bound arguments.
///
/// When an argument is unknown and the plugin does not accept unknowns, the result is unknown
/// without a call, as the executor would decide anyway (spec §4.12).
pub fn call(name: &str, args: BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value, PluginError> {
    let sig = lookup(name).ok_or_else(|| PluginError::invalid(format!("there is no plugin std::{name}")))?;
    if !sig.allows_unknown && args.has_unknown() {
        return Ok(Value::Unknown);
    }
    if let Some(result) = call_pure(name, &args) {
        return result;
    }
    let args = &args;
    match name {
        "attr" => instances::attr(args, ctx),
        "environment" => system::environment(ctx),
        "environment_name" => system::environment_name(ctx),
        "environment_server" => system::environment_server(ctx),
        "equals" => system::equals(args, ctx),
        "familyof" => instances::familyof(args, ctx),
        "file" => files::file(args, ctx),
        "generate_password" => system::generate_password(args, ctx),
        "get_env" => system::get_env(args, ctx),
        "get_env_int" => system::get_env_int(args, ctx),
        "getattr" => instances::getattr(args, ctx),
        "getfact" => system::getfact(args, ctx),
        "is_instance" => instances::is_instance(args, ctx),
        "key_sort" => collections::key_sort(args, ctx),
        "list_files" => files::list_files(args, ctx),
        "password" => system::password(args, ctx),
        "print" => system::print(args, ctx),
        "select" => collections::select(args, ctx),
        "server_ca" => system::server_ca(ctx),
        "server_port" => system::server_port(ctx),
        "server_ssl" => system::server_ssl(ctx),
        "server_token" => system::server_token(args, ctx),
        "source" => files::source(args, ctx),
        "template" => template::template(args, ctx),
        "timestamp" => system::timestamp(ctx),
        "type" => instances::type_of(args, ctx),
        "format" => format::format(args, ctx),
        _ => Err(PluginError::invalid(format!("std::{name} is not implemented"))),
    }
}

/// The plugins that need nothing but their arguments (also the template filters); `None` for
/// the others.
pub(crate) fn call_pure(name: &str, args: &BoundArgs) -> Option<Result<Value, PluginError>> {
    Some(match name {
        "add_to_ip" => net::add_to_ip(args),
        "assert" => system::assert(args),
        "at" => collections::at(args),
        "capitalize" => strings::capitalize(args),
        "contains" => collections::contains(args),
        "count" => collections::count(args),
        "dict_get" => collections::dict_get(args),
        "filter" => collections::filter(args),
        "flatten" => collections::flatten(args),
        "hostname" => strings::hostname(args),
        "inlineif" => collections::inlineif(args),
        "invert" => collections::invert(args),
        "ip_address_from_interface" => net::ip_address_from_interface(args),
        "ipindex" => net::ipindex(args),
        "is_base64_encoded" => strings::is_base64_encoded(args),
        "is_unknown" => collections::is_unknown(args),
        "isset" => collections::isset(args),
        "item" => collections::item(args),
        "json_dumps" => json::json_dumps(args),
        "json_loads" => json::json_loads(args),
        "len" => collections::len(args),
        "length" => strings::length(args),
        "limit" => strings::limit(args),
        "lower" => strings::lower(args),
        "netmask" => net::netmask(args),
        "network_address" => net::network_address(args),
        "objid" => instances::objid(args),
        "prefixlen" => net::prefixlen(args),
        "prefixlength_to_netmask" => net::prefixlength_to_netmask(args),
        "replace" => strings::replace(args),
        "sequence" => collections::sequence(args),
        "split" => strings::split(args),
        "unique" => collections::unique(args),
        "unique_file" => strings::unique_file(args),
        "upper" => strings::upper(args),
        "validate_type" => validate::validate_type(args),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::test_context::TestContext;
    use super::*;
    use modelc_stdlib::signatures::SIGNATURES;

    /// Arguments that fit each parameter's declared type.
    fn sample(ty: &str, os: &Value) -> Value {
        match ty.trim_end_matches('?') {
            "string" => Value::str("1.2.3.4"),
            "int" => Value::Int(1),
            "bool" => Value::Bool(true),
            "list" => Value::list(vec![os.clone()]),
            "dict" => Value::dict([("1.2.3.4".to_string(), Value::Int(1))].into()),
            "string[]" => Value::list(vec![Value::str("agent")]),
            "std::ipv_any_address" => Value::str("10.0.0.1"),
            "std::ipv_any_interface" => Value::str("10.0.0.1/24"),
            "std::ipv_any_network" => Value::str("10.0.0.0/24"),
            "std::Entity" | "std::OS" => os.clone(),
            _ => Value::str("x"),
        }
    }

    #[test]
    fn every_signature_is_implemented() {
        let mut ctx = TestContext::new();
        ctx.token = Some("t".into());
        ctx.environment_id = Some("env".into());
        ctx.passwords.insert("1.2.3.4".into(), "pw".into());
        ctx.file("1.2.3.4", ModuleDir::Files, "x", "text");
        let os = ctx.instance("std::OS", &[("name", Value::str("linux"))]);
        ctx.set(&os, "family", Err(AttributeError::OptionalEmpty("unset".into())));
        for sig in SIGNATURES {
            let positional: Vec<Value> = sig
                .params
                .iter()
                .filter(|p| p.kind == modelc_stdlib::signatures::ParamKind::Normal && p.default.is_none())
                .map(|p| sample(p.ty, &os))
                .collect();
            let args = bind(sig, positional, vec![]).unwrap_or_else(|e| panic!("{}: {e}", sig.name));
            if let Err(PluginError::Invalid { message }) = call(sig.name, args, &mut ctx)
                && message.contains("not implemented")
            {
                panic!("std::{} is not implemented", sig.name);
            }
        }
    }

    #[test]
    fn unknown_arguments_make_unknown_results_unless_allowed() {
        let mut ctx = TestContext::new();
        let upper = call("upper", BoundArgs::new().with("string", Value::Unknown), &mut ctx).unwrap();
        assert!(upper.is_unknown());
        let is_unknown = call("is_unknown", BoundArgs::new().with("value", Value::Unknown), &mut ctx).unwrap();
        assert!(matches!(is_unknown, Value::Bool(true)));
        assert!(call("nosuch", BoundArgs::new(), &mut ctx).is_err());
    }

    /// The values of the reference's `std_plugins1` conformance case, printed as it printed them.
    #[test]
    fn conformance_std_plugins1() {
        let mut ctx = TestContext::new();
        let mut run = |name: &str, positional: Vec<Value>, keywords: Vec<(&str, Value)>| -> String {
            let sig = lookup(name).unwrap_or_else(|| panic!("{name}"));
            let keywords = keywords.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let args = bind(sig, positional, keywords).unwrap_or_else(|e| panic!("{name}: {e}"));
            let v = call(name, args, &mut ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
            modelc_value::interpolate(&v, &|id| format!("#{}", id.0))
        };
        let s = Value::str;
        let ints = |v: &[i64]| Value::list(v.iter().map(|&i| Value::Int(i)).collect());
        let got = [
            run("sequence", vec![Value::Int(3)], vec![]),
            run("sequence", vec![Value::Int(3)], vec![("start", Value::Int(2))]),
            run("count", vec![ints(&[1, 2, 2])], vec![]),
            run("len", vec![ints(&[1, 2])], vec![]),
            run("unique", vec![ints(&[1, 2, 2])], vec![]),
            run("unique", vec![Value::list(vec![s("a"), s("b")])], vec![]),
            run("replace", vec![s("hello"), s("l"), s("L")], vec![]),
            run("split", vec![s("a,b,c"), s(",")], vec![]),
            run("upper", vec![s("abC")], vec![]),
            run("lower", vec![s("ABc")], vec![]),
            run("capitalize", vec![s("hello world")], vec![]),
            run("limit", vec![s("abcdef"), Value::Int(3)], vec![]),
            run("length", vec![s("abcd")], vec![]),
            run("hostname", vec![s("host.example.com")], vec![]),
            run("inlineif", vec![Value::Bool(true), s("x"), s("y")], vec![]),
            run("at", vec![ints(&[5, 6, 7]), Value::Int(1)], vec![]),
            run("is_unknown", vec![Value::Int(1)], vec![]),
            run("json_dumps", vec![Value::dict([("a".to_string(), ints(&[1, 2]))].into())], vec![]),
            run("json_loads", vec![s("{\"a\": 1}")], vec![]),
            run("format", vec![s("{}-{x}"), Value::Int(1)], vec![("x", s("y"))]),
            run("unique_file", vec![s("p"), s("seed"), s(".s")], vec![]),
            run("isset", vec![Value::Null], vec![]),
            run("validate_type", vec![s("pydantic.PositiveInt"), Value::Int(5)], vec![]),
            run("is_base64_encoded", vec![s("aGVsbG8=")], vec![]),
        ];
        let nested = run("json_loads", vec![s("[[1], [2, 3]]")], vec![]);
        assert_eq!(nested, "[[1], [2, 3]]");
        let expected = [
            "[0, 1, 2]",
            "[2, 3, 4]",
            "3",
            "2",
            "False",
            "True",
            "heLLo",
            "['a', 'b', 'c']",
            "ABC",
            "abc",
            "Hello world",
            "abc",
            "4",
            "host",
            "x",
            "6",
            "False",
            "{\"a\": [1, 2]}",
            "{'a': 1}",
            "1-y",
            "pfe4c0f30aa359c41d9f9a5f69c8c4192.s",
            "False",
            "True",
            "True",
        ];
        assert_eq!(got, expected);
    }
}
