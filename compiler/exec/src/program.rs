//! What execution needs from the source, gathered once: each loaded file with its namespace
//! and imports, and per entity the `implement` statements and attribute defaults as written.

use std::collections::HashMap;

use indexmap::IndexMap;
use modelc_db::ImportSummary;
use modelc_diagnostics::{FileId, Span};
use modelc_sema::ModelIndex;
use modelc_sema::index::TypeKind;
use modelc_sema::resolve::FileScope;
use modelc_syntax::ast::{AttrDefault, Constraint, Expr, File, ImplRef, Implement, Implementation, Item};

/// One loaded file.
pub struct Unit<'a> {
    pub namespace: String,
    pub file_id: FileId,
    /// How messages name the file.
    pub display_name: String,
    pub text: &'a str,
    pub file: &'a File,
    pub imports: &'a [ImportSummary],
}

impl Unit<'_> {
    pub fn scope(&self) -> FileScope<'_> {
        FileScope { namespace: &self.namespace, imports: self.imports }
    }
}

/// An `implement` statement, resolved.
pub struct ImplementDef<'a> {
    pub unit: usize,
    pub statement: &'a Implement,
    /// Fully qualified implementation names (without `parents`).
    pub implementations: Vec<String>,
    pub parents: bool,
}

/// An attribute default as an entity declares it: the attribute, the expression (`None` for
/// `= undef`), and the unit it is written in.
pub type OwnDefault<'a> = (String, Option<&'a Expr>, usize);

/// The source-level tables execution reads.
pub struct Program<'a> {
    pub units: Vec<Unit<'a>>,
    pub index: &'a ModelIndex,
    /// Implementation name → its definition and the unit it is in.
    pub implementations: IndexMap<String, (usize, &'a Implementation)>,
    /// Entity → its `implement` statements, in load order.
    pub implements: IndexMap<String, Vec<ImplementDef<'a>>>,
    /// `(entity, attribute)` → where the attribute or relation end is declared.
    pub declarations: HashMap<(String, String), (FileId, Span)>,
    /// Typedef → its constraint as written, with the unit it is in.
    pub constraints: IndexMap<String, (usize, &'a Constraint)>,
    /// Per unit, where its lines start (messages name lines).
    pub lines: Vec<modelc_diagnostics::LineIndex>,
    /// Entity → its own attribute defaults (`None` for `= undef`), with the defining unit.
    pub defaults: IndexMap<String, Vec<OwnDefault<'a>>>,
}

impl<'a> Program<'a> {
    pub fn new(units: Vec<Unit<'a>>, index: &'a ModelIndex) -> Program<'a> {
        let mut program = Program {
            units,
            index,
            implementations: IndexMap::new(),
            implements: IndexMap::new(),
            constraints: IndexMap::new(),
            declarations: HashMap::new(),
            lines: Vec::new(),
            defaults: IndexMap::new(),
        };
        program.lines = program.units.iter().map(|u| modelc_diagnostics::LineIndex::new(u.text)).collect();
        for (u, unit) in program.units.iter().enumerate() {
            let scope = unit.scope();
            for item in &unit.file.items {
                match item {
                    Item::Implementation(implementation) => {
                        let fqn = format!("{}::{}", unit.namespace, implementation.name.name);
                        program.implementations.entry(fqn).or_insert((u, implementation));
                    }
                    Item::Typedef(typedef) => {
                        let fqn = format!("{}::{}", unit.namespace, typedef.name.name);
                        program.constraints.entry(fqn).or_insert((u, &typedef.constraint));
                    }
                    Item::Implement(implement) => {
                        let Ok(entity) = scope.resolve_type(index, &implement.entity.text()) else { continue };
                        let mut implementations = Vec::new();
                        let mut parents = false;
                        for reference in &implement.implementations {
                            match reference {
                                ImplRef::Parents(_) => parents = true,
                                ImplRef::Named(path) => {
                                    if let Ok(r) = scope.resolve_type(index, &path.text())
                                        && r.kind == TypeKind::Implementation
                                    {
                                        implementations.push(r.fqn);
                                    }
                                }
                            }
                        }
                        program.implements.entry(entity.fqn).or_default().push(ImplementDef {
                            unit: u,
                            statement: implement,
                            implementations,
                            parents,
                        });
                    }
                    Item::Relation(relation) => {
                        let mut declare =
                            |entity: &modelc_syntax::ast::TypeRef, attribute: &modelc_syntax::ast::Ident| {
                                if let Ok(r) = scope.resolve_type(index, &entity.text()) {
                                    program
                                        .declarations
                                        .entry((r.fqn, attribute.name.clone()))
                                        .or_insert((unit.file_id, attribute.span));
                                }
                            };
                        declare(&relation.left.entity, &relation.left.attribute);
                        if let Some((attribute, _)) = &relation.right {
                            declare(&relation.right_entity, attribute);
                        }
                    }
                    Item::Entity(entity) => {
                        let fqn = format!("{}::{}", unit.namespace, entity.name.name);
                        for attribute in &entity.attributes {
                            program
                                .declarations
                                .entry((fqn.clone(), attribute.name.name.clone()))
                                .or_insert((unit.file_id, attribute.name.span));
                        }
                        if program.defaults.contains_key(&fqn) {
                            continue;
                        }
                        let defaults = entity
                            .attributes
                            .iter()
                            .filter_map(|a| match &a.default {
                                Some(AttrDefault::Value(e)) => Some((a.name.name.clone(), Some(e), u)),
                                Some(AttrDefault::Undef(_)) => Some((a.name.name.clone(), None, u)),
                                None => None,
                            })
                            .collect();
                        program.defaults.insert(fqn, defaults);
                    }
                    _ => {}
                }
            }
        }
        program
    }

    /// The 1-based line of a byte offset in a unit.
    pub fn line_of(&self, unit: usize, offset: u32) -> usize {
        self.lines[unit].line(offset) as usize
    }

    /// The defaults that apply to a new instance of `entity`: own declarations win, then the
    /// parents, left-most first; `= undef` removes an inherited default.
    pub fn defaults_of(&self, entity: &str) -> Vec<(String, &'a Expr, usize)> {
        let mut decided: IndexMap<String, Option<(&'a Expr, usize)>> = IndexMap::new();
        for def in self.index.ancestry(entity) {
            for (name, expr, unit) in self.defaults.get(&def.fqn).into_iter().flatten() {
                decided.entry(name.clone()).or_insert(expr.map(|e| (e, *unit)));
            }
        }
        decided.into_iter().filter_map(|(n, d)| d.map(|(e, u)| (n, e, u))).collect()
    }

    /// The implement statements that apply to an instance of exactly `entity`, following
    /// `using parents` to the parents' own statements (spec §4.7).
    pub fn implements_of(&self, entity: &str) -> Vec<&ImplementDef<'a>> {
        let mut out: Vec<&ImplementDef<'a>> = Vec::new();
        let mut stack = vec![entity.to_owned()];
        let mut seen: Vec<String> = Vec::new();
        while let Some(current) = stack.pop() {
            if seen.contains(&current) {
                continue;
            }
            seen.push(current.clone());
            let Some(defs) = self.implements.get(&current) else { continue };
            for def in defs {
                out.push(def);
                if def.parents
                    && let Some(entity_def) = self.index.entities.get(&current)
                {
                    stack.extend(entity_def.parents.iter().rev().cloned());
                }
            }
        }
        out
    }
}
