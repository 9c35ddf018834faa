//! Checks of resource declarations: `resource Entity(id=…, agent=…, fields=[…], export_if=…)`.
//!
//! A declaration says how the instances of a `std::Resource` subtype become resources: which
//! attribute identifies them, which path leads to the agent that deploys them, which attributes
//! are exported, and which boolean attribute decides whether they are exported at all. Execution
//! ignores declarations; the refinement into resources (`modelc-refine`) reads them.

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_syntax::ast::{FieldSource, FieldSpec, Ident, ResourceDecl, ResourceOptionValue};

use crate::check::Checker;
use crate::index::{AttrDef, AttrKind, Declarations as _};
use crate::types::BaseType;

/// The options a resource declaration accepts.
pub const RESOURCE_OPTIONS: [&str; 6] = ["id", "agent", "fields", "export_if", "directory", "paths"];

/// The export functions a field can be computed with (`hash=file_content(content)`), with the
/// number of arguments each takes (at least, at most). Refinement implements them.
pub const EXPORT_FUNCTIONS: [(&str, usize, usize); 2] = [
    // The file's text (content, prefix_content, suffix_content, content_separator) → its sha1;
    // the text goes to the IR's content table.
    ("file_content", 1, 4),
    // The mitogen context of a resource (its `via`, else its `host`'s) as a dict.
    ("mitogen_context", 1, 2),
];

/// Attribute names the export format uses for itself; never exported as fields.
pub const RESERVED_FIELDS: [&str; 6] = ["id", "version", "requires", "provides", "model", "unknowns"];

/// The entity every resource type extends.
pub const RESOURCE_ROOT: &str = "std::Resource";

/// The agent of a resource whose declarations name none.
pub const DEFAULT_AGENT: &str = "internal";

impl Checker<'_> {
    pub(crate) fn check_resource_decl(&mut self, decl: &ResourceDecl, seen: &mut IndexMap<String, Span>) {
        let Some(entity) = self.resolve_entity(&decl.entity) else { return };
        if !self.index.is_subtype(&entity, RESOURCE_ROOT) && !self.index.is_incomplete(&entity) {
            let d = self
                .invalid(
                    decl.entity.span,
                    format!("`{entity}` is not a resource type"),
                    "does not extend std::Resource",
                )
                .help(format!("only entities that extend `{RESOURCE_ROOT}` become resources"));
            self.error(d);
            return;
        }
        if let Some(first) = seen.get(&entity) {
            let d = Diagnostic::new(
                &codes::DUPLICATE_RESOURCE_DECLARATION,
                format!("`{entity}` is declared as a resource twice"),
            )
            .primary(self.file, decl.span, "declared again here")
            .secondary(self.file, *first, "first declared here");
            self.error(d);
        } else if let Some(namespace) = self.index.resource_declarations(&entity).first()
            && namespace != self.scope.namespace
        {
            let d = Diagnostic::new(
                &codes::DUPLICATE_RESOURCE_DECLARATION,
                format!("`{entity}` is already declared as a resource in `{namespace}`"),
            )
            .primary(self.file, decl.span, "declared again here")
            .help("an entity has one resource declaration; its subtypes can declare their own");
            self.error(d);
        } else {
            seen.insert(entity.clone(), decl.span);
        }
        let mut given: IndexMap<&str, Span> = IndexMap::new();
        for option in &decl.options {
            let name = option.name.name.as_str();
            if !RESOURCE_OPTIONS.contains(&name) {
                let d = self
                    .invalid(option.name.span, format!("unknown resource option `{name}`"), "not an option")
                    .help(format!("the options are {}", RESOURCE_OPTIONS.map(|o| format!("`{o}`")).join(", ")));
                self.error(d);
                continue;
            }
            if let Some(first) = given.get(name) {
                let d = self
                    .invalid(option.span, format!("option `{name}` is given twice"), "given again here")
                    .secondary(self.file, *first, "first given here");
                self.error(d);
                continue;
            }
            given.insert(name, option.span);
            match (name, &option.value) {
                ("id", ResourceOptionValue::Path(path)) if path.len() == 1 => {
                    self.check_plain_attribute(&entity, &path[0], "the id", |_| true);
                }
                ("export_if", ResourceOptionValue::Path(path)) if path.len() == 1 => {
                    self.check_plain_attribute(&entity, &path[0], "`export_if`", |b| *b == BaseType::Bool);
                }
                ("fields", ResourceOptionValue::List(items)) => {
                    for field in items {
                        self.check_field(&entity, field);
                    }
                }
                ("directory", ResourceOptionValue::Path(path)) if path.len() == 1 => {
                    self.check_plain_attribute(&entity, &path[0], "`directory`", |b| *b == BaseType::String);
                }
                ("paths", ResourceOptionValue::List(items)) if items.iter().all(|i| i.source.is_none()) => {
                    for item in items {
                        self.check_plain_attribute(&entity, &item.name, "`paths`", |b| *b == BaseType::String);
                    }
                }
                ("agent", ResourceOptionValue::Str(text)) if text.as_constant().is_some() => {}
                ("agent", ResourceOptionValue::Path(path)) => self.check_agent_path(&entity, path),
                (name, value) => {
                    let expected = match name {
                        "id" => "one attribute name: `id=name`",
                        "export_if" => "one boolean attribute: `export_if=managed`",
                        "fields" => "a list of fields: `fields=[name, permissions=mode, hash=file_content(content)]`",
                        "directory" => "one string attribute, the directory's path: `directory=path`",
                        "paths" => "a list of string attributes, the paths the resource occupies: `paths=[src, dst]`",
                        _ => "a path of attributes or a plain string: `agent=host.name` or `agent=\"internal\"`",
                    };
                    let span = value.span().unwrap_or(option.span);
                    let d = self.invalid(span, format!("invalid value for `{name}`"), format!("expected {expected}"));
                    self.error(d);
                }
            }
        }
    }

    /// One item of `fields`: an attribute of the resource, or a field with a source: a path of
    /// attributes, or an export function applied to paths.
    fn check_field(&mut self, entity: &str, field: &FieldSpec) {
        if RESERVED_FIELDS.contains(&field.name.name.as_str()) {
            let d = self
                .invalid(field.name.span, format!("`{}` cannot be a field", field.name.name), "a reserved name")
                .note(format!("the export format uses {} itself", RESERVED_FIELDS.join(", ")));
            self.error(d);
            return;
        }
        match &field.source {
            None => {
                self.check_plain_attribute(entity, &field.name, "a field", |_| true);
            }
            Some(FieldSource::Path(path)) => self.check_path(entity, path),
            Some(FieldSource::Call { function, args }) => {
                let Some((_, least, most)) = EXPORT_FUNCTIONS.iter().find(|(name, ..)| *name == function.name) else {
                    let known: Vec<String> = EXPORT_FUNCTIONS.iter().map(|(n, ..)| format!("`{n}`")).collect();
                    let d = self
                        .invalid(function.span, format!("unknown export function `{}`", function.name), "not known")
                        .help(format!("the export functions are {}", known.join(", ")));
                    self.error(d);
                    return;
                };
                if args.len() < *least || args.len() > *most {
                    let d = self.invalid(
                        field.span,
                        format!("`{}` takes {least} to {most} attributes, not {}", function.name, args.len()),
                        "wrong number of attributes",
                    );
                    self.error(d);
                }
                for path in args {
                    self.check_path(entity, path);
                }
            }
        }
    }

    /// A path of attributes followed from `entity`: every step but the last a relation to at
    /// most one instance.
    fn check_path(&mut self, entity: &str, path: &[Ident]) {
        let mut current = entity.to_owned();
        for (at, step) in path.iter().enumerate() {
            let Some(def) = self.attribute_for_declaration(&current, step) else { return };
            if at + 1 == path.len() {
                return;
            }
            match &def.kind {
                AttrKind::Relation { target, bounds, .. } if bounds.upper == Some(1) => {
                    if target.is_empty() {
                        return;
                    }
                    current = target.clone();
                }
                AttrKind::Relation { .. } => {
                    let d = self
                        .invalid(step.span, "a path cannot go through a relation to many", "relates to many instances")
                        .note("every step but the last follows a relation to one instance");
                    self.error(d);
                    return;
                }
                AttrKind::Value { .. } => {
                    let d = self.invalid(
                        step.span,
                        "a path goes through relations",
                        format!("`{}` is not a relation", step.name),
                    );
                    self.error(d);
                    return;
                }
            }
        }
    }

    /// Checks that `name` is a plain attribute of `entity` (not a relation, not a list) whose
    /// base type passes `accepts`.
    fn check_plain_attribute(
        &mut self,
        entity: &str,
        name: &Ident,
        role: &str,
        accepts: impl Fn(&BaseType) -> bool,
    ) -> Option<BaseType> {
        let def = self.attribute_for_declaration(entity, name)?;
        let problem = match &def.kind {
            AttrKind::Relation { .. } => Some(format!("`{}` is a relation", name.name)),
            AttrKind::Value { ty, .. } => {
                let base = self.primitive_of(&ty.base);
                if !accepts(&base) {
                    Some(format!("`{}` is of type {ty}", name.name))
                } else {
                    return Some(base);
                }
            }
        };
        if let Some(problem) = problem {
            let d = self.invalid(name.span, format!("{role} must be a plain attribute{}", suffix(role)), problem);
            self.error(d);
        }
        None
    }

    /// `agent=host.name`: every step but the last a relation to one instance, the last a string.
    fn check_agent_path(&mut self, entity: &str, path: &[Ident]) {
        let mut current = entity.to_owned();
        for (at, step) in path.iter().enumerate() {
            let Some(def) = self.attribute_for_declaration(&current, step) else { return };
            let last = at + 1 == path.len();
            match (&def.kind, last) {
                (AttrKind::Relation { target, bounds, .. }, false) if bounds.upper == Some(1) => {
                    if target.is_empty() {
                        return;
                    }
                    current = target.clone();
                }
                (AttrKind::Value { ty, .. }, true) if !ty.list && self.primitive_of(&ty.base) == BaseType::String => {}
                (kind, last) => {
                    let problem = match kind {
                        AttrKind::Relation { .. } if last => format!("`{}` is a relation, not a string", step.name),
                        AttrKind::Relation { .. } => format!("`{}` relates to many instances", step.name),
                        AttrKind::Value { ty, .. } if last => format!("`{}` is of type {ty}", step.name),
                        AttrKind::Value { .. } => format!("`{}` is not a relation", step.name),
                    };
                    let d = self
                        .invalid(step.span, "the agent path must lead to a string", problem)
                        .note("every step but the last follows a relation to one instance; the last is a string");
                    self.error(d);
                    return;
                }
            }
        }
    }

    fn attribute_for_declaration(&mut self, entity: &str, name: &Ident) -> Option<AttrDef> {
        if let Some(def) = self.index.attribute(entity, &name.name) {
            return Some(def.clone());
        }
        if !self.index.is_incomplete(entity) {
            let names: Vec<&str> = self.index.attribute_names(entity).collect();
            let mut d =
                Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("`{entity}` has no attribute `{}`", name.name))
                    .primary(self.file, name.span, "no such attribute");
            d = crate::suggest::suggest(
                d,
                self.file,
                name.span,
                &crate::suggest::similar(&name.name, names.into_iter()),
            );
            self.error(d);
        }
        None
    }

    /// The primitive a typedef (chain) stands for.
    fn primitive_of(&self, base: &BaseType) -> BaseType {
        let mut base = base.clone();
        for _ in 0..32 {
            match &base {
                BaseType::Typedef(name) => match self.index.typedef(name) {
                    Some(def) => base = def.base.clone(),
                    None => break,
                },
                _ => break,
            }
        }
        base
    }

    fn invalid(&self, span: Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&codes::INVALID_RESOURCE_DECLARATION, message.into()).primary(self.file, span, label.into())
    }
}

fn suffix(role: &str) -> &'static str {
    match role {
        "`export_if`" => " of type bool",
        "`directory`" | "`paths`" => " of type string",
        _ => "",
    }
}
