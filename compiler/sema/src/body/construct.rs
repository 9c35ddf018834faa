//! Constructors and index lookups: the entity constructed, the attributes given, `**` keys,
//! and the index attributes a constructor or lookup must name.

use super::*;

impl<'a> Checker<'a> {
    /// A constructor of `entity` (lowering found it, as written or among the relation's
    /// subtypes), written at `entity_span`.
    pub(super) fn check_construct(
        &mut self,
        expr: &'a Expr,
        entity: &'a str,
        entity_span: Span,
        args: &'a [ConstructArg],
        hint: Option<Hint<'a>>,
    ) -> Inferred {
        let entity = entity.to_owned();
        let short = as_written(&entity);
        if !self.index.may_be_implemented(&entity) {
            let d = Diagnostic::new(
                &codes::NO_IMPLEMENTATION,
                format!("unable to select implementation for entity {entity}: no `implement` statement names it"),
            )
            .primary(self.file, entity_span, "constructed here");
            // A parent that has implementations: they are not inherited unless asked for.
            let parents = self.index.ancestors(&entity).iter().any(|a| self.index.may_be_implemented(a));
            let d = if parents {
                d.help(format!("its parents' implementations are not inherited: add `implement {short} using parents` to use them, or `implement {short} using std::none`"))
            } else {
                d.help(format!("add `implement {short} using std::none` if it needs no implementation"))
            };
            self.runtime(d);
        }
        if self.index.is_subtype(&entity, "std::Resource")
            && !self.index.resource_has_identity(&entity)
            && self.without_identity.insert(entity.clone())
        {
            let first = self.index.attribute_names(&entity).next().unwrap_or("name").to_owned();
            let d = Diagnostic::new(
                &codes::RESOURCE_WITHOUT_IDENTITY,
                format!("instances of `{entity}` are resources, but nothing identifies them: they are not exported"),
            )
            .primary(self.file, entity_span, "a resource without an id, not exported")
            .note(format!("`{entity}` extends std::Resource, has no index and no resource declaration with an `id`"))
            .help(format!("add an index (`index {short}({first})`) or declare the id: `resource {short}(id={first})`"));
            self.diagnostics.push(d);
        }
        if let Some(Hint { attribute: Some(attribute), direct: true }) = hint {
            let expected = match &attribute.kind {
                AttrKind::Relation { target, .. } if target.is_empty() => None,
                AttrKind::Relation { target, .. } => (!self.index.is_subtype(&entity, target)).then(|| target.clone()),
                AttrKind::Value { ty, .. } => Some(ty.to_string()),
            };
            if let Some(expected) = expected {
                let d = Diagnostic::new(
                    &codes::TYPE_MISMATCH,
                    format!("can not assign a value of type `{entity}` to `{}` of type `{expected}`", attribute.name),
                )
                .primary(self.file, entity_span, format!("an instance of `{entity}`"));
                self.error(d);
            }
        }
        let mut given: Vec<&str> = Vec::new();
        let mut has_splat = false;
        for arg in args {
            match arg {
                ConstructArg::Keyword { name, value, .. } => {
                    given.push(&name.text);
                    let Some(def) = self.index.attribute(&entity, &name.text) else {
                        if self.index.is_incomplete(&entity) {
                            self.check_expr(value, None);
                            continue;
                        }
                        let d = self.unknown_attribute(&entity, name);
                        self.error(d);
                        self.check_expr(value, None);
                        continue;
                    };
                    self.check_shell_syntax(&entity, &name.text, value);
                    // The reference checks the types of nested constructors statically, except
                    // for index attributes, which it evaluates before the instance exists.
                    let in_index = self.index.indexes(&entity).iter().any(|i| i.contains(&name.text));
                    let inferred = self.check_expr(value, Some(Hint { attribute: Some(def), direct: !in_index }));
                    self.check_value_fits(def, value, &inferred, super::Setting::First);
                }
                ConstructArg::Splat(value) => {
                    has_splat = true;
                    let inferred = self.check_expr(value, None);
                    self.check_splat(value, &inferred);
                    self.check_splat_keys(&entity, value, args);
                }
                ConstructArg::Positional(value) => {
                    // Reported by the parser.
                    self.check_expr(value, None);
                }
            }
        }
        if !has_splat {
            self.check_index_attributes_given(expr, &entity, &given, hint);
        }
        Inferred::definite(StaticType::Instance(entity))
    }

    /// A constructor or index lookup of a name lowering found no entity for: resolved again,
    /// to say why. An unqualified constructor in a relation argument that is not in scope may
    /// name several subtypes of the relation's type (spec §4.5; lowering found them): that is
    /// ambiguous.
    pub(super) fn check_unknown_entity(&mut self, written: &str, span: Span, constructor: bool, candidates: &[String]) {
        if !constructor {
            self.resolve_kind(written, span, TypeKind::Entity, "entity");
            return;
        }
        if candidates.len() > 1 {
            let list: Vec<String> = candidates.iter().map(|m| format!("`{m}`")).collect();
            let d = Diagnostic::new(&codes::AMBIGUOUS_TYPE, format!("`{written}` could be any of {}", list.join(", ")))
                .primary(self.file, span, "ambiguous")
                .help("qualify the name with its namespace");
            self.error(d);
            return;
        }
        match self.scope.resolve_type(&self.index, written) {
            Ok(Resolved { kind: TypeKind::Entity, .. }) => {}
            Ok(Resolved { fqn, kind }) => {
                let d = Diagnostic::new(
                    &codes::WRONG_KIND_OF_NAME,
                    format!("`{fqn}` is {}, not an entity", kind.describe()),
                )
                .primary(self.file, span, "only entities can be constructed");
                self.error(d);
            }
            Err(error) => {
                let d = self.resolve_error(&error, span, "entity");
                self.error(d);
            }
        }
    }

    /// `**d` where `d` is a constant dict: its keys must be attributes not given explicitly.
    pub(super) fn check_splat_keys(&mut self, entity: &str, value: &Expr, args: &[ConstructArg]) {
        let here = self.here();
        let Some(modelc_value::Value::Dict(entries)) = self.constant_value(value, 0, here) else { return };
        for key in entries.keys() {
            let explicit = args.iter().any(|a| matches!(a, ConstructArg::Keyword { name, .. } if name.text == *key));
            if explicit {
                let d = Diagnostic::new(
                    &codes::DUPLICATE_KEYWORD_ARGUMENT,
                    format!("attribute `{key}` is set twice in this constructor of `{entity}`"),
                )
                .primary(self.file, value.span, format!("`**` also sets `{key}`"));
                self.runtime(d);
            } else if self.index.attribute(entity, key).is_none() && !self.index.is_incomplete(entity) {
                let d =
                    Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("entity `{entity}` has no attribute `{key}`"))
                        .primary(self.file, value.span, format!("`**` sets `{key}`"));
                self.runtime(d);
            }
        }
    }

    pub(super) fn check_index_attributes_given(
        &mut self,
        expr: &Expr,
        entity: &str,
        given: &[&str],
        hint: Option<Hint<'a>>,
    ) {
        let inverse = match hint.and_then(|h| h.attribute).map(|a| &a.kind) {
            Some(AttrKind::Relation { inverse: Some(inverse), .. }) => Some(inverse.as_str()),
            _ => None,
        };
        // Sets, and the unknown names found once: a wide constructor of an entity with many
        // indexes compared every argument with every index attribute.
        let given_set: indexmap::IndexSet<&str> = given.iter().copied().collect();
        let unknown: Vec<&str> = given.iter().copied().filter(|g| self.index.attribute(entity, g).is_none()).collect();
        let mut missing: indexmap::IndexSet<String> = indexmap::IndexSet::new();
        for index in self.index.indexes(entity) {
            for attribute in index {
                let provided = given_set.contains(attribute.as_str())
                    || self.index.has_default(entity, attribute)
                    || inverse == Some(attribute.as_str());
                // `nme="x"` for `name`: the unknown attribute is reported, not the missing one.
                let misspelt =
                    unknown.iter().any(|g| !crate::suggest::similar(g, std::iter::once(attribute.as_str())).is_empty());
                if !provided && !misspelt {
                    missing.insert(attribute.clone());
                }
            }
        }
        // Like the reference: without a left-hand side, or with two or more missing, the
        // constructor can never work. With a left-hand side and one missing, the inverse of the
        // assigned relation may fill it when the statement runs.
        let static_error = hint.is_none() || missing.len() > 1;
        let unknown_target = hint.is_some_and(|h| h.attribute.is_none());
        for attribute in missing {
            let d = Diagnostic::new(
                &codes::MISSING_INDEX_ATTRIBUTE,
                format!("the constructor of `{entity}` does not set `{attribute}`, which is part of an index"),
            )
            .primary(self.file, expr.span, format!("`{attribute}` missing"))
            .help(format!(
                "pass `{attribute}=…`: instances of an indexed entity are identified by their index attributes"
            ));
            if static_error {
                self.error(d);
            } else if !unknown_target {
                self.runtime(d);
            }
        }
    }

    pub(super) fn check_index_lookup(&mut self, entity: &'a str, span: Span, args: &'a [Arg]) -> Inferred {
        self.check_args(args);
        let entity = entity.to_owned();
        if args.iter().any(|a| matches!(a, Arg::Splat(_))) {
            return Inferred::maybe_unknown(StaticType::Instance(entity));
        }
        let mut names: Vec<String> =
            args.iter().filter_map(|a| if let Arg::Keyword(n, _) = a { Some(n.text.clone()) } else { None }).collect();
        names.sort();
        let indexes = self.index.indexes(&entity);
        let declared_invalid = self
            .index
            .invalid_indexes(&entity)
            .iter()
            .any(|i| i.iter().all(|a| names.contains(a)) && i.len() == names.len());
        if !indexes.contains(&names) && !declared_invalid && !self.index.is_incomplete(&entity) {
            let known: Vec<String> = indexes.iter().map(|i| format!("({})", i.join(", "))).collect();
            let mut d = Diagnostic::new(
                &codes::NO_MATCHING_INDEX,
                format!("no index defined on `{entity}` for a lookup on ({})", names.join(", ")),
            )
            .primary(self.file, span, "no index with exactly these attributes");
            let written = self.text.get(span.range()).unwrap_or(&entity);
            d = if known.is_empty() {
                d.help(format!("declare one: `index {written}({})`", names.join(", ")))
            } else {
                d.note(format!("the indexes of `{entity}` are {}", known.join(", ")))
            };
            self.runtime(d);
        }
        Inferred::maybe_unknown(StaticType::Instance(entity))
    }
}

/// An entity as the model's own files write it: without `__config__::`.
fn as_written(entity: &str) -> &str {
    entity.strip_prefix("__config__::").unwrap_or(entity)
}
