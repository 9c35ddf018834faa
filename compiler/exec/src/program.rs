//! What execution needs from the lowered program, gathered once: each loaded file with its
//! namespace and lowered form, and tables by id: implementation bodies, the `implement`
//! statements of each entity, attribute defaults, typedef constraints, and where each file's
//! qualified variables live.

use std::collections::HashMap;

use indexmap::IndexMap;
use modelc_diagnostics::{FileId, Span};
use modelc_sema::ModelIndex;
use modelc_sema::hir::{Block, ConstraintHir, EntityId, EntityRef, FileHir, GlobalId, ImplementHir, ImplementationId};
use modelc_value::Value;

/// One loaded file.
pub struct Unit<'a> {
    pub namespace: String,
    pub file_id: FileId,
    /// How messages name the file.
    pub display_name: String,
    pub text: &'a str,
    pub hir: &'a FileHir,
}

/// An `implement` statement, the unit it is written in, and the implementations it names.
pub struct ImplementDef<'a> {
    pub unit: usize,
    pub statement: &'a ImplementHir,
    pub implementations: Vec<ImplementationId>,
}

/// The own defaults of an entity, with the unit that declares them.
type OwnDefaults<'a> = (usize, &'a [(String, Option<modelc_sema::hir::Constant>)]);

/// The program-wide tables execution reads.
pub struct Program<'a> {
    pub units: Vec<Unit<'a>>,
    pub index: &'a ModelIndex,
    /// By implementation id: its body and the unit it is in.
    pub implementations: Vec<Option<(usize, &'a Block)>>,
    /// By entity id: its `implement` statements, in load order.
    pub implements: Vec<Vec<ImplementDef<'a>>>,
    /// `(entity, attribute)` → where the attribute or relation end is declared.
    pub declarations: HashMap<(String, String), (FileId, Span)>,
    /// Typedef → its constraint, with the unit it is in.
    pub constraints: IndexMap<String, (usize, &'a ConstraintHir)>,
    /// Per unit, where its lines start (messages name lines): counted on first use, so a
    /// run that names no line of a file never reads its text.
    lines: Vec<std::sync::OnceLock<modelc_diagnostics::LineIndex>>,
    /// By entity id: its own attribute defaults.
    defaults: Vec<Option<OwnDefaults<'a>>>,
    /// Per unit, by [`GlobalId`]: the unit and slot of each qualified variable it reads
    /// (`None` when that namespace is not loaded).
    globals: Vec<Vec<Option<(u32, u32)>>>,
    /// Per unit, by [`EntityRef`]: the entity's id. Lowering and the type table come from the
    /// same revision, so every entity a file names is in the table.
    entities: Vec<Vec<EntityId>>,
}

/// How many files or entities are gathered between two looks at a cancel flag: a few hundred
/// microseconds of work on a large project.
pub(crate) const GATHER_POLL: usize = 32;

impl<'a> Program<'a> {
    pub fn new(units: Vec<Unit<'a>>, index: &'a ModelIndex) -> Program<'a> {
        Program::unless_cancelled(units, index, &|| false).expect("a build that cannot be cancelled completes")
    }

    /// [`Program::new`], looking at `cancelled` every few files: `None` when it said so (the
    /// language server's worker builds a program that the next edit makes useless).
    pub fn unless_cancelled(
        units: Vec<Unit<'a>>,
        index: &'a ModelIndex,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Program<'a>> {
        let entities = index.entities.len();
        let mut program = Program {
            implementations: vec![None; index.implementations.len()],
            implements: (0..entities).map(|_| Vec::new()).collect(),
            defaults: vec![None; entities],
            constraints: IndexMap::new(),
            declarations: HashMap::new(),
            lines: units.iter().map(|_| std::sync::OnceLock::new()).collect(),
            globals: Vec::new(),
            entities: Vec::with_capacity(units.len()),
            units,
            index,
        };
        for (u, unit) in program.units.iter().enumerate() {
            if u % GATHER_POLL == 0 && cancelled() {
                return None;
            }
            let hir = unit.hir;
            let entities: Vec<EntityId> = hir.entity_names.iter().map(|fqn| table_entity(index, fqn)).collect();
            let implementation_ids: Vec<Option<ImplementationId>> =
                hir.implementation_names.iter().map(|fqn| index.implementation_id(fqn)).collect();
            let implementation_id = |r: modelc_sema::hir::ImplementationRef| implementation_ids[r.0 as usize];
            for implementation in &hir.implementations {
                let Some(id) = implementation_id(implementation.id) else { continue };
                program.implementations[id.0 as usize].get_or_insert((u, &implementation.body));
            }
            for typedef in &hir.typedefs {
                program.constraints.entry(typedef.fqn.clone()).or_insert((u, &typedef.constraint));
            }
            for implement in &hir.implements {
                let Some(entity) = implement.entity else { continue };
                let implementations = implement.implementations.iter().filter_map(|r| implementation_id(*r)).collect();
                program.implements[entities[entity.0 as usize].0 as usize].push(ImplementDef {
                    unit: u,
                    statement: implement,
                    implementations,
                });
            }
            for entity in &hir.entities {
                program.defaults[entities[entity.entity.0 as usize].0 as usize].get_or_insert((u, &entity.defaults));
            }
            for declaration in &hir.declarations {
                let entity = hir.entity_name(declaration.entity).to_owned();
                program
                    .declarations
                    .entry((entity, declaration.attribute.clone()))
                    .or_insert((unit.file_id, declaration.span));
            }
            program.entities.push(entities);
        }
        let slots: HashMap<&str, usize> =
            program.units.iter().enumerate().map(|(u, unit)| (unit.namespace.as_str(), u)).collect();
        program.globals = program
            .units
            .iter()
            .map(|unit| {
                unit.hir
                    .globals
                    .iter()
                    .map(|(namespace, name)| {
                        let target = *slots.get(namespace.as_str())?;
                        let locals = &program.units[target].hir.top_level.locals;
                        let slot = locals.iter().position(|local| local.text == *name)?;
                        Some((target as u32, slot as u32))
                    })
                    .collect()
            })
            .collect();
        Some(program)
    }

    /// The 1-based line of a byte offset in a unit.
    pub fn line_of(&self, unit: usize, offset: u32) -> usize {
        self.lines[unit].get_or_init(|| modelc_diagnostics::LineIndex::new(self.units[unit].text)).line(offset) as usize
    }

    /// The id of entity `entity` of `unit`.
    pub(crate) fn entity(&self, unit: usize, entity: EntityRef) -> EntityId {
        self.entities[unit][entity.0 as usize]
    }

    /// Where qualified variable `id` of `unit` lives: its unit and slot.
    pub(crate) fn global(&self, unit: usize, id: GlobalId) -> Option<(u32, u32)> {
        self.globals.get(unit)?.get(id.0 as usize).copied().flatten()
    }

    /// The defaults entity `id` declares itself (not inherited ones), as written.
    pub fn own_defaults(&self, id: usize) -> &'a [(String, Option<modelc_sema::hir::Constant>)] {
        self.defaults.get(id).copied().flatten().map_or(&[], |(_, defaults)| defaults)
    }

    /// The defaults that apply to a new instance of `entity`: own declarations win, then the
    /// parents, left-most first; `= undef` removes an inherited default.
    pub fn defaults_of(&self, entity: &str) -> Vec<(&'a str, Value)> {
        let mut decided: IndexMap<&'a str, Option<Value>> = IndexMap::new();
        for def in self.index.ancestry(entity) {
            let Some(id) = self.index.entity_id(&def.fqn) else { continue };
            let Some((_, defaults)) = self.defaults[id.0 as usize] else { continue };
            for (name, value) in defaults {
                decided.entry(name.as_str()).or_insert(value.as_ref().map(|c| c.0.clone()));
            }
        }
        decided.into_iter().filter_map(|(n, v)| v.map(|v| (n, v))).collect()
    }

    /// The implement statements that apply to an instance of exactly `entity`, following
    /// `using parents` to the parents' own statements (spec §4.7).
    pub fn implements_of(&self, entity: EntityId) -> Vec<&ImplementDef<'a>> {
        let mut out: Vec<&ImplementDef<'a>> = Vec::new();
        let mut stack = vec![entity];
        let mut seen: Vec<EntityId> = Vec::new();
        while let Some(current) = stack.pop() {
            if seen.contains(&current) {
                continue;
            }
            seen.push(current);
            let Some(defs) = self.implements.get(current.0 as usize) else { continue };
            for def in defs {
                out.push(def);
                if def.statement.parents
                    && let Some(entity_def) = self.index.entities.get_index(current.0 as usize).map(|(_, d)| d)
                {
                    stack.extend(entity_def.parents.iter().rev().filter_map(|p| self.index.entity_id(p)));
                }
            }
        }
        out
    }

    /// The body of an implementation and the unit it is written in.
    pub(crate) fn implementation(&self, id: ImplementationId) -> Option<(usize, &'a Block)> {
        self.implementations.get(id.0 as usize).copied().flatten()
    }
}

/// The id of an entity a lowered file names. Lowering reads the signatures of the same revision
/// as the table, so the entity is there; a lowering out of step with the table is a bug in the
/// caller, which this reports rather than executing a different entity.
fn table_entity(index: &ModelIndex, fqn: &str) -> EntityId {
    index.entity_id(fqn).unwrap_or_else(|| panic!("entity {fqn} is lowered but not in the type table"))
}
