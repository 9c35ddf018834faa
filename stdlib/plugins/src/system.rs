//! The plugins that talk to the world through the context: `print`, `assert`, `equals`,
//! `timestamp`, `get_env`, `get_env_int`, the environment and server settings
//! (`environment*`, `server_*`), `getfact`, and the password store (`password`,
//! `generate_password`).

use modelc_value::{Value, print_string};

use super::bind::BoundArgs;
use super::context::PluginContext;
use super::error::PluginError;
use super::strings::parse_py_int;

type Result<T> = std::result::Result<T, PluginError>;

/// The longest password `generate_password` makes.
const MAX_PASSWORD: i64 = 1_000_000;

/// Prints the value as Python's `print` shows it to a plugin (`None`, `True`, `@[1, 2]`).
pub(crate) fn print(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let line = print_string(args.value("message")?, &|id| ctx.display_instance(id));
    ctx.print(&line);
    Ok(Value::Null)
}

/// Fails with `AssertionError: Assertion error: <message>` when `expression` is false.
pub(crate) fn assert(args: &BoundArgs) -> Result<Value> {
    if args.bool_arg("expression")? {
        return Ok(Value::Null);
    }
    Err(PluginError::external("AssertionError", format!("Assertion error: {}", args.str_arg("message")?)))
}

/// Fails with `AssertionError` when the arguments differ (Python equality).
pub(crate) fn equals(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let (a, b) = (args.value("arg1")?, args.value("arg2")?);
    if a.py_eq(b) {
        return Ok(Value::Null);
    }
    let show = |v: &Value| print_string(v, &|id| ctx.display_instance(id));
    let message = match args.opt_str_arg("desc")? {
        Some(desc) => format!("{desc}: {} != {}", show(a), show(b)),
        None => format!("{} != {}", show(a), show(b)),
    };
    Err(PluginError::external("AssertionError", message))
}

/// Seconds since the Unix epoch.
pub(crate) fn timestamp(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(Value::Int(ctx.unix_time()))
}

fn missing_env(name: &str, ctx: &mut dyn PluginContext) -> Value {
    ctx.warn(&format!("Environment variable {name} doesn't exist, returning Unknown(source='{name}') instead"));
    Value::Unknown
}

/// The environment variable, else the default, else unknown (with a warning).
pub(crate) fn get_env(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let name = args.str_arg("name")?;
    if let Some(v) = ctx.env_var(name) {
        return Ok(Value::from(v));
    }
    match args.opt_str_arg("default_value")? {
        Some(d) => Ok(Value::from(d)),
        None => Ok(missing_env(name, ctx)),
    }
}

/// As `get_env`, the variable parsed as Python's `int()` does.
pub(crate) fn get_env_int(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let name = args.str_arg("name")?;
    if let Some(v) = ctx.env_var(name) {
        return parse_py_int(&v).map(Value::Int).ok_or_else(|| {
            PluginError::external(
                "ValueError",
                format!("invalid literal for int() with base 10: {}", modelc_value::py_str_repr(&v)),
            )
        });
    }
    match args.opt_int_arg("default_value")? {
        Some(d) => Ok(Value::Int(d)),
        None => Ok(missing_env(name, ctx)),
    }
}

/// The configured environment id; an error when there is none.
pub(crate) fn environment(ctx: &mut dyn PluginContext) -> Result<Value> {
    ctx.environment_id().map(Value::from).ok_or_else(|| {
        PluginError::external("Exception", "The environment of this model should be configured in config>environment")
    })
}

/// The environment's name, unknown when the server cannot tell.
pub(crate) fn environment_name(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(ctx.environment_name().map(Value::from).unwrap_or(Value::Unknown))
}

/// The server's address, unknown when it cannot be had.
pub(crate) fn environment_server(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(ctx.environment_server().map(Value::from).unwrap_or(Value::Unknown))
}

pub(crate) fn server_ca(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(Value::from(ctx.server_settings().ca))
}

pub(crate) fn server_ssl(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(Value::Bool(ctx.server_settings().ssl))
}

pub(crate) fn server_port(ctx: &mut dyn PluginContext) -> Result<Value> {
    Ok(Value::Int(ctx.server_settings().port))
}

pub(crate) fn server_token(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let types = args
        .list_arg("client_types")?
        .iter()
        .map(|t| t.as_str().map(str::to_string).ok_or_else(|| PluginError::invalid("client_types must be strings")))
        .collect::<Result<Vec<String>>>()?;
    ctx.server_token(&types).map(Value::from).map_err(|m| PluginError::external("Exception", m))
}

/// The fact a deploy learnt, else the default when one is given, else unknown. The store the
/// facts come from is the environment: unlike the reference, none need be configured.
pub(crate) fn getfact(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let name = args.str_arg("fact_name")?;
    let default = args.value("default_value")?;
    Ok(match ctx.fact(args.value("resource")?, name)? {
        Some(v) => v,
        None if !default.is_null() => default.clone(),
        None => Value::Unknown,
    })
}

/// A stored password; an error when there is none.
pub(crate) fn password(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let id = args.str_arg("pw_id")?;
    match ctx.stored_password(id) {
        Ok(Some(pw)) => Ok(Value::from(pw)),
        Ok(None) => Err(PluginError::external("Exception", format!("Password {id} does not exist"))),
        Err(m) => Err(PluginError::external("Exception", m)),
    }
}

/// The stored password `pw_id`, or a new random alphanumeric one of `length` characters that
/// is stored for later compiles.
pub(crate) fn generate_password(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let id = args.str_arg("pw_id")?;
    let length = args.int_arg("length")?;
    if let Some(pw) = ctx.stored_password(id).map_err(|m| PluginError::external("Exception", m))? {
        return Ok(Value::from(pw));
    }
    if length > MAX_PASSWORD {
        return Err(PluginError::external("MemoryError", format!("a password of {length} characters is too long")));
    }
    let pw = ctx.random_alphanumeric(usize::try_from(length).unwrap_or(0));
    ctx.store_password(id, &pw).map_err(|m| PluginError::external("Exception", m))?;
    Ok(Value::from(pw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ServerSettings;
    use crate::test_context::TestContext;

    #[test]
    fn print_shows_values_as_the_reference_does() {
        let mut ctx = TestContext::new();
        for v in [Value::Null, Value::Bool(true), Value::Float(2.0), Value::list(vec![Value::Int(1), Value::str("a")])]
        {
            print(&BoundArgs::new().with("message", v), &mut ctx).unwrap();
        }
        let os = ctx.instance("std::OS", &[]);
        print(&BoundArgs::new().with("message", os), &mut ctx).unwrap();
        assert_eq!(ctx.printed, ["None", "True", "2.0", "@[1, 'a']", "std::OS 7f00"]);
    }

    #[test]
    fn assert_and_equals() {
        let ok = assert(&BoundArgs::new().with("expression", true).with("message", "boom"));
        assert!(matches!(ok, Ok(Value::Null)));
        let err = assert(&BoundArgs::new().with("expression", false).with("message", "boom")).unwrap_err();
        assert_eq!(err.to_string(), "AssertionError: Assertion error: boom");
        let mut ctx = TestContext::new();
        let eq = |ctx: &mut TestContext, a: Value, b: Value, desc: Value| {
            equals(&BoundArgs::new().with("arg1", a).with("arg2", b).with("desc", desc), ctx)
        };
        assert!(eq(&mut ctx, Value::Int(1), Value::Float(1.0), Value::Null).is_ok());
        assert_eq!(
            eq(&mut ctx, Value::Int(1), Value::Int(2), Value::Null).unwrap_err().to_string(),
            "AssertionError: 1 != 2"
        );
        assert_eq!(
            eq(&mut ctx, Value::Null, Value::str("x"), Value::str("d")).unwrap_err().to_string(),
            "AssertionError: d: None != x"
        );
    }

    #[test]
    fn environment_variables() {
        let mut ctx = TestContext::new();
        ctx.env.insert("HOME".into(), "/root".into());
        ctx.env.insert("N".into(), " 42 ".into());
        ctx.env.insert("BAD".into(), "x1".into());
        let env = |ctx: &mut TestContext, name: &str, default: Value| {
            get_env(&BoundArgs::new().with("name", name).with("default_value", default), ctx).unwrap()
        };
        assert_eq!(env(&mut ctx, "HOME", Value::Null).as_str(), Some("/root"));
        assert_eq!(env(&mut ctx, "NOPE", Value::str("d")).as_str(), Some("d"));
        assert!(ctx.warnings.is_empty());
        assert!(env(&mut ctx, "NOPE", Value::Null).is_unknown());
        assert_eq!(ctx.warnings, ["Environment variable NOPE doesn't exist, returning Unknown(source='NOPE') instead"]);
        let env_int = |ctx: &mut TestContext, name: &str, default: Value| {
            get_env_int(&BoundArgs::new().with("name", name).with("default_value", default), ctx)
        };
        assert!(env_int(&mut ctx, "N", Value::Null).unwrap().py_eq(&Value::Int(42)));
        assert!(env_int(&mut ctx, "NOPE", Value::Int(5)).unwrap().py_eq(&Value::Int(5)));
        assert!(env_int(&mut ctx, "NOPE", Value::Null).unwrap().is_unknown());
        assert_eq!(
            env_int(&mut ctx, "BAD", Value::Null).unwrap_err().to_string(),
            "ValueError: invalid literal for int() with base 10: 'x1'"
        );
    }

    #[test]
    fn time_environment_and_server() {
        let mut ctx = TestContext::new();
        assert!(timestamp(&mut ctx).unwrap().py_eq(&Value::Int(1_700_000_000)));
        assert_eq!(
            environment(&mut ctx).unwrap_err().to_string(),
            "Exception: The environment of this model should be configured in config>environment"
        );
        ctx.environment_id = Some("6c8e0e9b".into());
        assert_eq!(environment(&mut ctx).unwrap().as_str(), Some("6c8e0e9b"));
        assert!(environment_name(&mut ctx).unwrap().is_unknown());
        assert!(environment_server(&mut ctx).unwrap().is_unknown());
        ctx.environment_name = Some("dev".into());
        ctx.environment_server = Some("https://server:8888".into());
        assert_eq!(environment_name(&mut ctx).unwrap().as_str(), Some("dev"));
        assert_eq!(environment_server(&mut ctx).unwrap().as_str(), Some("https://server:8888"));
        ctx.server = ServerSettings { ca: "/ca.pem".into(), ssl: true, port: 8888 };
        assert_eq!(server_ca(&mut ctx).unwrap().as_str(), Some("/ca.pem"));
        assert!(matches!(server_ssl(&mut ctx), Ok(Value::Bool(true))));
        assert!(server_port(&mut ctx).unwrap().py_eq(&Value::Int(8888)));
        let types = BoundArgs::new().with("client_types", Value::list(vec![Value::str("agent")]));
        assert_eq!(server_token(&types, &mut ctx).unwrap_err().to_string(), "Exception: no token configured");
        ctx.token = Some("tok".into());
        assert_eq!(server_token(&types, &mut ctx).unwrap().as_str(), Some("tok:agent"));
    }

    #[test]
    fn facts_default_to_unknown() {
        let mut ctx = TestContext::new();
        ctx.environment_id = Some("env".into());
        let res = ctx.instance("__config__::R", &[]);
        ctx.facts.push((res.clone(), "size".into(), Value::Int(3)));
        let fact = |ctx: &mut TestContext, name: &str, default: Value| {
            getfact(
                &BoundArgs::new().with("resource", res.clone()).with("fact_name", name).with("default_value", default),
                ctx,
            )
            .unwrap()
        };
        assert!(fact(&mut ctx, "size", Value::Null).py_eq(&Value::Int(3)));
        assert!(fact(&mut ctx, "other", Value::Null).is_unknown());
        assert_eq!(fact(&mut ctx, "other", Value::str("d")).as_str(), Some("d"));
        // The store is the environment: none need be configured (the reference fails here).
        ctx.environment_id = None;
        assert!(fact(&mut ctx, "size", Value::Null).py_eq(&Value::Int(3)));
        assert_eq!(fact(&mut ctx, "other", Value::str("d")).as_str(), Some("d"));
    }

    #[test]
    fn passwords_are_generated_once_and_stored() {
        let mut ctx = TestContext::new();
        let gen_pw = |ctx: &mut TestContext, id: &str, len: i64| {
            generate_password(&BoundArgs::new().with("pw_id", id).with("length", len), ctx).unwrap()
        };
        let first = gen_pw(&mut ctx, "db", 20);
        let first = first.as_str().unwrap_or_default().to_string();
        assert_eq!(first.len(), 20);
        assert!(first.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(gen_pw(&mut ctx, "db", 5).as_str(), Some(first.as_str()));
        assert_eq!(password(&BoundArgs::new().with("pw_id", "db"), &mut ctx).unwrap().as_str(), Some(first.as_str()));
        assert_eq!(
            password(&BoundArgs::new().with("pw_id", "nope"), &mut ctx).unwrap_err().to_string(),
            "Exception: Password nope does not exist"
        );
        assert_eq!(gen_pw(&mut ctx, "empty", -3).as_str(), Some(""));
    }
}
