//! Plugin calls and casts: arguments bound to the plugin's signature, the call made through the
//! std implementation with this engine as its [`PluginContext`], and the result memoised so a
//! call is made once per evaluation (spec §4.12, execution §1.8).

use modelc_diagnostics::{Diagnostic, codes};
use modelc_sema::hir::{Arg, Callee, Expr};
use modelc_std_plugins::{AttributeError, ModuleDir, PluginContext, PluginError};
use modelc_value::{InstanceId, Value};

use crate::ForeignError;
use crate::cells::{CellId, ScopeId, TaskId};
use crate::engine::{Engine, Eval, Stop};

impl<'a> Engine<'a> {
    pub(crate) fn eval_call(
        &mut self,
        task: TaskId,
        call: &'a Expr,
        callee: Callee,
        written: &'a str,
        args: &'a [Arg],
        scope: ScopeId,
    ) -> Eval<Value> {
        let key = (call as *const Expr, scope);
        if let Some(value) = self.memo(task, key) {
            return Ok(value.clone());
        }
        let mut positional = Vec::new();
        let mut keywords: Vec<(String, Value)> = Vec::new();
        for arg in args {
            match arg {
                Arg::Positional(e) => positional.push(self.eval(task, e, scope)?),
                Arg::Keyword(name, e) => keywords.push((name.text.clone(), self.eval(task, e, scope)?)),
                Arg::Splat(_) => {}
            }
        }
        for arg in args {
            if let Arg::Splat(e) = arg {
                match self.eval(task, e, scope)? {
                    Value::Dict(d) => keywords.extend(d.iter().map(|(k, v)| (k.clone(), v.clone()))),
                    Value::Unknown => return Ok(Value::Unknown),
                    other => return Err(self.not_a_dict(scope, e.span, &other)),
                }
            }
        }
        let result = if let Callee::Cast(cast) = callee {
            if !keywords.is_empty() || positional.len() != 1 {
                return Err(self.fail(
                    scope,
                    call.span,
                    Diagnostic::new(&codes::INVALID_ARGUMENTS, "a type cast takes exactly one positional argument"),
                    "",
                ));
            }
            modelc_value::ops::cast(cast, &positional[0], &|i| self.describe(i)).map_err(|message| {
                self.fail(scope, call.span, Diagnostic::new(&codes::PLUGIN_FAILED, message), "the cast failed")
            })?
        } else {
            let Callee::Plugin(signature) = callee else {
                return Err(self.fail(
                    scope,
                    call.span,
                    Diagnostic::new(&codes::UNAVAILABLE_PLUGIN, format!("`{written}` is not a plugin modelc can run")),
                    "called here",
                ));
            };
            if !signature.is_builtin() {
                let result = self.call_foreign(call, args, signature, &positional, &keywords, scope)?;
                self.memoise(key, result.clone());
                return Ok(result);
            }
            let name = signature.fqn();
            let bound = modelc_std_plugins::bind(signature, positional, keywords).map_err(|e| {
                self.fail(
                    scope,
                    call.span,
                    Diagnostic::new(&codes::INVALID_ARGUMENTS, e.message(&name)),
                    "in this call",
                )
            })?;
            // A template's names are looked up as the template runs: say which template.
            let template =
                (signature.name == "template").then(|| bound.str_arg("path").ok().map(str::to_owned)).flatten();
            let mut host = Host { engine: self, scope, missing: None, span: call.span };
            match modelc_std_plugins::call(signature.name, bound, &mut host) {
                Ok(value) => value,
                Err(PluginError::NotYetSet) => return not_yet(host.missing),
                Err(error) => {
                    let (code, message) = match &error {
                        PluginError::NotFound { message } => (&codes::UNDEFINED_VARIABLE, message.clone()),
                        PluginError::OptionalEmpty { message } => (&codes::MISSING_OPTIONAL_VALUE, message.clone()),
                        other => (&codes::PLUGIN_FAILED, format!("exception in plugin {name}: {other}")),
                    };
                    let mut d = Diagnostic::new(code, message);
                    if let (Some(path), PluginError::NotFound { .. }) = (&template, &error) {
                        d = d.note(format!(
                            "the template `{path}` reads it: pass it as a keyword argument of `std::template`, or have it where the template is rendered (without keyword arguments a template sees the caller's variables and, in an implementation, the instance's attributes)"
                        ));
                    }
                    return Err(self.fail(scope, call.span, d, "raised here"));
                }
            }
        };
        self.memoise(key, result.clone());
        Ok(result)
    }
}

impl<'a> Engine<'a> {
    /// A module's plugin written in Python, through [`World::foreign`](crate::World).
    fn call_foreign(
        &mut self,
        call: &'a Expr,
        args: &'a [Arg],
        signature: &'static modelc_stdlib::PluginSignature,
        positional: &[Value],
        keywords: &[(String, Value)],
        scope: ScopeId,
    ) -> Eval<Value> {
        let name = signature.fqn();
        if !signature.allows_unknown && positional.iter().chain(keywords.iter().map(|(_, v)| v)).any(Value::is_unknown)
        {
            return Ok(Value::Unknown);
        }
        self.check_foreign_arguments(signature, call, args, positional, keywords, scope)?;
        let Some(foreign) = self.world.foreign.clone() else {
            let d = Diagnostic::new(&codes::PYTHON_FAILED, format!("plugin {name} could not run: it is written in Python, and no Python environment was found to run it"))
                .help("give one with `--python PATH` (an interpreter or a virtual environment), `python:` in project.yml, or an active virtual environment");
            return Err(self.fail(scope, call.span, d, "called here"));
        };
        let caller = self.program.units[self.unit_of(scope)].namespace.clone();
        let mut host = Host { engine: self, scope, missing: None, span: call.span };
        let outcome = foreign.call(signature, &caller, positional, keywords, &mut host);
        let missing = host.missing;
        match outcome {
            Ok(value) => {
                self.check_foreign_result(signature, &value, call.span, scope)?;
                Ok(value)
            }
            Err(ForeignError::NotYetSet) => not_yet(missing),
            Err(ForeignError::Raised { kind, message, traceback, explicit }) => {
                let text = if explicit {
                    format!("plugin {name} raised: {message}")
                } else {
                    format!("exception in plugin {name}: {kind}: {message}")
                };
                let mut d = Diagnostic::new(&codes::PLUGIN_FAILED, text);
                if !traceback.is_empty() {
                    d = d.note(format!("Python's traceback:\n{}", traceback.trim_end()));
                }
                Err(self.fail(scope, call.span, d, "raised in this call"))
            }
            Err(ForeignError::Host { message, detail }) => {
                let mut d = Diagnostic::new(&codes::PYTHON_FAILED, format!("plugin {name} could not run: {message}"));
                if let Some(detail) = detail {
                    d = d.note(detail.trim_end().to_owned());
                }
                Err(self.fail(scope, call.span, d, "called here"))
            }
        }
    }
}

/// A plugin read a value that is not complete yet: the call waits for the cell it read (and is
/// made again), or, when no cell is to blame, its value is unknown.
fn not_yet(missing: Option<CellId>) -> Eval<Value> {
    match missing {
        Some(cell) => Err(Stop::Wait(cell)),
        None => Ok(Value::Unknown),
    }
}

/// The engine as the std plugins see it.
struct Host<'e, 'a> {
    engine: &'e mut Engine<'a>,
    scope: ScopeId,
    /// The cell a plugin found unset: the call waits for it.
    missing: Option<CellId>,
    /// The call, for the warnings the plugin reports.
    span: modelc_diagnostics::Span,
}

impl Host<'_, '_> {
    fn read(&mut self, cell: CellId) -> Result<Value, AttributeError> {
        match self.engine.read_cell(cell, self.scope, modelc_diagnostics::Span::default()) {
            Ok(value) => Ok(value),
            Err(Stop::Wait(cell)) => {
                self.missing = Some(cell);
                Err(AttributeError::NotYetSet)
            }
            Err(Stop::Fail(d)) => Err(AttributeError::OptionalEmpty(d.message)),
            Err(Stop::Listen) => Err(AttributeError::NotYetSet),
        }
    }
}

impl Host<'_, '_> {
    fn module_file(&self, module: &str, dir: ModuleDir, path: &str) -> Result<&crate::ModuleFile, String> {
        let files = &self.engine.world.module_files;
        if !files.has_module(module) && !self.engine.program.units.iter().any(|u| u.namespace == module) {
            return Err(format!("module {module} is not loaded by this compile"));
        }
        // Each refusal says which rule refused it.
        if path.starts_with('/') {
            return Err(format!(
                "{module}/{path}: refused: an absolute path; a module's {} is read by paths relative to it",
                dir_name(dir)
            ));
        }
        if path.split('/').any(|part| part == "..") {
            return Err(format!(
                "{module}/{path}: refused: `..` would leave the module's {}; only what is inside it is read",
                dir_name(dir)
            ));
        }
        if let Some(reason) = files.refusal(module, dir, path) {
            return Err(format!("{module}/{path}: refused: {reason}"));
        }
        files.get(module, dir, path).ok_or_else(|| match files.root(module) {
            Some(root) => format!("{module}/{path}: there is no {root}/{}{path}", dir_name(dir)),
            None => format!("{module}/{path}: no such file in {}", dir_name(dir)),
        })
    }
}

fn dir_name(dir: ModuleDir) -> &'static str {
    match dir {
        ModuleDir::Files => "files/",
        ModuleDir::Templates => "templates/",
    }
}

impl PluginContext for Host<'_, '_> {
    fn attribute(&mut self, instance: InstanceId, attribute: &str) -> Result<Value, AttributeError> {
        // A Python plugin names instances by number: one it made up is not in the model.
        if instance.0 as usize >= self.engine.instances.len() {
            return Err(AttributeError::NotFound(format!("there is no instance {}", instance.0)));
        }
        match self.engine.attr_cell(instance, attribute) {
            Some(cell) => self.read(cell),
            None => Err(AttributeError::NotFound(format!(
                "could not find attribute with name: {attribute} in type {}",
                self.engine.entity_of(instance)
            ))),
        }
    }

    fn entity_name(&self, instance: InstanceId) -> String {
        self.engine.entity_of(instance).to_owned()
    }

    fn is_instance_of(&self, instance: InstanceId, entity: &str) -> Result<bool, String> {
        if !self.engine.program.index.entities.contains_key(entity) {
            return Err(format!("could not find type {entity}"));
        }
        Ok(self.engine.program.index.is_subtype(self.engine.entity_of(instance), entity))
    }

    fn entity_type(&self, entity: &str) -> Option<modelc_std_plugins::EntityType> {
        entity_type(self.engine.program.index, entity)
    }

    fn caller_namespace(&self) -> Option<String> {
        let unit = self.engine.unit_of(self.scope);
        self.engine.program.units.get(unit).map(|u| u.namespace.clone())
    }

    fn display_instance(&self, instance: InstanceId) -> String {
        self.engine.describe(instance)
    }

    fn print(&mut self, line: &str) {
        self.engine.printed.push(line.to_owned());
    }

    fn warn(&mut self, message: &str) {
        let file = self.engine.file_of(self.scope);
        let warning = Diagnostic::new(&codes::PLUGIN_WARNING, message.to_owned()).primary(
            file,
            self.span,
            "reported by this call",
        );
        // A call that runs again after a wait warns again: keep one.
        if !self.engine.warnings.contains(&warning) {
            self.engine.warnings.push(warning);
        }
    }

    fn read_module_file(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String> {
        if module == "std" && dir == ModuleDir::Templates {
            return modelc_stdlib::template(path)
                .map(str::to_owned)
                .ok_or_else(|| format!("template {path} not found"));
        }
        let file = self.module_file(module, dir, path)?;
        file.text.clone().ok_or_else(|| format!("{} is not UTF-8 text", file.path))
    }

    fn module_file_path(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String> {
        Ok(self.module_file(module, dir, path)?.path.clone())
    }

    fn list_module_dir(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<Vec<String>, String> {
        let files = &self.engine.world.module_files;
        files.list(module, dir, path).ok_or_else(|| format!("{module}/{path}: no such directory in {}", dir_name(dir)))
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.engine.world.env.get(name).cloned()
    }

    fn unix_time(&self) -> i64 {
        self.engine.world.now
    }

    fn random_alphanumeric(&mut self, length: usize) -> String {
        match self.engine.world.passwords.random {
            Some(random) => random(length),
            // Nothing will be kept: a placeholder, the same every time.
            None => "x".repeat(length),
        }
    }

    fn stored_password(&mut self, id: &str) -> Result<Option<String>, String> {
        let passwords = &self.engine.world.passwords.stored;
        Ok(passwords.get(id).or_else(|| self.engine.new_passwords.get(id)).cloned())
    }

    fn store_password(&mut self, id: &str, password: &str) -> Result<(), String> {
        // Kept for the caller to store (only when passwords are really generated).
        if self.engine.world.passwords.random.is_some() {
            self.engine.new_passwords.insert(id.to_owned(), password.to_owned());
        }
        Ok(())
    }

    fn environment_id(&self) -> Option<String> {
        self.engine.world.environment_id()
    }

    fn fact(&mut self, resource: &Value, name: &str) -> Result<Option<Value>, AttributeError> {
        let Value::Instance(instance) = resource else { return Ok(None) };
        if self.engine.world.facts.is_empty() || instance.0 as usize >= self.engine.instances.len() {
            return Ok(None);
        }
        let index = self.engine.program.index;
        let entity = self.engine.entity_of(*instance);
        let Some(id) = crate::facts::resource_id(index, entity, *instance, self)? else { return Ok(None) };
        Ok(self.engine.world.facts.get(&id).and_then(|facts| facts.get(name)).map(|value| Value::from(value.clone())))
    }

    /// No server, no token: the reference gives `""` then.
    fn server_token(&mut self, _client_types: &[String]) -> Result<String, String> {
        Ok(String::new())
    }

    fn scope_variable(&mut self, name: &str) -> Result<Value, AttributeError> {
        match self.engine.lookup_name(name, self.scope) {
            Some(crate::eval::Named::Instance(i)) => Ok(Value::Instance(i)),
            Some(crate::eval::Named::Cell(cell)) => self.read(cell),
            None => Err(AttributeError::NotFound(format!("variable {name} not found"))),
        }
    }
}

/// An entity as Python code reads it through `_type()`: its parents depth first, and its
/// attributes, its own first (in declaration order), then each parent's, as the reference lists
/// them.
pub fn entity_type(index: &modelc_sema::ModelIndex, entity: &str) -> Option<modelc_std_plugins::EntityType> {
    let ancestry = index.ancestry(entity);
    let (own, parents) = ancestry.split_first()?;
    let mut attributes = Vec::new();
    for def in std::iter::once(own).chain(parents) {
        for attribute in def.attributes.values() {
            let relation = matches!(attribute.kind, modelc_sema::index::AttrKind::Relation { .. });
            attributes.push((attribute.name.clone(), relation));
        }
    }
    Some(modelc_std_plugins::EntityType { parents: parents.iter().map(|d| d.fqn.clone()).collect(), attributes })
}
