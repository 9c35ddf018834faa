//! The plugins that look into entity instances: `attr`, `getattr`, `familyof`, `is_instance`,
//! `objid` and the broken `type`.

use modelc_value::Value;

use super::bind::BoundArgs;
use super::collections::python_getattr;
use super::context::{AttributeError, PluginContext};
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

/// `getattr(obj, attr)`.
pub(crate) fn attr(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    python_getattr(args.value("obj")?, args.str_arg("attr")?, ctx)
}

/// The attribute's value, or `default_value` when the entity has no such attribute, or when
/// the value is unknown and `no_unknown` is true. Called with unknown arguments too: an unknown
/// entity gives the default (or unknown when `no_unknown` is false), an unknown name unknown.
pub(crate) fn getattr(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let default = args.value("default_value")?.clone();
    let no_unknown = match args.value("no_unknown")? {
        Value::Unknown => true,
        _ => args.bool_arg("no_unknown")?,
    };
    let unknown_result = if no_unknown { default.clone() } else { Value::Unknown };
    let name = match args.value("attribute_name")? {
        Value::Unknown => return Ok(Value::Unknown),
        _ => args.str_arg("attribute_name")?,
    };
    match args.value("entity")? {
        Value::Unknown => Ok(unknown_result),
        Value::Instance(id) => match ctx.attribute(*id, name) {
            Ok(Value::Unknown) => Ok(unknown_result),
            Ok(v) => Ok(v),
            Err(AttributeError::NotFound(_)) => Ok(default),
            Err(e) => Err(e.into()),
        },
        other => python_getattr(other, name, ctx),
    }
}

/// Whether `member` is (in) the OS family `family`: its own name matches, or the name of an
/// OS on its `family` chain that itself has a family. The last OS of the chain is never tested,
/// as in the reference: `familyof(std::linux, "unix")` is false.
pub(crate) fn familyof(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let family = args.str_arg("family")?;
    let Value::Instance(mut current) = *args.value("member")? else {
        return Err(PluginError::invalid("std::familyof needs an instance of std::OS"));
    };
    let name_is =
        |ctx: &mut dyn PluginContext, id| -> Result<bool> { Ok(ctx.attribute(id, "name")?.as_str() == Some(family)) };
    if name_is(ctx, current)? {
        return Ok(Value::Bool(true));
    }
    // Bounded by the number of instances visited, so a cycle of families ends.
    let mut seen = std::collections::HashSet::new();
    while seen.insert(current) {
        let parent = match ctx.attribute(current, "family") {
            Ok(Value::Instance(parent)) => parent,
            Ok(_) | Err(AttributeError::OptionalEmpty(_)) => break,
            Err(e) => return Err(e.into()),
        };
        if name_is(ctx, current)? {
            return Ok(Value::Bool(true));
        }
        current = parent;
    }
    Ok(Value::Bool(false))
}

/// Whether `obj` is an instance of the entity named `cls` (fully qualified) or of a subtype.
/// Values that are not instances are not instances of anything.
pub(crate) fn is_instance(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let cls = args.str_arg("cls")?;
    match args.value("obj")? {
        Value::Instance(id) => ctx.is_instance_of(*id, cls).map(Value::Bool).map_err(PluginError::invalid),
        _ => Ok(Value::Bool(false)),
    }
}

/// A debug identity of an instance: its number in the executor.
pub(crate) fn objid(args: &BoundArgs) -> Result<Value> {
    match args.value("value")? {
        Value::Instance(id) => Ok(Value::from(id.0.to_string())),
        other => Err(PluginError::external(
            "AttributeError",
            format!("'{}' object has no attribute '_get_instance'", other.type_name()),
        )),
    }
}

/// Broken in the reference: it asks the value for a `type` attribute and calls it, which
/// always fails — with the entity's "no attribute" error for instances.
pub(crate) fn type_of(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    match args.value("obj")? {
        Value::Instance(id) => match ctx.attribute(*id, "type") {
            Ok(v) => Err(PluginError::external("TypeError", format!("'{}' object is not callable", v.type_name()))),
            Err(AttributeError::NotFound(message)) => Err(PluginError::Invalid { message }),
            Err(e) => Err(e.into()),
        },
        other => Err(PluginError::external(
            "AttributeError",
            format!("'{}' object has no attribute 'type'", other.type_name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_context::TestContext;

    /// `std::unix` (no family) and `std::linux` (family unix), as the std module defines them.
    fn os_tree(ctx: &mut TestContext) -> (Value, Value) {
        let unix = ctx.instance("std::OS", &[("name", Value::str("unix"))]);
        ctx.set(&unix, "family", Err(AttributeError::OptionalEmpty("no family".into())));
        let linux = ctx.instance("std::OS", &[("name", Value::str("linux")), ("family", unix.clone())]);
        (unix, linux)
    }

    fn family(ctx: &mut TestContext, member: &Value, f: &str) -> Result<Value> {
        familyof(&BoundArgs::new().with("member", member.clone()).with("family", f), ctx)
    }

    #[test]
    fn familyof_never_tests_the_root() {
        let mut ctx = TestContext::new();
        let (unix, linux) = os_tree(&mut ctx);
        assert!(matches!(family(&mut ctx, &linux, "linux"), Ok(Value::Bool(true))));
        assert!(matches!(family(&mut ctx, &linux, "unix"), Ok(Value::Bool(false))));
        assert!(matches!(family(&mut ctx, &unix, "unix"), Ok(Value::Bool(true))));
        // A three-level chain: the middle OS has a family, so it is tested.
        let ubuntu = ctx.instance("std::OS", &[("name", Value::str("ubuntu")), ("family", linux)]);
        assert!(matches!(family(&mut ctx, &ubuntu, "linux"), Ok(Value::Bool(true))));
        assert!(matches!(family(&mut ctx, &ubuntu, "unix"), Ok(Value::Bool(false))));
        assert!(matches!(family(&mut ctx, &ubuntu, "windows"), Ok(Value::Bool(false))));
    }

    #[test]
    fn familyof_waits_for_an_unset_family() {
        let mut ctx = TestContext::new();
        let os = ctx.instance("std::OS", &[("name", Value::str("x"))]);
        ctx.set(&os, "family", Err(AttributeError::NotYetSet));
        assert_eq!(family(&mut ctx, &os, "y").unwrap_err(), PluginError::NotYetSet);
    }

    #[test]
    fn attr_and_getattr() {
        let mut ctx = TestContext::new();
        let (_, linux) = os_tree(&mut ctx);
        ctx.set(&linux, "version", Ok(Value::Unknown));
        let a = attr(&BoundArgs::new().with("obj", linux.clone()).with("attr", "name"), &mut ctx).unwrap();
        assert_eq!(a.as_str(), Some("linux"));
        let err = attr(&BoundArgs::new().with("obj", linux.clone()).with("attr", "nope"), &mut ctx).unwrap_err();
        assert_eq!(err.to_string(), "could not find attribute with name: nope in type std::OS");

        let get = |ctx: &mut TestContext, entity: Value, name: Value, no_unknown: bool| {
            let args = BoundArgs::new()
                .with("entity", entity)
                .with("attribute_name", name)
                .with("default_value", "dflt")
                .with("no_unknown", no_unknown);
            getattr(&args, ctx).unwrap()
        };
        assert_eq!(get(&mut ctx, linux.clone(), Value::str("name"), true).as_str(), Some("linux"));
        assert_eq!(get(&mut ctx, linux.clone(), Value::str("nope"), true).as_str(), Some("dflt"));
        assert_eq!(get(&mut ctx, linux.clone(), Value::str("version"), true).as_str(), Some("dflt"));
        assert!(get(&mut ctx, linux.clone(), Value::str("version"), false).is_unknown());
        assert_eq!(get(&mut ctx, Value::Unknown, Value::str("name"), true).as_str(), Some("dflt"));
        assert!(get(&mut ctx, Value::Unknown, Value::str("name"), false).is_unknown());
        assert!(get(&mut ctx, linux, Value::Unknown, true).is_unknown());
    }

    #[test]
    fn is_instance_follows_the_hierarchy() {
        let mut ctx = TestContext::new();
        ctx.parents.insert("__config__::B".into(), vec!["__config__::A".into()]);
        ctx.parents.insert("__config__::A".into(), vec!["std::Entity".into()]);
        ctx.parents.insert("std::Entity".into(), vec![]);
        let b = ctx.instance("__config__::B", &[]);
        let check = |ctx: &mut TestContext, obj: Value, cls: &str| {
            is_instance(&BoundArgs::new().with("obj", obj).with("cls", cls), ctx)
        };
        assert!(matches!(check(&mut ctx, b.clone(), "__config__::A"), Ok(Value::Bool(true))));
        assert!(matches!(check(&mut ctx, b.clone(), "std::Entity"), Ok(Value::Bool(true))));
        assert!(matches!(check(&mut ctx, b.clone(), "__config__::B"), Ok(Value::Bool(true))));
        let a = ctx.instance("__config__::A", &[]);
        assert!(matches!(check(&mut ctx, a, "__config__::B"), Ok(Value::Bool(false))));
        assert!(matches!(check(&mut ctx, Value::str("x"), "__config__::A"), Ok(Value::Bool(false))));
        assert_eq!(
            check(&mut ctx, b, "__config__::Nope").unwrap_err(),
            PluginError::Invalid { message: "could not find type __config__::Nope".into() }
        );
    }

    #[test]
    fn objid_and_type() {
        let mut ctx = TestContext::new();
        let (unix, _) = os_tree(&mut ctx);
        let id = objid(&BoundArgs::new().with("value", unix.clone())).unwrap();
        assert!(id.as_str().is_some_and(|s| !s.is_empty()));
        assert!(objid(&BoundArgs::new().with("value", 1_i64)).is_err());
        let err = type_of(&BoundArgs::new().with("obj", unix), &mut ctx).unwrap_err();
        assert!(matches!(err, PluginError::Invalid { .. }), "{err:?}");
        let err = type_of(&BoundArgs::new().with("obj", "x"), &mut ctx).unwrap_err();
        assert_eq!(err.to_string(), "AttributeError: 'str' object has no attribute 'type'");
    }
}
