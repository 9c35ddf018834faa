//! `std::template(path, **kwargs)`: renders the Jinja2 template `module/relative/path` from the
//! module's `templates/` directory with minijinja.
//!
//! With keyword arguments only those are visible; without, names resolve in the caller's scope
//! through [`PluginContext::scope_variable`]. Instances are visible with their attributes.
//! Values print as Python's `str` shows them to a plugin (`True`, `None`, `@[1, 2]`), and the
//! std plugins that need nothing outside their arguments are filters named `std.upper` (the
//! DSL's `::` becomes `.`).
//!
//! minijinja objects must be `'static`, so they cannot borrow the context. The template is
//! therefore rendered in passes: a pass answers variable and attribute lookups from a cache and
//! records the ones it could not answer; the plugin reads those through the context and renders
//! again, until a pass asks for nothing new. A last, strict pass produces the text. A value the
//! executor does not have yet ends the call with [`PluginError::NotYetSet`] (it is retried).
//!
//! Results and limits: touching an unknown value makes the result unknown; an undefined
//! variable is a `NotFound` error ("variable x not found"); an undefined attribute of an
//! instance is the executor's not-found error. minijinja differs from Jinja2 in details: its
//! built-in filters and tests are minijinja's (`{{ x|string }}` of `true` is `true`), Python's
//! methods on strings, lists and dicts are minijinja-contrib's `pycompat` set (`.items()`,
//! `.get()`, `.upper()`, `.startswith()`, `.format()`, …; `%` formatting is not there), and
//! `{{ }}` of a value the template computed itself is printed with the same Python rules
//! (a list as `@[…]`, where Jinja2 would print `[…]`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use indexmap::IndexMap;
use minijinja::value::{Object, ObjectRepr, Rest};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use modelc_value::{InstanceId, Value, print_string};

use super::bind::{BoundArgs, bind};
use super::context::{AttributeError, ModuleDir, PluginContext};
use super::error::PluginError;
use super::files::split_module_path;
use modelc_stdlib::signatures::lookup;

type Result<T> = std::result::Result<T, PluginError>;
type MjValue = minijinja::Value;

/// Rendering passes before we give up on a template that keeps asking for new values.
const MAX_PASSES: usize = 64;
/// Instructions one render may execute.
const FUEL: u64 = 20_000_000;
/// The std plugins usable as filters: they need nothing but their arguments.
const FILTERS: &[&str] = &[
    "add_to_ip",
    "at",
    "capitalize",
    "contains",
    "count",
    "dict_get",
    "filter",
    "flatten",
    "hostname",
    "inlineif",
    "invert",
    "ip_address_from_interface",
    "ipindex",
    "is_base64_encoded",
    "is_unknown",
    "isset",
    "item",
    "json_dumps",
    "json_loads",
    "len",
    "length",
    "limit",
    "lower",
    "netmask",
    "network_address",
    "objid",
    "prefixlen",
    "prefixlength_to_netmask",
    "replace",
    "sequence",
    "split",
    "unique",
    "unique_file",
    "upper",
    "validate_type",
];
/// The std plugins usable as filters that need more than their arguments: the instance
/// attributes the template reads, or the time (`FilterContext`).
const CONTEXT_FILTERS: &[&str] = &["attr", "getattr", "key_sort", "select", "timestamp"];

pub(crate) fn template(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let path = args.str_arg("path")?;
    let (module, rel) = split_module_path(path, ctx)?;
    let source = ctx
        .read_module_file(&module, ModuleDir::Templates, &rel)
        .map_err(|m| PluginError::external("TemplateNotFound", m))?;
    let shared = Shared::default();
    // One time for the whole template, as one call of the reference's filter sees.
    shared.lock().now = ctx.unix_time();
    let kwargs = if args.var_kwargs.is_empty() {
        None
    } else {
        let mut map = IndexMap::new();
        for (k, v) in &args.var_kwargs {
            map.insert(k.clone(), shared.import(v, ctx));
        }
        Some(map)
    };
    let root = MjValue::from_object(Root { shared: shared.clone(), kwargs });
    let mut env = environment(&shared);

    for _ in 0..MAX_PASSES {
        shared.lock().start_pass();
        // Errors of a probing pass are expected (values it could not see yet).
        let _ = render(&mut env, path, &source, &root, UndefinedBehavior::Chainable);
        let (attrs, vars) = {
            let mut l = shared.lock();
            (std::mem::take(&mut l.missing_attrs), std::mem::take(&mut l.missing_vars))
        };
        if attrs.is_empty() && vars.is_empty() {
            return finish(&mut env, path, &source, &root, &shared);
        }
        for (id, name) in attrs {
            let found = match ctx.attribute(id, &name) {
                Ok(v) => Ok(shared.import(&v, ctx)),
                Err(AttributeError::NotYetSet) => return Err(PluginError::NotYetSet),
                Err(e) => Err(PluginError::from(e)),
            };
            shared.lock().attrs.insert((id, name), found);
        }
        for name in vars {
            let found = match ctx.scope_variable(&name) {
                Ok(v) => Some(shared.import(&v, ctx)),
                Err(AttributeError::NotYetSet) => return Err(PluginError::NotYetSet),
                Err(_) => None,
            };
            shared.lock().vars.insert(name, found);
        }
    }
    Err(PluginError::invalid(format!("template {path} keeps asking for new values after {MAX_PASSES} passes")))
}

/// The strict pass that gives the result.
fn finish<'s>(
    env: &mut Environment<'s>,
    path: &'s str,
    source: &'s str,
    root: &MjValue,
    shared: &Shared,
) -> Result<Value> {
    shared.lock().start_pass();
    let result = render(env, path, source, root, UndefinedBehavior::SemiStrict);
    let mut l = shared.lock();
    if l.touched_unknown {
        return Ok(Value::Unknown);
    }
    match result {
        Ok(text) => Ok(Value::from(text)),
        Err(e) => {
            if let Some(failure) = l.failure.take() {
                return Err(failure);
            }
            match e.kind() {
                ErrorKind::UndefinedError if !l.undefined_names.is_empty() => {
                    Err(PluginError::NotFound { message: format!("variable {} not found", l.undefined_names[0]) })
                }
                ErrorKind::SyntaxError => Err(PluginError::external("TemplateSyntaxError", describe(&e))),
                ErrorKind::OutOfFuel => Err(PluginError::invalid(format!("template {path} runs too long"))),
                _ => Err(PluginError::external("TemplateError", describe(&e))),
            }
        }
    }
}

fn describe(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn render<'s>(
    env: &mut Environment<'s>,
    path: &'s str,
    source: &'s str,
    root: &MjValue,
    behavior: UndefinedBehavior,
) -> std::result::Result<String, Error> {
    env.set_undefined_behavior(behavior);
    let template = env.template_from_named_str(path, source)?;
    template.render(root.clone())
}

fn environment<'s>(shared: &Shared) -> Environment<'s> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::None);
    // Python's methods on strings, lists and dicts (`.items()`, `.startswith()`, `.format()`),
    // which Jinja2 templates call.
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.set_fuel(Some(FUEL));
    let formatter_shared = shared.clone();
    env.set_formatter(move |out, state, value| {
        if value.is_undefined() {
            return match state.undefined_behavior() {
                UndefinedBehavior::Strict | UndefinedBehavior::SemiStrict => {
                    Err(Error::new(ErrorKind::UndefinedError, "undefined value"))
                }
                _ => Ok(()),
            };
        }
        let text = formatter_shared.py_str(value);
        out.write_str(&text).map_err(Error::from)
    });
    for &name in FILTERS.iter().chain(CONTEXT_FILTERS) {
        let filter_shared = shared.clone();
        env.add_filter(format!("std.{name}"), move |value: MjValue, rest: Rest<MjValue>| {
            filter_shared.call_filter(name, value, rest.0)
        });
    }
    env
}

/// What the passes share: answered lookups, the lookups still to answer, instance names.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Lookups>>);

#[derive(Default)]
struct Lookups {
    attrs: HashMap<(InstanceId, String), Result<MjValue>>,
    /// `None`: the scope has no such variable.
    vars: HashMap<String, Option<MjValue>>,
    missing_attrs: Vec<(InstanceId, String)>,
    missing_vars: Vec<String>,
    asked: HashSet<(InstanceId, String)>,
    asked_vars: HashSet<String>,
    displays: HashMap<InstanceId, String>,
    touched_unknown: bool,
    /// The first failed attribute read the template used.
    failure: Option<PluginError>,
    /// Variables looked up and not found, in order.
    undefined_names: Vec<String>,
    /// The time the template started rendering (`std.timestamp`).
    now: i64,
}

impl Lookups {
    fn start_pass(&mut self) {
        self.touched_unknown = false;
        self.failure = None;
        self.undefined_names.clear();
        self.asked.clear();
        self.asked_vars.clear();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Lookups> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A DSL value as a template value, naming its instances through the context.
    fn import(&self, v: &Value, ctx: &dyn PluginContext) -> MjValue {
        self.remember_names(v, ctx);
        self.to_mj(v)
    }

    fn remember_names(&self, v: &Value, ctx: &dyn PluginContext) {
        match v {
            Value::Instance(id) => {
                let mut l = self.lock();
                if !l.displays.contains_key(id) {
                    l.displays.insert(*id, ctx.display_instance(*id));
                }
            }
            Value::List(items) => items.iter().for_each(|i| self.remember_names(i, ctx)),
            Value::Dict(entries) => entries.values().for_each(|i| self.remember_names(i, ctx)),
            _ => {}
        }
    }

    fn to_mj(&self, v: &Value) -> MjValue {
        match v {
            Value::Null => MjValue::from(()),
            Value::Bool(b) => MjValue::from(*b),
            Value::Int(i) => MjValue::from(*i),
            Value::Float(f) => MjValue::from(*f),
            Value::Str(s) => MjValue::from(s.as_str()),
            Value::List(items) => items.iter().map(|i| self.to_mj(i)).collect(),
            Value::Dict(entries) => MjValue::from_pairs(entries.iter().map(|(k, v)| (k.as_str(), self.to_mj(v)))),
            Value::Instance(id) => MjValue::from_object(InstanceObject { id: *id, shared: self.clone() }),
            Value::Unknown => MjValue::from_object(UnknownObject { shared: self.clone() }),
        }
    }

    /// A template value as a DSL value.
    fn export(&self, v: &MjValue, depth: usize) -> Value {
        if depth > modelc_value::json::MAX_DEPTH {
            return Value::Null;
        }
        if let Some(i) = v.downcast_object_ref::<InstanceObject>() {
            return Value::Instance(i.id);
        }
        if v.downcast_object_ref::<UnknownObject>().is_some() {
            self.lock().touched_unknown = true;
            return Value::Unknown;
        }
        match v.kind() {
            minijinja::value::ValueKind::Undefined | minijinja::value::ValueKind::None => Value::Null,
            minijinja::value::ValueKind::Bool => Value::Bool(v.is_true()),
            minijinja::value::ValueKind::Number => match v.as_i64() {
                Some(i) if v.is_integer() => Value::Int(i),
                _ => f64::try_from(v.clone()).map(Value::Float).unwrap_or(Value::Null),
            },
            minijinja::value::ValueKind::String => Value::from(v.as_str().unwrap_or_default()),
            minijinja::value::ValueKind::Seq | minijinja::value::ValueKind::Iterable => match v.try_iter() {
                Ok(items) => Value::list(items.map(|i| self.export(&i, depth + 1)).collect()),
                Err(_) => Value::from(v.to_string()),
            },
            minijinja::value::ValueKind::Map => match v.try_iter() {
                Ok(keys) => Value::dict(
                    keys.map(|k| {
                        let item = v.get_item(&k).unwrap_or_default();
                        let key = k.as_str().map(str::to_string).unwrap_or_else(|| k.to_string());
                        (key, self.export(&item, depth + 1))
                    })
                    .collect(),
                ),
                Err(_) => Value::from(v.to_string()),
            },
            _ => Value::from(v.to_string()),
        }
    }

    /// Python's `str` of a value, as `{{ }}` prints it.
    fn py_str(&self, v: &MjValue) -> String {
        let value = self.export(v, 0);
        let l = self.lock();
        print_string(&value, &|id| l.displays.get(&id).cloned().unwrap_or_else(|| format!("instance {}", id.0)))
    }

    /// A std plugin used as a filter: `{{ x | std.upper }}`.
    fn call_filter(&self, name: &str, value: MjValue, rest: Vec<MjValue>) -> std::result::Result<MjValue, Error> {
        let mut positional = vec![self.export(&value, 0)];
        let mut keywords = Vec::new();
        for arg in rest {
            if arg.is_kwargs() {
                for key in arg.try_iter()? {
                    let item = arg.get_item(&key)?;
                    keywords.push((key.as_str().unwrap_or_default().to_string(), self.export(&item, 0)));
                }
            } else {
                positional.push(self.export(&arg, 0));
            }
        }
        let fail = |message: String| Error::new(ErrorKind::InvalidOperation, message);
        let sig = lookup(name).ok_or_else(|| fail(format!("no plugin std::{name}")))?;
        let args = bind(sig, positional, keywords).map_err(|e| fail(e.message(&format!("std::{name}"))))?;
        let result = match super::call_pure(name, &args) {
            Some(result) => result,
            None if CONTEXT_FILTERS.contains(&name) => super::call(name, args, &mut FilterContext(self.clone())),
            None => Err(PluginError::invalid(format!("std::{name} can not be used as a filter"))),
        };
        let result = result.map_err(|e| fail(format!("std::{name}: {e}")))?;
        Ok(self.to_mj(&result))
    }
}

/// What a std plugin used as a filter may ask of the compile: the instance attributes, read as
/// the template reads them (one not read yet is asked for, and this pass of the filter fails,
/// as a template's own read does; the next pass has it), and the time the template started.
/// Nothing else: such a filter does not read files, variables or the environment.
struct FilterContext(Shared);

impl FilterContext {
    fn unavailable(what: &str) -> String {
        format!("{what} is not available to a template filter")
    }
}

impl PluginContext for FilterContext {
    fn attribute(&mut self, instance: InstanceId, attribute: &str) -> std::result::Result<Value, AttributeError> {
        let key = (instance, attribute.to_string());
        let found = {
            let mut l = self.0.lock();
            match l.attrs.get(&key) {
                Some(Ok(value)) => Ok(value.clone()),
                Some(Err(error)) => Err(error.to_string()),
                None => {
                    if l.asked.insert(key.clone()) {
                        l.missing_attrs.push(key);
                    }
                    return Err(AttributeError::NotYetSet);
                }
            }
        };
        match found {
            Ok(value) => Ok(self.0.export(&value, 0)),
            Err(message) => Err(AttributeError::NotFound(message)),
        }
    }

    fn entity_name(&self, instance: InstanceId) -> String {
        self.display_instance(instance)
    }

    fn is_instance_of(&self, _instance: InstanceId, _entity: &str) -> std::result::Result<bool, String> {
        Err(Self::unavailable("the type of an instance"))
    }

    /// Filters read no entity's type (none of std's needs it).
    fn entity_type(&self, _entity: &str) -> Option<crate::EntityType> {
        None
    }

    fn display_instance(&self, instance: InstanceId) -> String {
        self.0.lock().displays.get(&instance).cloned().unwrap_or_else(|| format!("instance {}", instance.0))
    }

    fn print(&mut self, _line: &str) {}

    fn warn(&mut self, _message: &str) {}

    fn read_module_file(&mut self, _: &str, _: ModuleDir, _: &str) -> std::result::Result<String, String> {
        Err(Self::unavailable("a module's file"))
    }

    fn module_file_path(&mut self, _: &str, _: ModuleDir, _: &str) -> std::result::Result<String, String> {
        Err(Self::unavailable("a module's file"))
    }

    fn list_module_dir(&mut self, _: &str, _: ModuleDir, _: &str) -> std::result::Result<Vec<String>, String> {
        Err(Self::unavailable("a module's directory"))
    }

    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }

    fn unix_time(&self) -> i64 {
        self.0.lock().now
    }

    fn random_alphanumeric(&mut self, _length: usize) -> String {
        String::new()
    }

    fn stored_password(&mut self, _id: &str) -> std::result::Result<Option<String>, String> {
        Err(Self::unavailable("a password"))
    }

    fn store_password(&mut self, _id: &str, _password: &str) -> std::result::Result<(), String> {
        Err(Self::unavailable("a password"))
    }

    fn server_token(&mut self, _client_types: &[String]) -> std::result::Result<String, String> {
        Err(Self::unavailable("a server token"))
    }

    fn scope_variable(&mut self, name: &str) -> std::result::Result<Value, AttributeError> {
        Err(AttributeError::NotFound(format!("variable {name} not found")))
    }
}

/// The variables a template sees: the keyword arguments, or the caller's scope.
struct Root {
    shared: Shared,
    kwargs: Option<IndexMap<String, MjValue>>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("template variables")
    }
}

impl Object for Root {
    fn get_value(self: &Arc<Self>, key: &MjValue) -> Option<MjValue> {
        let name = key.as_str()?;
        let mut l = self.shared.lock();
        let found = match &self.kwargs {
            Some(kwargs) => kwargs.get(name).cloned(),
            None => match l.vars.get(name) {
                Some(found) => found.clone(),
                None => {
                    if l.asked_vars.insert(name.to_string()) {
                        l.missing_vars.push(name.to_string());
                    }
                    return None;
                }
            },
        };
        if found.is_none() && !is_global(name) {
            l.undefined_names.push(name.to_string());
        }
        found
    }
}

/// Names minijinja provides itself; looking them up in the scope first is expected.
fn is_global(name: &str) -> bool {
    matches!(
        name,
        "range" | "dict" | "namespace" | "debug" | "loop" | "self" | "super" | "varargs" | "kwargs" | "caller"
    )
}

/// An entity instance: its attributes are read on demand.
struct InstanceObject {
    id: InstanceId,
    shared: Shared,
}

impl std::fmt::Debug for InstanceObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "instance {}", self.id.0)
    }
}

impl Object for InstanceObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &MjValue) -> Option<MjValue> {
        let name = key.as_str()?;
        let mut l = self.shared.lock();
        let cache_key = (self.id, name.to_string());
        match l.attrs.get(&cache_key) {
            Some(Ok(v)) => Some(v.clone()),
            Some(Err(e)) => {
                let e = e.clone();
                l.failure.get_or_insert(e);
                None
            }
            None => {
                if l.asked.insert(cache_key.clone()) {
                    l.missing_attrs.push(cache_key);
                }
                None
            }
        }
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let l = self.shared.lock();
        match l.displays.get(&self.id) {
            Some(name) => f.write_str(name),
            None => write!(f, "instance {}", self.id.0),
        }
    }
}

/// An unknown value: whatever the template does with it makes the result unknown.
struct UnknownObject {
    shared: Shared,
}

impl std::fmt::Debug for UnknownObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unknown")
    }
}

impl Object for UnknownObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, _key: &MjValue) -> Option<MjValue> {
        self.shared.lock().touched_unknown = true;
        Some(MjValue::from_object(UnknownObject { shared: self.shared.clone() }))
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.shared.lock().touched_unknown = true;
        false
    }

    fn render(self: &Arc<Self>, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shared.lock().touched_unknown = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_context::TestContext;

    const HOST_URI: &str = include_str!("../../templates/host_uri.j2");

    fn run(ctx: &mut TestContext, path: &str, kwargs: &[(&str, Value)]) -> Result<Value> {
        let mut args = BoundArgs::new().with("path", path);
        args.var_kwargs = kwargs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        template(&args, ctx)
    }

    fn text(r: Result<Value>) -> String {
        match r {
            Ok(Value::Str(s)) => s.to_string(),
            other => format!("{other:?}"),
        }
    }

    fn dict(pairs: &[(&str, Value)]) -> Value {
        Value::dict(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn std_host_uri_with_keyword_arguments() {
        let mut ctx = TestContext::new();
        ctx.file("std", ModuleDir::Templates, "host_uri.j2", HOST_URI);
        let host = dict(&[
            ("remote_user", Value::str("u")),
            ("ip", Value::str("1.2.3.4")),
            ("remote_port", Value::Int(22)),
            ("os", dict(&[("python_cmd", Value::str("py"))])),
        ]);
        assert_eq!(text(run(&mut ctx, "std/host_uri.j2", &[("host", host)])), "ssh://u@1.2.3.4:22?python=py");
    }

    #[test]
    fn std_host_uri_from_the_scope_with_instances() {
        let mut ctx = TestContext::new();
        ctx.file("std", ModuleDir::Templates, "host_uri.j2", HOST_URI);
        let os = ctx.instance("std::OS", &[("python_cmd", Value::str("python3"))]);
        let host = ctx.instance(
            "std::Host",
            &[
                ("remote_user", Value::str("root")),
                ("ip", Value::str("10.0.0.1")),
                ("remote_port", Value::Int(22)),
                ("os", os),
            ],
        );
        ctx.scope.insert("host".into(), Ok(host));
        assert_eq!(text(run(&mut ctx, "std/host_uri.j2", &[])), "ssh://root@10.0.0.1:22?python=python3");
    }

    #[test]
    fn python_methods_and_tojson_work_as_in_jinja2() {
        let mut ctx = TestContext::new();
        let template = "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ d.get('z', 0) }} \
                        {{ s.upper() }} {{ s.startswith('we') }} {{ s.replace('-', '_') }} {{ '{:>6}'.format(s) }} {{ d|tojson }}";
        ctx.file("m", ModuleDir::Templates, "t.j2", template);
        let kwargs = [("d", dict(&[("a", Value::Int(1)), ("b", Value::str("x"))])), ("s", Value::str("web-1"))];
        assert_eq!(text(run(&mut ctx, "m/t.j2", &kwargs)), r#"a=1;b=x;0 WEB-1 True web_1  web-1 {"a": 1, "b": "x"}"#);
    }

    #[test]
    fn values_print_like_python() {
        let mut ctx = TestContext::new();
        ctx.file("m", ModuleDir::Templates, "t.j2", "{{ b }}|{{ n }}|{{ f }}|{{ l }}|{{ d }}|{{ s }}|{{ 1 + 2 }}\n");
        let kwargs = [
            ("b", Value::Bool(true)),
            ("n", Value::Null),
            ("f", Value::Float(1.0)),
            ("l", Value::list(vec![Value::Int(1), Value::str("a")])),
            ("d", dict(&[("k", Value::Null)])),
            ("s", Value::str("x")),
        ];
        assert_eq!(text(run(&mut ctx, "m/t.j2", &kwargs)), "True|None|1.0|@[1, 'a']|@{'k': null}|x|3");
    }

    #[test]
    fn loops_conditions_and_filters_over_instances() {
        let mut ctx = TestContext::new();
        let a = ctx.instance("__config__::A", &[("name", Value::str("a")), ("on", Value::Bool(true))]);
        let b = ctx.instance("__config__::A", &[("name", Value::str("b")), ("on", Value::Bool(false))]);
        ctx.scope.insert("items".into(), Ok(Value::list(vec![a, b])));
        ctx.scope.insert("prefix".into(), Ok(Value::str("host.example.com")));
        ctx.file(
            "m",
            ModuleDir::Templates,
            "t.j2",
            "{{ prefix | std.hostname | std.upper }}:{% for i in items %}{% if i.on %}{{ i.name }}{% else %}-{{ i.name | upper }}{% endif %}{% endfor %}",
        );
        assert_eq!(text(run(&mut ctx, "m/t.j2", &[])), "HOST:a-B");
    }

    /// std plugins that read instances or the time are filters too: `{{ none | std.timestamp }}`,
    /// `{{ items | std.key_sort("name") }}` (the reference registers every std plugin).
    #[test]
    fn plugins_that_read_instances_or_the_time_are_filters() {
        let mut ctx = TestContext::new();
        let c = ctx.instance("__config__::A", &[("name", Value::str("c"))]);
        let a = ctx.instance("__config__::A", &[("name", Value::str("a"))]);
        let b = ctx.instance("__config__::A", &[("name", Value::str("b"))]);
        ctx.scope.insert("items".into(), Ok(Value::list(vec![c, a, b])));
        ctx.file(
            "m",
            ModuleDir::Templates,
            "t.j2",
            "{% for i in items | std.key_sort(\"name\") %}{{ i.name }}{% endfor %} {{ none | std.timestamp }}",
        );
        assert_eq!(text(run(&mut ctx, "m/t.j2", &[])), "abc 1700000000");
        // What a filter cannot read is said, not guessed.
        ctx.file("m", ModuleDir::Templates, "bad.j2", "{{ items | std.key_sort(\"nope\") }}");
        let error = run(&mut ctx, "m/bad.j2", &[]).unwrap_err().to_string();
        assert!(error.contains("nope"), "{error}");
    }

    #[test]
    fn undefined_names_and_attributes_are_errors() {
        let mut ctx = TestContext::new();
        ctx.file("m", ModuleDir::Templates, "var.j2", "x={{ nope }}");
        assert_eq!(
            run(&mut ctx, "m/var.j2", &[]).unwrap_err(),
            PluginError::NotFound { message: "variable nope not found".into() }
        );
        assert_eq!(
            run(&mut ctx, "m/var.j2", &[("other", Value::Int(1))]).unwrap_err(),
            PluginError::NotFound { message: "variable nope not found".into() }
        );
        let a = ctx.instance("__config__::A", &[]);
        ctx.scope.insert("a".into(), Ok(a));
        ctx.file("m", ModuleDir::Templates, "attr.j2", "{{ a.zz }}");
        assert_eq!(
            run(&mut ctx, "m/attr.j2", &[]).unwrap_err(),
            PluginError::NotFound { message: "could not find attribute with name: zz in type __config__::A".into() }
        );
        ctx.file("m", ModuleDir::Templates, "defined.j2", "{% if nope is defined %}y{% else %}n{% endif %}");
        assert_eq!(text(run(&mut ctx, "m/defined.j2", &[])), "n");
    }

    #[test]
    fn unknowns_and_unset_values() {
        let mut ctx = TestContext::new();
        ctx.file("m", ModuleDir::Templates, "t.j2", "v={{ v }}");
        assert!(run(&mut ctx, "m/t.j2", &[("v", Value::Unknown)]).is_ok_and(|v| v.is_unknown()));
        ctx.scope.insert("v".into(), Err(AttributeError::NotYetSet));
        assert_eq!(run(&mut ctx, "m/t.j2", &[]).unwrap_err(), PluginError::NotYetSet);
    }

    #[test]
    fn bad_templates_are_errors() {
        let mut ctx = TestContext::new();
        ctx.file("m", ModuleDir::Templates, "bad.j2", "{% if %}");
        assert!(matches!(
            run(&mut ctx, "m/bad.j2", &[]),
            Err(PluginError::External { kind: "TemplateSyntaxError", .. })
        ));
        assert!(matches!(run(&mut ctx, "m/none.j2", &[]), Err(PluginError::External { kind: "TemplateNotFound", .. })));
        ctx.file(
            "m",
            ModuleDir::Templates,
            "loop.j2",
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        );
        assert!(matches!(run(&mut ctx, "m/loop.j2", &[]), Err(PluginError::Invalid { .. })));
    }
}
