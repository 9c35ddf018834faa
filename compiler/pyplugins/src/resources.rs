//! The resource shapes modules declare in Python, resolved across their files without running
//! them: for each `@resource` class, its entity, agent path and id attribute, and its fields
//! merged along the class hierarchy as the reference's `ResourceMeta` merges them, each with
//! where its value comes from (a `get_<field>` mapper or `map` entry anywhere in the hierarchy,
//! else the entity's attribute of that name).

use std::collections::HashMap;

use crate::classes::{Fields, Import, PyClass, PyFile};

/// A module's resource class, ready to shape the entity's resources.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PyResource {
    /// The entity, as the decorator names it (`files::Directory`).
    pub entity: String,
    /// The class, dotted (`inmanta_plugins.files.Directory`).
    pub class: String,
    /// The module whose Python defines it (`files`): the host loads it to run the mappers.
    pub module: String,
    /// The file as messages name it, and the class's line.
    pub file: String,
    pub line: u32,
    /// `host.name`.
    pub agent: String,
    pub id_attribute: String,
    /// A mapper computes the id attribute (it need not be a field).
    pub id_mapped: bool,
    pub fields: Vec<(String, FieldSource)>,
    /// What the mappers of the class and its bases read directly of the entity, as far as the
    /// source shows (see `PyClass::reads`).
    pub reads: Vec<String>,
}

/// Where a field's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldSource {
    /// The entity's attribute of the field's name.
    Attribute,
    /// A `get_<field>` or `map` entry of the module's classes: Python computes it.
    Mapped,
    /// inmanta-core's own mappers: `send_event` (false when unreadable), `receive_events` (true
    /// when unreadable), `managed` (a false one drops the resource).
    SendEvent,
    ReceiveEvents,
    Managed,
}

/// A resource class whose shape cannot be known without running it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PyResourceError {
    /// The entity, when the decorator could be read.
    pub entity: Option<String>,
    /// The module whose Python defines the class.
    pub module: String,
    pub class: String,
    pub file: String,
    pub line: u32,
    pub cause: String,
}

/// A Python file of a loaded module, read.
pub struct ReadFile<'a> {
    /// The module whose Python it is (`files`).
    pub module: &'a str,
    /// Its dotted name (`inmanta_plugins.files.base`).
    pub dotted: String,
    /// As messages name it.
    pub shown: &'a str,
    pub file: &'a PyFile,
}

/// inmanta-core's resource classes: their own fields and mappers, and their base.
const CORE: &[(&str, &[&str], Option<&str>)] = &[
    ("Resource", &["send_event", "receive_events"], None),
    ("PurgeableResource", &["purged", "purge_on_delete"], Some("Resource")),
    ("DiscoveryResource", &[], Some("Resource")),
    ("ManagedResource", &["managed"], Some("Resource")),
];
const CORE_MODULE: &str = "inmanta.resources";
/// Positions in [`CORE`] of the classes the rules name.
const RESOURCE: usize = 0;
const MANAGED_RESOURCE: usize = 3;

/// A class found by name: one of a module file's, or inmanta-core's.
#[derive(Clone, Copy)]
enum ClassRef<'a> {
    Module(&'a ReadFile<'a>, &'a PyClass),
    Core(usize),
}

/// Every `@resource` class of `files`, in file order, resolved.
pub fn resolve_resources(files: &[ReadFile<'_>]) -> Vec<Result<PyResource, PyResourceError>> {
    let by_module: HashMap<&str, &ReadFile<'_>> = files.iter().map(|f| (f.dotted.as_str(), f)).collect();
    let resolver = Resolver { by_module };
    let mut out = Vec::new();
    for file in files {
        for class in &file.file.classes {
            let Some(decorator) = &class.decorator else { continue };
            let error = |entity: Option<String>, cause: String| PyResourceError {
                entity,
                module: file.module.to_owned(),
                class: format!("{}.{}", file.dotted, class.name),
                file: file.shown.to_owned(),
                line: class.line,
                cause,
            };
            let decorator = match decorator {
                Ok(decorator) => decorator,
                Err(why) => {
                    out.push(Err(error(None, format!("its @resource decorator cannot be read: {why}"))));
                    continue;
                }
            };
            let entity = Some(decorator.entity.clone());
            let hierarchy = match resolver.hierarchy(ClassRef::Module(file, class), 0) {
                Ok(hierarchy) => hierarchy,
                Err(cause) => {
                    out.push(Err(error(entity, cause)));
                    continue;
                }
            };
            if !hierarchy.iter().any(|c| matches!(c, ClassRef::Core(RESOURCE))) {
                out.push(Err(error(entity, "it does not derive from inmanta.resources.Resource".to_owned())));
                continue;
            }
            let fields = match merged_fields(&hierarchy) {
                Ok(fields) => fields,
                Err(cause) => {
                    out.push(Err(error(entity, cause)));
                    continue;
                }
            };
            let fields = fields.into_iter().map(|name| (name.clone(), source_of(&name, &hierarchy))).collect();
            let id_mapped = source_of(&decorator.id_attribute, &hierarchy) == FieldSource::Mapped;
            let mut reads: Vec<String> = Vec::new();
            for class in &hierarchy {
                if let ClassRef::Module(_, class) = class {
                    reads.extend(class.reads.iter().filter(|r| !reads.contains(r)).cloned().collect::<Vec<_>>());
                }
            }
            out.push(Ok(PyResource {
                entity: decorator.entity.clone(),
                class: format!("{}.{}", file.dotted, class.name),
                module: file.module.to_owned(),
                file: file.shown.to_owned(),
                line: class.line,
                agent: decorator.agent.clone(),
                id_attribute: decorator.id_attribute.clone(),
                id_mapped,
                fields,
                reads,
            }));
        }
    }
    out
}

struct Resolver<'a> {
    by_module: HashMap<&'a str, &'a ReadFile<'a>>,
}

/// How deep bases and re-exports are followed: deeper is a loop.
const MAX_DEPTH: usize = 32;

impl<'a> Resolver<'a> {
    /// The class and its bases, depth first, left to right (each once): the order the
    /// reference's metaclass collects fields in, reversed, and the order `hasattr` finds mappers
    /// in for the single-inheritance chains real modules use.
    fn hierarchy(&self, class: ClassRef<'a>, depth: usize) -> Result<Vec<ClassRef<'a>>, String> {
        if depth > MAX_DEPTH {
            return Err("its bases form a loop".to_owned());
        }
        let mut out = vec![class];
        let bases: Vec<ClassRef<'a>> = match class {
            ClassRef::Core(at) => CORE[at].2.and_then(core_class).map(ClassRef::Core).into_iter().collect(),
            ClassRef::Module(file, class) => class
                .bases
                .iter()
                .filter(|b| !matches!(b.as_str(), "object" | "Generic" | "typing.Generic" | "abc.ABC" | "ABC"))
                .map(|base| {
                    self.lookup(file, base, 0).ok_or_else(|| {
                        format!(
                            "its base `{base}` (in {}) is not a class modelc can find in the modules' Python",
                            file.shown
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        for base in bases {
            for found in self.hierarchy(base, depth + 1)? {
                if !out.iter().any(|c| same(c, &found)) {
                    out.push(found);
                }
            }
        }
        Ok(out)
    }

    /// What `name` (dotted, as written in `file`) refers to, when it is a class.
    fn lookup(&self, file: &'a ReadFile<'a>, name: &str, depth: usize) -> Option<ClassRef<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (first, rest) = name.split_once('.').map_or((name, None), |(a, b)| (a, Some(b)));
        if rest.is_none()
            && let Some(class) = file.file.classes.iter().rev().find(|c| c.name == first)
        {
            return Some(ClassRef::Module(file, class));
        }
        let (_, import) = file.file.imports.iter().rev().find(|(local, _)| local == first)?;
        let target = match import {
            Import::Name { module, name } => format!("{module}.{name}"),
            Import::Module(module) => module.clone(),
        };
        let full = match rest {
            Some(rest) => format!("{target}.{rest}"),
            None => target,
        };
        self.absolute(&full, depth + 1)
    }

    /// The class a dotted absolute name refers to: the longest prefix that is a module, then a
    /// name in it.
    fn absolute(&self, full: &str, depth: usize) -> Option<ClassRef<'a>> {
        let (module, name) = full.rsplit_once('.')?;
        if module == CORE_MODULE {
            return core_class(name).map(ClassRef::Core);
        }
        let file = self.by_module.get(module)?;
        self.lookup(file, name, depth)
    }
}

fn core_class(name: &str) -> Option<usize> {
    CORE.iter().position(|(n, _, _)| *n == name)
}

fn same(a: &ClassRef<'_>, b: &ClassRef<'_>) -> bool {
    match (a, b) {
        (ClassRef::Core(x), ClassRef::Core(y)) => x == y,
        (ClassRef::Module(f, c), ClassRef::Module(g, d)) => f.dotted == g.dotted && std::ptr::eq(*c, *d),
        _ => false,
    }
}

/// The fields of the class and its bases, each name once: inmanta-core's classes' first, then
/// the module's, bases before the classes deriving from them. (The reference merges them into a
/// set, whose order changes from run to run; modelc's is fixed.)
fn merged_fields(hierarchy: &[ClassRef<'_>]) -> Result<Vec<String>, String> {
    let mut fields: Vec<String> = Vec::new();
    let mut ordered: Vec<&ClassRef<'_>> = hierarchy.iter().filter(|c| matches!(c, ClassRef::Core(_))).collect();
    ordered.sort_by_key(|c| match c {
        ClassRef::Core(at) => *at,
        ClassRef::Module(..) => usize::MAX,
    });
    ordered.extend(hierarchy.iter().rev().filter(|c| matches!(c, ClassRef::Module(..))));
    for class in ordered {
        let own: Vec<String> = match class {
            ClassRef::Core(at) => CORE[*at].1.iter().map(|s| (*s).to_owned()).collect(),
            ClassRef::Module(file, class) => match &class.fields {
                Fields::Inherited => Vec::new(),
                Fields::Listed(names) => names.clone(),
                Fields::Unreadable(expression) => {
                    return Err(format!(
                        "the `fields` of `{}` ({}:{}) is `{expression}`, not a literal tuple of names, so modelc cannot \
                         know the fields without running it",
                        class.name, file.shown, class.line
                    ));
                }
            },
        };
        for name in own {
            if !fields.contains(&name) {
                fields.push(name);
            }
        }
    }
    Ok(fields)
}

/// Where a field's value comes from: the first class of the hierarchy with a `get_<field>`,
/// else a `map` entry, else the attribute.
fn source_of(field: &str, hierarchy: &[ClassRef<'_>]) -> FieldSource {
    let getter = format!("get_{field}");
    for class in hierarchy {
        match class {
            ClassRef::Module(_, class) if class.getters.contains(&getter) => return FieldSource::Mapped,
            ClassRef::Core(_) => match field {
                "send_event" => return FieldSource::SendEvent,
                "receive_events" => return FieldSource::ReceiveEvents,
                "managed" if hierarchy.iter().any(|c| matches!(c, ClassRef::Core(MANAGED_RESOURCE))) => {
                    return FieldSource::Managed;
                }
                _ => {}
            },
            ClassRef::Module(..) => {}
        }
    }
    let map = hierarchy.iter().find_map(|c| match c {
        ClassRef::Module(_, class) => class.map_keys.as_ref(),
        ClassRef::Core(_) => None,
    });
    if map.is_some_and(|keys| keys.iter().any(|k| k == field)) {
        return FieldSource::Mapped;
    }
    FieldSource::Attribute
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::read_classes;

    fn resolve(sources: &[(&str, &str, bool)]) -> Vec<Result<PyResource, PyResourceError>> {
        let parsed: Vec<(String, PyFile)> = sources
            .iter()
            .map(|(dotted, source, package)| {
                ((*dotted).to_owned(), read_classes(source, dotted, dotted, *package).expect("valid Python"))
            })
            .collect();
        let files: Vec<ReadFile<'_>> = parsed
            .iter()
            .map(|(dotted, file)| ReadFile { module: "m", dotted: dotted.clone(), shown: dotted, file })
            .collect();
        resolve_resources(&files)
    }

    #[test]
    fn fields_merge_along_the_hierarchy_across_files_and_mappers_are_found_in_bases() {
        let base = r#"
from inmanta.resources import PurgeableResource, ManagedResource
class Base(PurgeableResource, ManagedResource):
    fields = ("name", "mode")
    @staticmethod
    def get_mode(exporter, entity):
        return int(entity.mode, 8)
"#;
        let init = r#"
from inmanta import resources
from .base import Base
@resources.resource("m::File", agent="host.name", id_attribute="name")
class File(Base):
    fields = ("content", "name")
    map = {"content": lambda exporter, entity: entity.text}
"#;
        let found = resolve(&[("inmanta_plugins.m.base", base, false), ("inmanta_plugins.m", init, true)]);
        let [Ok(file)] = &found[..] else { panic!("{found:?}") };
        assert_eq!(file.class, "inmanta_plugins.m.File");
        assert_eq!(file.agent, "host.name");
        let fields: Vec<(&str, FieldSource)> = file.fields.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        assert_eq!(
            fields,
            [
                ("send_event", FieldSource::SendEvent),
                ("receive_events", FieldSource::ReceiveEvents),
                ("purged", FieldSource::Attribute),
                ("purge_on_delete", FieldSource::Attribute),
                ("managed", FieldSource::Managed),
                ("name", FieldSource::Attribute),
                ("mode", FieldSource::Mapped),
                ("content", FieldSource::Mapped),
            ]
        );
    }

    #[test]
    fn a_class_that_cannot_be_read_says_why() {
        let source = r#"
from inmanta.resources import resource, Resource
from elsewhere import Mystery
@resource("m::A", agent="a", id_attribute="x")
class A(Mystery):
    fields = ("x",)
@resource("m::B", agent="a", id_attribute="x")
class B(Resource):
    fields = Resource.fields + ("x",)
@resource("m::C", agent="a", id_attribute="x")
class C:
    fields = ("x",)
"#;
        let found = resolve(&[("inmanta_plugins.m", source, true)]);
        let causes: Vec<String> = found.into_iter().map(|r| r.expect_err("unreadable").cause).collect();
        assert_eq!(
            causes,
            [
                "its base `Mystery` (in inmanta_plugins.m) is not a class modelc can find in the modules' Python",
                "the `fields` of `B` (inmanta_plugins.m:8) is `Resource.fields + …`, not a literal tuple of names, so \
                 modelc cannot know the fields without running it",
                "it does not derive from inmanta.resources.Resource",
            ]
        );
    }
}
