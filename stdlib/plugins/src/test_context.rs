//! An in-memory [`PluginContext`] for the plugin tests: instances with attributes and an entity
//! hierarchy, module files, environment variables, a fixed clock, a predictable "random"
//! generator, a password store, server settings, facts and a caller scope. Everything printed
//! or warned is recorded.

use std::collections::BTreeMap;

use modelc_value::{InstanceId, Value};

use super::context::{AttributeError, ModuleDir, PluginContext, ServerSettings};

struct TestInstance {
    entity: String,
    attrs: BTreeMap<String, Result<Value, AttributeError>>,
}

#[derive(Default)]
pub(crate) struct TestContext {
    instances: Vec<TestInstance>,
    /// Entity name → its direct parents.
    pub(crate) parents: BTreeMap<String, Vec<String>>,
    pub(crate) printed: Vec<String>,
    pub(crate) warnings: Vec<String>,
    /// (module, dir, path) → contents.
    pub(crate) files: BTreeMap<(String, ModuleDir, String), String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) time: i64,
    random_calls: usize,
    pub(crate) passwords: BTreeMap<String, String>,
    pub(crate) environment_id: Option<String>,
    pub(crate) environment_name: Option<String>,
    pub(crate) environment_server: Option<String>,
    pub(crate) server: ServerSettings,
    pub(crate) token: Option<String>,
    pub(crate) facts: Vec<(Value, String, Value)>,
    pub(crate) scope: BTreeMap<String, Result<Value, AttributeError>>,
}

impl TestContext {
    pub(crate) fn new() -> TestContext {
        TestContext { time: 1_700_000_000, ..TestContext::default() }
    }

    /// A new instance of `entity` with the given attributes.
    pub(crate) fn instance(&mut self, entity: &str, attrs: &[(&str, Value)]) -> Value {
        let id = InstanceId(u32::try_from(self.instances.len()).unwrap_or(u32::MAX));
        self.instances.push(TestInstance {
            entity: entity.to_string(),
            attrs: attrs.iter().map(|(k, v)| (k.to_string(), Ok(v.clone()))).collect(),
        });
        Value::Instance(id)
    }

    /// Sets (or marks unset) an attribute of an instance made by [`TestContext::instance`].
    pub(crate) fn set(&mut self, instance: &Value, attr: &str, value: Result<Value, AttributeError>) {
        if let Value::Instance(id) = instance
            && let Some(i) = self.instances.get_mut(id.0 as usize)
        {
            i.attrs.insert(attr.to_string(), value);
        }
    }

    pub(crate) fn file(&mut self, module: &str, dir: ModuleDir, path: &str, text: &str) {
        self.files.insert((module.to_string(), dir, path.to_string()), text.to_string());
    }

    fn get(&self, id: InstanceId) -> Option<&TestInstance> {
        self.instances.get(id.0 as usize)
    }

    fn derives_from(&self, entity: &str, target: &str) -> bool {
        entity == target || self.parents.get(entity).is_some_and(|ps| ps.iter().any(|p| self.derives_from(p, target)))
    }
}

impl PluginContext for TestContext {
    fn attribute(&mut self, instance: InstanceId, attribute: &str) -> Result<Value, AttributeError> {
        let i = self.get(instance).ok_or_else(|| AttributeError::NotFound("no such instance".into()))?;
        i.attrs.get(attribute).cloned().unwrap_or_else(|| {
            Err(AttributeError::NotFound(format!(
                "could not find attribute with name: {attribute} in type {}",
                i.entity
            )))
        })
    }

    fn entity_name(&self, instance: InstanceId) -> String {
        self.get(instance).map(|i| i.entity.clone()).unwrap_or_default()
    }

    fn is_instance_of(&self, instance: InstanceId, entity: &str) -> Result<bool, String> {
        let known = self.instances.iter().any(|i| i.entity == entity) || self.parents.contains_key(entity);
        if !known {
            return Err(format!("could not find type {entity}"));
        }
        Ok(self.get(instance).is_some_and(|i| self.derives_from(&i.entity, entity)))
    }

    /// Parents only: test instances have no declared attributes.
    fn entity_type(&self, entity: &str) -> Option<crate::EntityType> {
        let mut parents: Vec<String> = Vec::new();
        let mut stack: Vec<&str> = vec![entity];
        while let Some(at) = stack.pop() {
            for parent in self.parents.get(at).into_iter().flatten() {
                parents.push(parent.clone());
                stack.push(parent);
            }
        }
        Some(crate::EntityType { parents, attributes: Vec::new() })
    }

    fn display_instance(&self, instance: InstanceId) -> String {
        format!("{} {:x}", self.entity_name(instance), 0x7f00 + instance.0)
    }

    fn print(&mut self, line: &str) {
        self.printed.push(line.to_string());
    }

    fn warn(&mut self, message: &str) {
        self.warnings.push(message.to_string());
    }

    fn read_module_file(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String> {
        self.files
            .get(&(module.to_string(), dir, path.to_string()))
            .cloned()
            .ok_or_else(|| format!("file {path} not found in module {module}"))
    }

    fn module_file_path(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String> {
        let dir_name = match dir {
            ModuleDir::Files => "files",
            ModuleDir::Templates => "templates",
        };
        if self.files.contains_key(&(module.to_string(), dir, path.to_string())) {
            Ok(format!("/project/libs/{module}/{dir_name}/{path}"))
        } else {
            Err(format!("{module}/{path} isn't a valid file"))
        }
    }

    fn list_module_dir(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<Vec<String>, String> {
        let prefix = if path.is_empty() { String::new() } else { format!("{}/", path.trim_end_matches('/')) };
        let names: Vec<String> = self
            .files
            .keys()
            .filter(|(m, d, _)| m == module && *d == dir)
            .filter_map(|(_, _, p)| p.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/'))
            .map(str::to_string)
            .collect();
        if names.is_empty() { Err(format!("{module}/{path} is not a directory")) } else { Ok(names) }
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    fn unix_time(&self) -> i64 {
        self.time
    }

    fn random_alphanumeric(&mut self, length: usize) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        self.random_calls += 1;
        (0..length).map(|i| CHARS[(i * 7 + self.random_calls * 13) % CHARS.len()] as char).collect()
    }

    fn stored_password(&mut self, id: &str) -> Result<Option<String>, String> {
        Ok(self.passwords.get(id).cloned())
    }

    fn store_password(&mut self, id: &str, password: &str) -> Result<(), String> {
        self.passwords.insert(id.to_string(), password.to_string());
        Ok(())
    }

    fn environment_id(&self) -> Option<String> {
        self.environment_id.clone()
    }

    fn environment_name(&mut self) -> Option<String> {
        self.environment_name.clone()
    }

    fn environment_server(&mut self) -> Option<String> {
        self.environment_server.clone()
    }

    fn server_settings(&self) -> ServerSettings {
        self.server.clone()
    }

    fn server_token(&mut self, client_types: &[String]) -> Result<String, String> {
        match &self.token {
            Some(t) => Ok(format!("{t}:{}", client_types.join(","))),
            None => Err("no token configured".into()),
        }
    }

    fn fact(&mut self, resource: &Value, name: &str) -> Result<Option<Value>, AttributeError> {
        Ok(self.facts.iter().find(|(r, n, _)| r.py_eq(resource) && n == name).map(|(_, _, v)| v.clone()))
    }

    fn scope_variable(&mut self, name: &str) -> Result<Value, AttributeError> {
        self.scope
            .get(name)
            .cloned()
            .unwrap_or_else(|| Err(AttributeError::NotFound(format!("variable {name} not found"))))
    }
}
