//! Checks of a file's imports and declarations: entities (parents, attributes, defaults,
//! inheritance), relations, typedefs, indexes, implementations and `implement` statements.

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_syntax::ast::{
    AttrBase, AttrDefault, Attribute, Entity, ExprKind, File, ImplRef, Implement, Index, Item, Relation, TypeRef,
    Typedef,
};

use crate::check::Checker;
use crate::consteval;
use crate::index::{AttrDef, AttrKind, Declarations as _, Origin, TypeKind};
use crate::loading::LoadedModules;
use crate::resolve::Resolved;
use crate::types::{BaseType, PRIMITIVES, ValueType};
use crate::validate::Misfit;

impl<'a> Checker<'a> {
    pub(crate) fn check_imports(&mut self, file: &File, loaded: &LoadedModules) {
        let mut seen: IndexMap<String, Span> = IndexMap::new();
        for item in &file.items {
            let Item::Import(import) = item else { continue };
            let module = import.module.text();
            if !self.index.has_namespace(&module) {
                let known: Vec<&str> = self.index.available().iter().map(String::as_str).collect();
                let mut d = Diagnostic::new(&codes::UNKNOWN_MODULE, format!("module `{module}` not found")).primary(
                    self.file,
                    import.module.span,
                    "no such module on the module path",
                );
                let suggestions = crate::suggest::similar(&module, known.into_iter());
                let top = |m: &str| m.split("::").next().unwrap_or(m).to_owned();
                self.failed_imports.push(top(&module));
                self.failed_imports.extend(suggestions.iter().map(|s| top(s)));
                let published = crate::registry::package(&top(&module));
                if let Some(package) = published {
                    d = d.help(format!(
                        "`{}` is published on the Python package registry: `pip install --no-deps {package}` \
                         into the project's virtual environment (named by `python:` in project.yml, or the \
                         active one)",
                        top(&module)
                    ));
                } else if suggestions.is_empty() {
                    d = d.help("modules are looked up in the directories of `modulepath` in project.yml");
                }
                d = crate::suggest::suggest(d, self.file, import.module.span, &suggestions);
                self.error(d);
            }
            let visible = import.alias.as_ref().map_or_else(|| module.clone(), |a| a.name.clone());
            if let Some(first) = seen.get(&visible) {
                let d = Diagnostic::new(&codes::DUPLICATE_IMPORT, format!("`{visible}` is imported twice"))
                    .primary(self.file, import.span, "second import of this name")
                    .secondary(self.file, *first, "first imported here")
                    .help("remove one of the imports, or give one a different `as` name");
                self.error(d);
            } else {
                seen.insert(visible, import.span);
            }
            if loaded.cycles.iter().any(|(from, to)| from == self.scope.namespace && *to == module) {
                let d = Diagnostic::new(&codes::IMPORT_CYCLE, format!("importing `{module}` closes an import cycle"))
                    .primary(self.file, import.module.span, "this module (transitively) imports this file")
                    .note("cycles are allowed, but every module in one is loaded whenever any of them is");
                self.error(d);
            }
        }
    }

    pub(crate) fn check_declarations(&mut self, file: &'a File) {
        // Entities, typedefs and implementations share one table per namespace.
        let mut defined: IndexMap<&str, Span> = IndexMap::new();
        let mut relation_ordinal = 0;
        let mut resource_declarations = IndexMap::new();
        for item in &file.items {
            let name = match item {
                Item::Entity(e) => Some(&e.name),
                Item::Typedef(t) => Some(&t.name),
                Item::Implementation(i) => Some(&i.name),
                _ => None,
            };
            let mut first_definition = true;
            if let Some(name) = name {
                if let Some(first) = defined.get(name.name.as_str()) {
                    first_definition = false;
                    let d = Diagnostic::new(
                        &codes::DUPLICATE_DEFINITION,
                        format!("`{}` is already defined in namespace `{}`", name.name, self.scope.namespace),
                    )
                    .primary(self.file, name.span, "defined again here")
                    .secondary(self.file, *first, "first defined here")
                    .note("entities, typedefs and implementations share one table per namespace");
                    self.error(d);
                } else {
                    defined.insert(&name.name, name.span);
                }
            }
            match item {
                Item::Entity(entity) => self.check_entity(entity, first_definition),
                Item::Typedef(typedef) => self.check_typedef(typedef),
                Item::Relation(relation) => {
                    self.check_relation(relation, relation_ordinal);
                    relation_ordinal += 1;
                }
                Item::Index(index) => self.check_index(index),
                Item::Resource(decl) => self.check_resource_decl(decl, &mut resource_declarations),
                Item::Implementation(implementation) => {
                    self.resolve_entity(&implementation.entity);
                }
                Item::Implement(implement) => self.check_implement(implement),
                Item::Import(_) | Item::Stmt(_) => {}
            }
        }
    }

    /// Resolves a reference that must name an entity, reporting why it does not.
    pub(crate) fn resolve_entity(&mut self, written: &TypeRef) -> Option<String> {
        self.resolve_kind(&written.text(), written.span, TypeKind::Entity, "entity")
    }

    /// Resolves a name that must be of one kind, reporting why it is not.
    pub(crate) fn resolve_kind(&mut self, written: &str, span: Span, expected: TypeKind, what: &str) -> Option<String> {
        match self.scope.resolve_type(&self.index, written) {
            Ok(Resolved { fqn, kind }) if kind == expected => Some(fqn),
            Ok(Resolved { fqn, kind }) => {
                let d = Diagnostic::new(
                    &codes::WRONG_KIND_OF_NAME,
                    format!("`{fqn}` is {}, not {}", kind.describe(), expected.describe()),
                )
                .primary(self.file, span, format!("{} is needed here", expected.describe()));
                self.error(d);
                None
            }
            Err(error) => {
                let d = self.resolve_error(&error, span, what);
                self.error(d);
                None
            }
        }
    }

    fn check_entity(&mut self, entity: &'a Entity, first_definition: bool) {
        let fqn = format!("{}::{}", self.scope.namespace, entity.name.name);
        let mut parents: Vec<(String, Span)> = Vec::new();
        for parent in &entity.parents {
            let Some(resolved) = self.resolve_entity(parent) else { continue };
            if let Some((_, first)) = parents.iter().find(|(p, _)| *p == resolved) {
                let d = Diagnostic::new(&codes::DUPLICATE_PARENT, format!("`{resolved}` is listed twice as a parent"))
                    .primary(self.file, parent.span, "listed again here")
                    .secondary(self.file, *first, "first listed here");
                self.error(d);
                continue;
            }
            if first_definition && (resolved == fqn || self.index.is_subtype(&resolved, &fqn)) {
                let d = Diagnostic::new(
                    &codes::INHERITANCE_CYCLE,
                    format!("entity `{}` can not be its own parent", entity.name.name),
                )
                .primary(self.file, parent.span, format!("`{resolved}` extends `{fqn}`"))
                .help("remove one of the `extends` that form the cycle");
                self.error(d);
            }
            parents.push((resolved, parent.span));
        }
        let mut own: IndexMap<&str, &Attribute> = IndexMap::new();
        for attribute in &entity.attributes {
            let ty = self.check_attribute_type(attribute);
            if let Some(first) = own.get(attribute.name.name.as_str()) {
                let d = Diagnostic::new(
                    &codes::DUPLICATE_ATTRIBUTE,
                    format!("attribute `{}` already exists on entity `{}`", attribute.name.name, entity.name.name),
                )
                .primary(self.file, attribute.name.span, "declared again here")
                .secondary(self.file, first.name.span, "first declared here");
                self.error(d);
                continue;
            }
            own.insert(&attribute.name.name, attribute);
            if first_definition {
                self.check_inherited_compatibility(&parents, attribute, ty.as_ref());
            }
            if let (Some(ty), Some(AttrDefault::Value(default))) = (&ty, &attribute.default) {
                self.check_default(attribute, ty, default);
            }
        }
        if first_definition {
            self.check_parents_agree(entity, &parents, &own);
        }
    }

    /// The declared type of an attribute, or `None` when it does not resolve (reported).
    fn check_attribute_type(&mut self, attribute: &Attribute) -> Option<ValueType> {
        let (written, span) = match &attribute.ty.base {
            AttrBase::Dict => ("dict".to_owned(), attribute.ty.span),
            AttrBase::Named(path) => (path.text(), path.span),
        };
        let base = if let Some(primitive) = BaseType::primitive(&written) {
            if written == "number" {
                self.deprecated_number(span);
            }
            primitive
        } else {
            match self.scope.resolve_type(&self.index, &written) {
                Ok(Resolved { fqn, kind: TypeKind::Typedef }) => BaseType::Typedef(fqn),
                Ok(Resolved { fqn, kind }) => {
                    let mut d = Diagnostic::new(
                        &codes::WRONG_KIND_OF_NAME,
                        format!("`{fqn}` is {}, not a type an attribute can have", kind.describe()),
                    )
                    .primary(self.file, span, "a primitive type or typedef is needed here");
                    if kind == TypeKind::Entity {
                        d = d.help("to link to instances of an entity, declare a relation");
                    }
                    self.error(d);
                    return None;
                }
                Err(error) => {
                    let mut d = self.resolve_error(&error, span, "type");
                    // The primitive types are not in any namespace's table: suggest them here.
                    if d.help.is_empty() {
                        const PRIMITIVES: [&str; 5] = ["string", "int", "float", "bool", "dict"];
                        let close = crate::suggest::similar(&written, PRIMITIVES.into_iter());
                        d = crate::suggest::suggest(d, self.file, span, &close);
                    }
                    if written == "any" {
                        d = d.note("`any` is only used in plugin signatures; it is not a type of the language");
                    }
                    self.error(d);
                    return None;
                }
            }
        };
        Some(ValueType { base, list: attribute.ty.list, nullable: attribute.ty.nullable })
    }

    pub(crate) fn deprecated_number(&mut self, span: Span) {
        let d = Diagnostic::new(&codes::DEPRECATED, "the type `number` is deprecated")
            .primary(self.file, span, "deprecated")
            .help("use `int` or `float`");
        self.error(d);
    }

    /// Re-declaring an inherited attribute is allowed only with exactly the same type.
    fn check_inherited_compatibility(
        &mut self,
        parents: &[(String, Span)],
        attribute: &Attribute,
        ty: Option<&ValueType>,
    ) {
        for (parent, _) in parents {
            let Some(inherited) = self.index.attribute(parent, &attribute.name.name) else { continue };
            let compatible = match (&inherited.kind, ty) {
                (AttrKind::Value { ty: theirs, .. }, Some(ours)) => theirs == ours,
                (AttrKind::Value { .. }, None) => true,
                (AttrKind::Relation { .. }, _) => false,
            };
            if !compatible {
                let d = Diagnostic::new(
                    &codes::INCOMPATIBLE_ATTRIBUTE,
                    format!(
                        "attribute `{}` is inherited from `{}` with type `{}`",
                        attribute.name.name,
                        inherited.owner,
                        inherited.describe_type()
                    ),
                )
                .primary(self.file, attribute.ty.span, "re-declared with another type")
                .help(
                    "an inherited attribute may only be re-declared with exactly the same type (to change its default)",
                );
                self.error(d);
                return;
            }
        }
    }

    /// Two parents that declare the same attribute must agree on its type.
    fn check_parents_agree(&mut self, entity: &Entity, parents: &[(String, Span)], own: &IndexMap<&str, &Attribute>) {
        // A parent that another parent extends brings nothing the other does not bring too
        // (`extends B, A` where `B extends A`): only the others can disagree. Skipping them keeps
        // a diamond-shaped hierarchy from comparing every inherited attribute at every level.
        let index = &self.index;
        let independent: Vec<&(String, Span)> =
            parents.iter().filter(|(p, _)| !parents.iter().any(|(q, _)| q != p && index.is_subtype(q, p))).collect();
        if independent.len() < 2 {
            return;
        }
        let mut seen: IndexMap<String, (&str, &AttrDef)> = IndexMap::new();
        for (parent, span) in independent {
            let names: Vec<String> = self.index.attribute_names(parent).map(str::to_owned).collect();
            for name in names {
                if own.contains_key(name.as_str()) {
                    continue;
                }
                let Some(def) = self.index.attribute(parent, &name) else { continue };
                match seen.get(&name) {
                    Some((first_parent, first)) if first.owner != def.owner => {
                        // Only plain attributes must agree; relations of the same name from two
                        // parents are accepted by the reference.
                        let same_type = match (&first.kind, &def.kind) {
                            (AttrKind::Value { ty: a, .. }, AttrKind::Value { ty: b, .. }) => a == b,
                            _ => true,
                        };
                        if !same_type {
                            let d = Diagnostic::new(
                                &codes::INCOMPATIBLE_ATTRIBUTE,
                                format!(
                                    "entity `{}` inherits attribute `{name}` with different types from `{first_parent}` and `{parent}`",
                                    entity.name.name
                                ),
                            )
                            .primary(self.file, *span, format!("`{name}` is `{}` here", def.describe_type()))
                            .note(format!("`{first_parent}` declares it as `{}`", first.describe_type()));
                            let mut d = d;
                            for declared in [first, def] {
                                if let Some(span) = self.declaration_span(declared) {
                                    d = d.secondary(self.file, span, "declared here");
                                }
                            }
                            self.error(d);
                        }
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(name, (parent, def));
                    }
                }
            }
        }
    }

    fn check_default(&mut self, attribute: &Attribute, ty: &ValueType, default: &modelc_syntax::ast::Expr) {
        let Some(value) = consteval::eval(default, None) else {
            let interpolated = match &default.kind {
                ExprKind::Str(s) => s.has_interpolation(),
                ExprKind::FStr(_) => true,
                _ => false,
            };
            if interpolated
                || matches!(
                    default.kind,
                    ExprKind::Var(_)
                        | ExprKind::Call { .. }
                        | ExprKind::Construct { .. }
                        | ExprKind::IndexLookup { .. }
                )
            {
                let d = Diagnostic::new(&codes::INVALID_DEFAULT, "an attribute default must be a constant")
                    .primary(self.file, default.span, "not a constant")
                    .help("assign computed values in an implementation or where the instance is constructed");
                self.error(d);
            }
            return;
        };
        let message = match consteval::validate(&self.index, ty, &value) {
            Ok(()) => return,
            Err(Misfit::Invalid(message) | Misfit::Violated { message, .. }) => message,
            Err(Misfit::Failed(never)) => match never {},
        };
        let mut d = Diagnostic::new(
            &codes::INVALID_DEFAULT,
            format!("the default of `{}` is not a valid `{ty}`", attribute.name.name),
        )
        .primary(self.file, default.span, message);
        if ty.base == BaseType::Float && matches!(value, modelc_value::Value::Int(_)) {
            d = d.help("float attributes need a float literal: write `1.0`, not `1`");
        }
        if value.is_null() {
            d = d.help(format!("make the attribute nullable: `{}? {}`", ty.base, attribute.name.name));
        }
        self.error(d);
    }

    fn check_relation(&mut self, relation: &'a Relation, ordinal: usize) {
        self.check_multiplicity(&relation.left.multiplicity, &relation.left.attribute.name);
        if let Some((attribute, multiplicity)) = &relation.right {
            self.check_multiplicity(multiplicity, &attribute.name);
        }
        let left = self.resolve_entity(&relation.left.entity);
        let right = self.resolve_entity(&relation.right_entity);
        if let Some(left) = &left {
            self.check_relation_end(left, &relation.left.attribute, ordinal, true);
        }
        if let (Some(right), Some((attribute, _))) = (&right, &relation.right) {
            let self_inverse =
                left.as_deref() == Some(right.as_str()) && attribute.name == relation.left.attribute.name;
            if !self_inverse {
                self.check_relation_end(right, attribute, ordinal, false);
            }
        }
    }

    /// A multiplicity with a negative bound, or a lower bound above the upper one: no number of
    /// values satisfies it (W0201; the reference accepts it until an instance has the relation).
    fn check_multiplicity(&mut self, multiplicity: &modelc_syntax::ast::Multiplicity, attribute: &str) {
        let bound = |text: &Option<String>| text.as_deref().and_then(|t| t.parse::<i128>().ok());
        let lower = bound(&multiplicity.lower);
        let upper = if multiplicity.range { bound(&multiplicity.upper) } else { lower };
        let problem = if lower.is_some_and(|l| l < 0) || upper.is_some_and(|u| u < 0) {
            "a bound is negative".to_owned()
        } else if let (Some(l), Some(u)) = (lower, upper)
            && l > u
        {
            format!("the lower bound {l} is above the upper bound {u}")
        } else {
            return;
        };
        let d = Diagnostic::new(
            &codes::IMPOSSIBLE_MULTIPLICITY,
            format!("no number of values satisfies the multiplicity of `{attribute}`: {problem}"),
        )
        .primary(self.file, multiplicity.span, "impossible multiplicity")
        .help("bounds are 0 or more, lower first: `[1:3]` holds one to three values, `[1:]` one or more");
        self.error(d);
    }

    fn check_relation_end(&mut self, entity: &str, attribute: &modelc_syntax::ast::Ident, ordinal: usize, left: bool) {
        let ours = Origin::Relation { namespace: self.scope.namespace.to_owned(), ordinal, left };
        let Some(existing) = self.index.attribute(entity, &attribute.name) else { return };
        if existing.origin == ours {
            return;
        }
        let message = if existing.owner == entity {
            format!("attribute `{}` already exists on entity `{entity}`", attribute.name)
        } else {
            format!(
                "attribute name `{}` is already defined in `{}`, a parent of `{entity}`; unable to define the relation",
                attribute.name, existing.owner
            )
        };
        let mut d = Diagnostic::new(&codes::DUPLICATE_ATTRIBUTE, message)
            .primary(self.file, attribute.span, "this relation end reuses the name")
            .help("give the relation end another name");
        if let Some(span) = self.declaration_span(existing) {
            d = d.secondary(self.file, span, "first declared here");
        }
        self.error(d);
    }

    /// Where an attribute or relation end is declared, when it is in the file being checked.
    fn declaration_span(&self, declared: &AttrDef) -> Option<Span> {
        match &declared.origin {
            Origin::Attribute { ordinal } => {
                let (namespace, name) = declared.owner.rsplit_once("::")?;
                if namespace != self.scope.namespace {
                    return None;
                }
                self.ast.items.iter().find_map(|item| match item {
                    Item::Entity(e) if e.name.name == name => e.attributes.get(*ordinal).map(|a| a.name.span),
                    _ => None,
                })
            }
            Origin::Relation { namespace, ordinal, left } => {
                if namespace != self.scope.namespace {
                    return None;
                }
                let relation = self
                    .ast
                    .items
                    .iter()
                    .filter_map(|item| if let Item::Relation(r) = item { Some(r) } else { None })
                    .nth(*ordinal)?;
                if *left { Some(relation.left.attribute.span) } else { relation.right.as_ref().map(|(a, _)| a.span) }
            }
        }
    }

    fn check_typedef(&mut self, typedef: &Typedef) {
        let written = typedef.base.text();
        if PRIMITIVES.contains(&typedef.name.name.as_str()) {
            let d = Diagnostic::new(
                &codes::BUILTIN_TYPE_SHADOWED,
                format!("typedef `{}` has the name of a built-in type", typedef.name.name),
            )
            .primary(self.file, typedef.name.span, "this typedef can never be used by this name")
            .note("built-in type names are resolved before user types");
            self.error(d);
        }
        if BaseType::primitive(&written).is_some() {
            if written == "number" {
                self.deprecated_number(typedef.base.span);
            }
            return;
        }
        match self.scope.resolve_type(&self.index, &written) {
            Ok(Resolved { kind: TypeKind::Typedef, .. }) => {}
            Ok(Resolved { fqn, kind }) => {
                let d = Diagnostic::new(
                    &codes::WRONG_KIND_OF_NAME,
                    format!("`{fqn}` is {}; a typedef refines a primitive type or another typedef", kind.describe()),
                )
                .primary(self.file, typedef.base.span, "not a primitive type or typedef");
                self.error(d);
            }
            Err(error) => {
                let d = self.resolve_error(&error, typedef.base.span, "type");
                self.error(d);
            }
        }
    }

    fn check_index(&mut self, index: &Index) {
        let Some(entity) = self.resolve_entity(&index.entity) else { return };
        for attribute in &index.attributes {
            let Some(def) = self.index.attribute(&entity, &attribute.name) else {
                if self.index.is_incomplete(&entity) {
                    continue;
                }
                let names: Vec<&str> = self.index.attribute_names(&entity).collect();
                let mut d = Diagnostic::new(
                    &codes::UNKNOWN_ATTRIBUTE,
                    format!("attribute `{}` referenced in the index is not defined in `{entity}`", attribute.name),
                )
                .primary(self.file, attribute.span, "no such attribute");
                let suggestions = crate::suggest::similar(&attribute.name, names.into_iter());
                d = crate::suggest::suggest(d, self.file, attribute.span, &suggestions);
                self.error(d);
                continue;
            };
            let problem = match &def.kind {
                // A typed list (`string[]`) holds several values; a bare `list` or `dict`
                // attribute holds one value (that happens to be a list), which the reference
                // accepts in an index.
                AttrKind::Value { ty, .. } if ty.list => {
                    Some(("list attributes", format!("`{}` is a list", attribute.name)))
                }
                AttrKind::Relation { bounds, .. } if bounds.is_optional() => {
                    Some(("optional relations", format!("`{}` is an optional relation [0:1]", attribute.name)))
                }
                AttrKind::Relation { bounds, .. } if !bounds.is_single() => {
                    Some(("list relations", format!("`{}` relates to many instances", attribute.name)))
                }
                _ => None,
            };
            if let Some((kind, problem)) = problem {
                let d = Diagnostic::new(&codes::INVALID_INDEX, format!("an index can not contain {kind}"))
                    .primary(self.file, attribute.span, problem)
                    .note("index attributes identify one instance: they must hold exactly one value");
                self.error(d);
            }
        }
    }

    fn check_implement(&mut self, implement: &Implement) {
        let Some(entity) = self.resolve_entity(&implement.entity) else {
            for reference in &implement.implementations {
                if let ImplRef::Named(path) = reference {
                    self.resolve_implementation(path);
                }
            }
            return;
        };
        for reference in &implement.implementations {
            let ImplRef::Named(path) = reference else { continue };
            let Some(implementation) = self.resolve_implementation(path) else { continue };
            let Some(for_entity) = self.index.implementation_for(&implementation) else { continue };
            if !self.index.is_subtype(&entity, for_entity) {
                let d = Diagnostic::new(
                    &codes::IMPLEMENTATION_TYPE_MISMATCH,
                    format!("`{implementation}` can not be used as an implementation for `{entity}`"),
                )
                .primary(self.file, path.span, format!("this implementation is for `{for_entity}`"))
                .note("an implementation can be used for its own entity and its subtypes");
                self.error(d);
            }
        }
    }

    fn resolve_implementation(&mut self, path: &modelc_syntax::ast::Path) -> Option<String> {
        self.resolve_kind(&path.text(), path.span, TypeKind::Implementation, "implementation")
    }
}
