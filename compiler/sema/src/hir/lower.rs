//! Lowering one file's syntax tree into the resolved program (see the module above).
//!
//! Variables resolve the way execution's scopes nest: a block's own variables, then (in an
//! implementation or `when` condition) the instance's attributes and `self`, then the
//! enclosing scopes out to the file's top level. Each scope of the walk here is one scope at
//! run time, so a variable is found by counting scopes out and taking a slot.

use indexmap::IndexSet;
use modelc_syntax::ast;

use super::*;
use crate::index::TypeKind;
use crate::resolve::FileScope;

pub(super) fn lower_file<'a>(index: Signatures<'a>, scope: FileScope<'a>, file: &ast::File, text: &str) -> FileHir {
    let top_stmts: Vec<&ast::Stmt> = file
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Stmt(stmt) => Some(stmt),
            _ => None,
        })
        .collect();
    let top_level = declare(top_stmts.iter().copied(), None);
    let mut lowerer = Lowerer {
        index,
        scope,
        top: top_level.names.clone(),
        top_types: Vec::new(),
        with_top: true,
        stack: Vec::new(),
        globals: IndexSet::new(),
        entity_names: IndexSet::new(),
        implementation_names: IndexSet::new(),
        references: Vec::new(),
        variable_entities: Vec::new(),
        constructor_target: None,
    };
    lowerer.top_types = lowerer.local_types(top_stmts.iter().copied(), &top_level.names);
    let header = |span: modelc_diagnostics::Span| {
        let written = text.get(span.range()).unwrap_or_default();
        written.lines().next().unwrap_or_default().trim_end_matches(':').trim().to_owned()
    };
    let docstring = |doc: &Option<ast::StrLit>| doc.as_ref().and_then(ast::StrLit::as_constant);
    let mut definitions = Vec::new();
    let mut hir = FileHir::default();
    // Sets, not lists: a file may declare hundreds of thousands of each.
    let mut seen_entities = std::collections::HashSet::new();
    let mut stmts = Vec::new();
    for item in &file.items {
        match item {
            ast::Item::Stmt(stmt) => stmts.extend(lowerer.stmt(stmt)),
            ast::Item::Relation(relation) => {
                for annotation in &relation.annotations {
                    hir.annotations.push((stmts.len() as u32, lowerer.expr(annotation)));
                }
                let mut declare_end = |entity: &ast::TypeRef, attribute: &ast::Ident| {
                    if let Some(fqn) = lowerer.entity_fqn(entity) {
                        hir.declarations.push(Declaration {
                            entity: lowerer.entity_ref(&fqn),
                            attribute: attribute.name.clone(),
                            span: attribute.span,
                        });
                        let symbol = Symbol::Attribute { entity: fqn, name: attribute.name.clone() };
                        lowerer.references.push(Reference { span: attribute.span, symbol: symbol.clone() });
                        definitions.push(Definition {
                            symbol,
                            kind: DefinitionKind::Relation,
                            name: attribute.span,
                            full: relation.span,
                            header: header(relation.span),
                            docstring: docstring(&relation.docstring),
                        });
                    }
                };
                declare_end(&relation.left.entity, &relation.left.attribute);
                if let Some((attribute, _)) = &relation.right {
                    declare_end(&relation.right_entity, attribute);
                }
                lowerer.type_reference(&relation.left.entity);
                lowerer.type_reference(&relation.right_entity);
            }
            ast::Item::Implementation(implementation) => {
                // Every body is lowered, a duplicate's too (its checks still run); execution
                // runs the first of a name.
                let fqn = format!("{}::{}", scope.namespace, implementation.name.name);
                let id = lowerer.implementation_ref(&fqn);
                let symbol = Symbol::Implementation(fqn.clone());
                lowerer.references.push(Reference { span: implementation.name.span, symbol: symbol.clone() });
                definitions.push(Definition {
                    symbol,
                    kind: DefinitionKind::Implementation,
                    name: implementation.name.span,
                    full: implementation.span,
                    header: header(implementation.span),
                    docstring: docstring(&implementation.docstring),
                });
                lowerer.type_reference(&implementation.entity);
                let entity_name = lowerer.entity_fqn(&implementation.entity);
                let entity = entity_name.as_deref().map(|fqn| lowerer.entity_ref(fqn));
                lowerer.stack.push(Scope::Instance(entity_name));
                let (body, _) = lowerer.block(&implementation.body, None);
                lowerer.stack.pop();
                hir.implementations.push(ImplementationHir { id, name: name(&implementation.name), entity, body });
            }
            ast::Item::Implement(implement) => {
                lowerer.type_reference(&implement.entity);
                for reference in &implement.implementations {
                    if let ast::ImplRef::Named(path) = reference {
                        lowerer.path_reference(path);
                    }
                }
                let entity_name = lowerer.entity_fqn(&implement.entity);
                let entity = entity_name.as_deref().map(|fqn| lowerer.entity_ref(fqn));
                let mut implementations = Vec::new();
                let mut parents = false;
                for reference in &implement.implementations {
                    match reference {
                        ast::ImplRef::Parents(_) => parents = true,
                        ast::ImplRef::Named(path) => {
                            if let Ok(r) = scope.resolve_type(&lowerer.index, &path.text())
                                && r.kind == TypeKind::Implementation
                                && lowerer.index.implementation_for(&r.fqn).is_some()
                            {
                                implementations.push(lowerer.implementation_ref(&r.fqn));
                            }
                        }
                    }
                }
                lowerer.stack.push(Scope::Instance(entity_name));
                let condition = implement.condition.as_ref().map(|c| lowerer.expr(c));
                lowerer.stack.pop();
                hir.implements.push(ImplementHir { entity, implementations, parents, condition, span: implement.span });
            }
            ast::Item::Typedef(typedef) => {
                // Every constraint is lowered, a duplicate's too; execution uses the first.
                let fqn = format!("{}::{}", scope.namespace, typedef.name.name);
                let symbol = Symbol::Typedef(fqn.clone());
                lowerer.references.push(Reference { span: typedef.name.span, symbol: symbol.clone() });
                lowerer.path_reference(&typedef.base);
                definitions.push(Definition {
                    symbol,
                    kind: DefinitionKind::Typedef,
                    name: typedef.name.span,
                    full: typedef.span,
                    header: header(typedef.span),
                    docstring: docstring(&typedef.docstring),
                });
                let constraint = match &typedef.constraint {
                    ast::Constraint::Regex(regex) => ConstraintHir::Regex(regex.pattern.clone()),
                    ast::Constraint::Expr(expr) => ConstraintHir::Expr(lowerer.constraint(expr)),
                };
                hir.typedefs.push(TypedefHir { fqn, constraint, span: typedef.span });
            }
            ast::Item::Entity(entity) => {
                let fqn = format!("{}::{}", scope.namespace, entity.name.name);
                if !lowerer.index.entity(&fqn).exists {
                    continue;
                }
                let id = lowerer.entity_ref(&fqn);
                let symbol = Symbol::Entity(fqn.clone());
                lowerer.references.push(Reference { span: entity.name.span, symbol: symbol.clone() });
                definitions.push(Definition {
                    symbol,
                    kind: DefinitionKind::Entity,
                    name: entity.name.span,
                    full: entity.span,
                    header: header(entity.span),
                    docstring: docstring(&entity.docstring),
                });
                for parent in &entity.parents {
                    lowerer.type_reference(parent);
                }
                for attribute in &entity.attributes {
                    hir.declarations.push(Declaration {
                        entity: id,
                        attribute: attribute.name.name.clone(),
                        span: attribute.name.span,
                    });
                    let symbol = Symbol::Attribute { entity: fqn.clone(), name: attribute.name.name.clone() };
                    lowerer.references.push(Reference { span: attribute.name.span, symbol: symbol.clone() });
                    if let ast::AttrBase::Named(path) = &attribute.ty.base {
                        lowerer.path_reference(path);
                    }
                    definitions.push(Definition {
                        symbol,
                        kind: DefinitionKind::Attribute,
                        name: attribute.name.span,
                        full: attribute.span,
                        header: header(attribute.span),
                        docstring: None,
                    });
                }
                if !seen_entities.insert(id) {
                    continue;
                }
                let defaults = entity
                    .attributes
                    .iter()
                    .filter_map(|a| match &a.default {
                        Some(ast::AttrDefault::Value(e)) => Some((
                            a.name.name.clone(),
                            Some(Constant(crate::consteval::eval(e, None).unwrap_or(Value::Null))),
                        )),
                        Some(ast::AttrDefault::Undef(_)) => Some((a.name.name.clone(), None)),
                        None => None,
                    })
                    .collect();
                hir.entities.push(EntityHir { entity: id, defaults });
            }
            ast::Item::Index(index_item) => {
                lowerer.type_reference(&index_item.entity);
                if let Some(fqn) = lowerer.entity_fqn(&index_item.entity) {
                    for attribute in &index_item.attributes {
                        lowerer.attribute_reference(&fqn, attribute);
                    }
                }
            }
            ast::Item::Resource(resource) => lowerer.type_reference(&resource.entity),
            ast::Item::Import(_) => {}
        }
    }
    for (local, full) in top_level.locals.iter().zip(&top_level.statements) {
        let symbol = Symbol::Global { namespace: scope.namespace.to_owned(), name: local.text.clone() };
        definitions.push(Definition {
            symbol,
            kind: DefinitionKind::Variable,
            name: local.span,
            full: *full,
            header: header(*full),
            docstring: None,
        });
    }
    definitions.sort_by_key(|d| (d.full.start, d.name.start));
    hir.top_level = Block { locals: top_level.locals, stmts };
    hir.globals = lowerer.globals.into_iter().collect();
    hir.entity_names = lowerer.entity_names.into_iter().collect();
    hir.implementation_names = lowerer.implementation_names.into_iter().collect();
    hir.definitions = definitions;
    hir.references = lowerer.references;
    for (local, entity) in hir.top_level.locals.iter().zip(&lowerer.top_types) {
        if let Some(entity) = entity {
            let symbol = Symbol::Global { namespace: scope.namespace.to_owned(), name: local.text.clone() };
            lowerer.variable_entities.push((symbol, entity.clone()));
        }
    }
    hir.variable_entities = lowerer.variable_entities;
    hir
}

/// A scope of the walk: a block's variables (with where each is first assigned, and the entity
/// of its value when that is certain), or an instance's attributes.
enum Scope {
    Block(IndexSet<String>, Vec<modelc_diagnostics::Span>, Vec<Option<String>>),
    /// The entity, when it resolved (otherwise any name may be an attribute).
    Instance(Option<String>),
}

struct Lowerer<'a> {
    index: Signatures<'a>,
    scope: FileScope<'a>,
    /// The file's top-level variables: the outermost scope of everything but typedef
    /// constraints.
    top: IndexSet<String>,
    /// The entity of each top-level variable's value, when certain.
    top_types: Vec<Option<String>>,
    with_top: bool,
    /// The scopes inside the top level, innermost last.
    stack: Vec<Scope>,
    globals: IndexSet<(String, String)>,
    /// The entities the file names ([`EntityRef`]s).
    entity_names: IndexSet<String>,
    /// The implementations the file names ([`ImplementationRef`]s).
    implementation_names: IndexSet<String>,
    references: Vec<Reference>,
    variable_entities: Vec<(Symbol, String)>,
    /// While a relation argument of a constructor is lowered: the relation's type, among whose
    /// subtypes an unqualified constructor that does not resolve is found (spec §4.5), as the
    /// checker finds it (`body/construct.rs`).
    constructor_target: Option<String>,
}

/// A block's variables while it is being lowered.
struct Declared {
    names: IndexSet<String>,
    locals: Vec<Name>,
    /// The statement that first assigns each (a loop's variable: its own name).
    statements: Vec<modelc_diagnostics::Span>,
}

/// The variables a block declares: names assigned (`x = …`) in it, in order of first
/// assignment, then `extra` (a loop's variable) unless the block assigns it.
fn declare<'s>(stmts: impl Iterator<Item = &'s ast::Stmt>, extra: Option<&ast::Ident>) -> Declared {
    let mut declared = Declared { names: IndexSet::new(), locals: Vec::new(), statements: Vec::new() };
    let mut add = |ident: &ast::Ident, statement: modelc_diagnostics::Span| {
        if declared.names.insert(ident.name.clone()) {
            declared.locals.push(name(ident));
            declared.statements.push(statement);
        }
    };
    for (ident, assign) in stmts.filter_map(ast::Stmt::declared_variable) {
        add(ident, assign.span);
    }
    if let Some(var) = extra {
        add(var, var.span);
    }
    declared
}

/// The position of `name` in `names`, added at the end if it is new (copied only then).
fn position_in(names: &mut IndexSet<String>, name: &str) -> u32 {
    match names.get_index_of(name) {
        Some(at) => at as u32,
        None => names.insert_full(name.to_owned()).0 as u32,
    }
}

fn name(ident: &ast::Ident) -> Name {
    Name { text: ident.name.clone(), span: ident.span }
}

impl Lowerer<'_> {
    /// Records a written entity name.
    fn type_reference(&mut self, written: &ast::TypeRef) {
        if let Ok(r) = self.scope.resolve_type(&self.index, &written.text()) {
            self.resolved_reference(written.span, r);
        }
    }

    /// Records a written name of a type, implementation or plugin.
    fn path_reference(&mut self, path: &ast::Path) {
        if let Ok(r) = self.scope.resolve_type(&self.index, &path.text()) {
            self.resolved_reference(path.span, r);
        }
    }

    fn resolved_reference(&mut self, span: modelc_diagnostics::Span, resolved: crate::resolve::Resolved) {
        let symbol = match resolved.kind {
            TypeKind::Entity => Symbol::Entity(resolved.fqn),
            TypeKind::Typedef => Symbol::Typedef(resolved.fqn),
            TypeKind::Implementation => Symbol::Implementation(resolved.fqn),
            TypeKind::Plugin => Symbol::Plugin(resolved.fqn),
        };
        self.references.push(Reference { span, symbol });
    }

    /// Records a written attribute name of an entity, by the entity that declares it.
    fn attribute_reference(&mut self, entity: &str, name: &ast::Ident) {
        if let Some(def) = self.index.attribute(entity, &name.name) {
            let symbol = Symbol::Attribute { entity: def.owner.clone(), name: name.name.clone() };
            self.references.push(Reference { span: name.span, symbol });
        }
    }

    /// Records a variable read or written at `span`.
    fn variable_reference(&mut self, var: &Var, span: modelc_diagnostics::Span) {
        let symbol = match var {
            Var::Local { up, slot } => self.local_symbol(*up, *slot),
            Var::Attribute { up, name, otherwise: None } => {
                let Some(Scope::Instance(Some(entity))) =
                    self.stack.len().checked_sub(1 + *up as usize).and_then(|i| self.stack.get(i))
                else {
                    return;
                };
                let Some(def) = self.index.attribute(entity, name) else { return };
                Some(Symbol::Attribute { entity: def.owner.clone(), name: name.clone() })
            }
            Var::Global(id) => self
                .globals
                .get_index(id.0 as usize)
                .map(|(namespace, name)| Symbol::Global { namespace: namespace.clone(), name: name.clone() }),
            _ => None,
        };
        if let Some(symbol) = symbol {
            self.references.push(Reference { span, symbol });
        }
    }

    /// The symbol of slot `slot` of the block `up` scopes out.
    fn local_symbol(&self, up: u32, slot: u32) -> Option<Symbol> {
        let depth = self.stack.len();
        if up as usize == depth {
            let name = self.top.get_index(slot as usize)?;
            return Some(Symbol::Global { namespace: self.scope.namespace.to_owned(), name: name.clone() });
        }
        match self.stack.get(depth.checked_sub(1 + up as usize)?)? {
            Scope::Block(_, spans, _) => spans.get(slot as usize).map(|span| Symbol::Local(*span)),
            Scope::Instance(_) => None,
        }
    }

    /// The entity of each declared variable's value when it is certain: assigned once, a
    /// constructor (what references and rename follow through `x.attr`).
    fn local_types<'s>(
        &self,
        stmts: impl Iterator<Item = &'s ast::Stmt>,
        names: &IndexSet<String>,
    ) -> Vec<Option<String>> {
        let mut values: Vec<(usize, Option<String>)> = vec![(0, None); names.len()];
        for (ident, assign) in stmts.filter_map(ast::Stmt::declared_variable) {
            let Some(slot) = names.get_index_of(&ident.name) else { continue };
            let entity = match &assign.value.kind {
                ast::ExprKind::Construct { entity, .. } => self.entity_fqn(entity),
                _ => None,
            };
            values[slot].0 += 1;
            values[slot].1 = entity;
        }
        values.into_iter().map(|(count, entity)| entity.filter(|_| count == 1)).collect()
    }

    /// The entity `owner.attribute` leads to, when `attribute` is a relation.
    fn relation_target(&self, owner: &str, attribute: &str) -> Option<String> {
        match &self.index.attribute(owner, attribute)?.kind {
            crate::index::AttrKind::Relation { target, .. } if !target.is_empty() => Some(target.clone()),
            _ => None,
        }
    }

    /// The entity of an expression that is not an attribute access (a chain's root), when it is
    /// certain.
    fn root_entity(&self, expr: &Expr) -> Option<String> {
        let scope_at = |up: u32| self.stack.len().checked_sub(1 + up as usize).and_then(|i| self.stack.get(i));
        match &expr.kind {
            ExprKind::Var(Var::SelfInstance { up }) => match scope_at(*up)? {
                Scope::Instance(entity) => entity.clone(),
                Scope::Block(..) => None,
            },
            ExprKind::Var(Var::Local { up, slot }) => {
                if *up as usize == self.stack.len() {
                    return self.top_types.get(*slot as usize).cloned().flatten();
                }
                match scope_at(*up)? {
                    Scope::Block(_, _, types) => types.get(*slot as usize).cloned().flatten(),
                    Scope::Instance(_) => None,
                }
            }
            ExprKind::Construct { entity, .. } => self.entity_names.get_index(entity.0 as usize).cloned(),
            _ => None,
        }
    }

    /// A typedef constraint: a scope of its own holding `self`, nothing around it.
    fn constraint(&mut self, expr: &ast::Expr) -> Expr {
        let saved = (std::mem::take(&mut self.stack), self.with_top);
        self.with_top = false;
        self.stack.push(Scope::Block(IndexSet::from(["self".to_owned()]), vec![expr.span], vec![None]));
        let lowered = self.expr(expr);
        (self.stack, self.with_top) = saved;
        lowered
    }

    /// The entity a written name resolves to, fully qualified.
    fn entity_fqn(&self, written: &ast::TypeRef) -> Option<String> {
        match self.scope.resolve_type(&self.index, &written.text()) {
            Ok(r) if r.kind == TypeKind::Entity && self.index.entity(&r.fqn).exists => Some(r.fqn),
            _ => None,
        }
    }

    /// The file's reference to an entity that exists.
    fn entity_ref(&mut self, fqn: &str) -> EntityRef {
        EntityRef(position_in(&mut self.entity_names, fqn))
    }

    /// The file's reference to an implementation that exists.
    fn implementation_ref(&mut self, fqn: &str) -> ImplementationRef {
        ImplementationRef(position_in(&mut self.implementation_names, fqn))
    }

    /// The entity a constructor makes: as written, or, unqualified and not found, the one
    /// candidate among the enclosing relation argument's type and its subtypes (spec §4.5).
    /// Otherwise the candidates there are: several make the name ambiguous.
    fn constructed(&self, written: &ast::TypeRef) -> Result<String, Vec<String>> {
        if let Some(fqn) = self.entity_fqn(written) {
            return Ok(fqn);
        }
        let Some(target) = self.constructor_target.as_deref().filter(|_| written.namespace.is_empty()) else {
            return Err(Vec::new());
        };
        match self.index.constructor_candidates(&written.text(), target) {
            [one] => Ok(one.clone()),
            many => Err(many.to_vec()),
        }
    }

    /// Lowers a nested block; returns it and the slot of `extra` (a loop's variable).
    fn block(&mut self, stmts: &[ast::Stmt], extra: Option<&ast::Ident>) -> (Block, u32) {
        let declared = declare(stmts.iter(), extra);
        let slot = extra.and_then(|v| declared.names.get_index_of(&v.name)).unwrap_or(0) as u32;
        let spans = declared.locals.iter().map(|l| l.span).collect();
        let types = self.local_types(stmts.iter(), &declared.names);
        for (local, entity) in declared.locals.iter().zip(&types) {
            if let Some(entity) = entity {
                self.variable_entities.push((Symbol::Local(local.span), entity.clone()));
            }
        }
        self.stack.push(Scope::Block(declared.names, spans, types));
        let lowered = stmts.iter().filter_map(|s| self.stmt(s)).collect();
        self.stack.pop();
        (Block { locals: declared.locals, stmts: lowered }, slot)
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> Option<Stmt> {
        Some(match stmt {
            ast::Stmt::Assign(assign) => Stmt::Assign(Box::new(Assign {
                target: self.target(&assign.target),
                extend: assign.op == ast::AssignOp::Extend,
                value: self.expr(&assign.value),
                span: assign.span,
            })),
            ast::Stmt::Expr(expr) => Stmt::Expr(self.expr(expr)),
            ast::Stmt::If(if_) => {
                let eager = self.eager_targets(stmt);
                let branches = if_
                    .branches
                    .iter()
                    .map(|(condition, body)| (self.expr(condition), self.block(body, None).0))
                    .collect();
                let else_body = if_.else_body.as_ref().map(|body| self.block(body, None).0);
                Stmt::If(Box::new(If { branches, else_body, eager, span: if_.span }))
            }
            ast::Stmt::For(for_) => {
                let eager = self.eager_targets(stmt);
                let iterable = self.expr(&for_.iterable);
                let (body, var) = self.block(&for_.body, Some(&for_.var));
                if let Some(declared) = body.locals.get(var as usize) {
                    self.references.push(Reference { span: for_.var.span, symbol: Symbol::Local(declared.span) });
                }
                Stmt::For(Box::new(For { var, var_span: for_.var.span, iterable, body, eager, span: for_.span }))
            }
            ast::Stmt::Error(_) => return None,
        })
    }

    fn target(&mut self, target: &ast::Expr) -> Target {
        match &target.kind {
            ast::ExprKind::Var(path) if path.segments.len() == 1 => {
                let current = match self.stack.last() {
                    Some(Scope::Block(names, _, _)) => Some(names),
                    Some(Scope::Instance(_)) => None,
                    None => self.with_top.then_some(&self.top),
                };
                match current.and_then(|names| names.get_index_of(&path.segments[0].name)) {
                    Some(slot) => {
                        self.variable_reference(&Var::Local { up: 0, slot: slot as u32 }, target.span);
                        Target::Local { slot: slot as u32, span: target.span }
                    }
                    // `x += …` with no `x = …` in the block.
                    None => Target::Undefined { name: path.text(), span: target.span },
                }
            }
            ast::ExprKind::Var(path) => Target::Qualified { written: path.text(), span: path.span },
            ast::ExprKind::Attr { object, attr } => {
                Target::Attribute { object: self.expr(object), attr: name(attr), span: target.span }
            }
            _ => Target::Other,
        }
    }

    /// The relation assignments an `if` or `for` promises (see [`EagerTarget`]), their
    /// objects lowered where the statement is.
    fn eager_targets(&mut self, stmt: &ast::Stmt) -> Vec<EagerTarget> {
        let mut targets = Vec::new();
        collect_targets(stmt, &mut Vec::new(), &mut targets);
        targets
            .into_iter()
            .filter_map(|target| match &target.kind {
                ast::ExprKind::Attr { object, attr } => {
                    Some(EagerTarget { object: self.expr(object), attr: name(attr) })
                }
                _ => None,
            })
            .collect()
    }

    /// Resolves an unqualified variable from the innermost scope out.
    fn var(&self, written: &str) -> Var {
        self.var_from(written, self.stack.len())
    }

    /// Resolves a variable starting at scope `depth` of the stack (the top level below 0).
    fn var_from(&self, written: &str, depth: usize) -> Var {
        for (i, scope) in self.stack[..depth].iter().enumerate().rev() {
            let up = (self.stack.len() - 1 - i) as u32;
            match scope {
                Scope::Block(names, _, _) => {
                    if let Some(slot) = names.get_index_of(written) {
                        return Var::Local { up, slot: slot as u32 };
                    }
                }
                Scope::Instance(entity) => {
                    if written == "self" {
                        return Var::SelfInstance { up };
                    }
                    let certain = entity.as_ref().is_some_and(|e| self.index.attribute(e, written).is_some());
                    let possible = entity.as_ref().is_none_or(|e| self.index.attribute_in_family(e, written));
                    if certain {
                        return Var::Attribute { up, name: written.to_owned(), otherwise: None };
                    }
                    if possible {
                        let otherwise = Some(Box::new(self.var_from(written, i)));
                        return Var::Attribute { up, name: written.to_owned(), otherwise };
                    }
                }
            }
        }
        if self.with_top
            && let Some(slot) = self.top.get_index_of(written)
        {
            return Var::Local { up: self.stack.len() as u32, slot: slot as u32 };
        }
        Var::Undefined(written.to_owned())
    }

    fn path_var(&mut self, path: &ast::Path) -> Var {
        if let [single] = path.segments.as_slice() {
            return self.var(&single.name);
        }
        let (last, prefix) = path.segments.split_last().unwrap_or((&path.segments[0], &[]));
        let prefix: Vec<&str> = prefix.iter().map(|s| s.name.as_str()).collect();
        match self.scope.namespace_of(&self.index, &prefix.join("::")) {
            Ok(namespace) if self.index.has_variable(&namespace, &last.name) => {
                let (id, _) = self.globals.insert_full((namespace, last.name.clone()));
                Var::Global(GlobalId(id as u32))
            }
            _ => Var::Undefined(path.text()),
        }
    }

    fn chain(&mut self, path: &[ast::Ident]) -> Option<Chain> {
        let (first, rest) = path.split_first()?;
        let root = self.var(&first.name);
        self.variable_reference(&root, first.span);
        Some(Chain { root, root_span: first.span, attrs: rest.iter().map(name).collect() })
    }

    fn args(&mut self, args: &[ast::Arg]) -> Vec<Arg> {
        args.iter()
            .map(|arg| match arg {
                ast::Arg::Positional(e) => Arg::Positional(self.expr(e)),
                ast::Arg::Keyword(n, e) => Arg::Keyword(name(n), self.expr(e)),
                ast::Arg::Splat(e) => Arg::Splat(self.expr(e)),
            })
            .collect()
    }

    /// The position of `attribute` in instances of `entity` (the order of its signature's
    /// attributes is the order execution lays instances out in).
    fn position(&self, entity: &str, attribute: &str) -> Option<u32> {
        self.index.entity(entity).attributes.get_index_of(attribute).map(|p| p as u32)
    }

    fn fstr_parts(&mut self, parts: &[ast::FStrPart]) -> Vec<FStrPart> {
        parts
            .iter()
            .map(|part| match part {
                ast::FStrPart::Text(t) => FStrPart::Text(t.clone()),
                ast::FStrPart::Field(field) => FStrPart::Field(FStrField {
                    chain: self.chain(&field.path),
                    conversion: field.conversion,
                    spec: self.fstr_parts(&field.spec),
                    span: field.span,
                }),
            })
            .collect()
    }

    fn boxed(&mut self, expr: &ast::Expr) -> Box<Expr> {
        Box::new(self.expr(expr))
    }

    fn expr(&mut self, expr: &ast::Expr) -> Expr {
        // A relation argument's type reaches constructors through lists and conditionals, as
        // the checker's hint does, and no further.
        let passes_on = matches!(
            expr.kind,
            ast::ExprKind::Construct { .. }
                | ast::ExprKind::List(_)
                | ast::ExprKind::ListComp { .. }
                | ast::ExprKind::Conditional { .. }
        );
        let saved = if passes_on { None } else { self.constructor_target.take() };
        let lowered = modelc_syntax::stack::deep(|| self.expr_level(expr));
        if saved.is_some() {
            self.constructor_target = saved;
        }
        lowered
    }

    /// The value of keyword argument `attribute` of a constructor of `entity`: with the
    /// relation's type as the target of the constructors in it.
    fn keyword_value(&mut self, entity: &str, attribute: &str, value: &ast::Expr) -> Expr {
        let target = self.relation_target(entity, attribute);
        let saved = std::mem::replace(&mut self.constructor_target, target);
        let lowered = self.expr(value);
        self.constructor_target = saved;
        lowered
    }

    /// `a.b.c…`, link by link from the root outwards: a chain is long, not deep. Each link
    /// records a reference to the attribute when its owner's entity is known statically (`self.x`,
    /// `server.name`); the entity of the next link's owner follows from this one's relation.
    fn attribute_chain(&mut self, expr: &ast::Expr) -> Expr {
        let (root, links) = expr.attribute_links();
        let mut lowered = self.expr(root);
        let mut owner = self.root_entity(&lowered);
        for ast::AttrLink { attr, span, .. } in links {
            if let Some(entity) = owner.as_deref().filter(|e| self.index.entity(e).exists) {
                self.attribute_reference(entity, attr);
            }
            owner = owner.and_then(|owner| self.relation_target(&owner, &attr.name));
            lowered = Expr { kind: ExprKind::Attr { object: Box::new(lowered), attr: name(attr) }, span };
        }
        lowered
    }

    fn expr_level(&mut self, expr: &ast::Expr) -> Expr {
        let kind = match &expr.kind {
            ast::ExprKind::Int(text) => match text.parse::<i64>() {
                Ok(i) => ExprKind::Int(i),
                Err(_) => ExprKind::IntOutOfRange,
            },
            ast::ExprKind::Float(f) => ExprKind::Float(*f),
            ast::ExprKind::Bool(b) => ExprKind::Bool(*b),
            ast::ExprKind::Null => ExprKind::Null,
            ast::ExprKind::Str(s) => ExprKind::Str(
                s.parts
                    .iter()
                    .filter_map(|part| match part {
                        ast::StrPart::Text(t) => Some(StrPart::Text(t.clone())),
                        ast::StrPart::Interpolation(path) => self.chain(path).map(StrPart::Interpolation),
                    })
                    .collect(),
            ),
            ast::ExprKind::FStr(f) => ExprKind::FStr(self.fstr_parts(&f.parts)),
            ast::ExprKind::Regex(regex) => {
                ExprKind::Regex { pattern: regex.pattern.clone(), subject: self.var("self") }
            }
            ast::ExprKind::Var(path) => {
                let var = self.path_var(path);
                self.variable_reference(&var, path.span);
                ExprKind::Var(var)
            }
            ast::ExprKind::Attr { .. } => return self.attribute_chain(expr),
            ast::ExprKind::Call { function, args } => {
                let written = function.text();
                self.path_reference(function);
                let callee = if function.segments.len() == 1
                    && let Some(cast) = crate::types::CASTS.iter().find(|c| **c == written)
                {
                    Callee::Cast(cast)
                } else {
                    match self.scope.resolve_type(&self.index, &written) {
                        Ok(r) if r.kind == TypeKind::Plugin => {
                            self.index.plugin(&r.fqn).map_or(Callee::Unavailable, Callee::Plugin)
                        }
                        _ => Callee::Unavailable,
                    }
                };
                ExprKind::Call { callee, written, function_span: function.span, args: self.args(args) }
            }
            ast::ExprKind::Construct { entity, args } => match self.constructed(entity) {
                Ok(fqn) => {
                    // Its own arguments have their own targets.
                    let outer = self.constructor_target.take();
                    self.type_reference(entity);
                    let args = args
                        .iter()
                        .map(|arg| match arg {
                            ast::Arg::Positional(e) => ConstructArg::Positional(self.expr(e)),
                            ast::Arg::Keyword(n, e) => ConstructArg::Keyword {
                                name: {
                                    self.attribute_reference(&fqn, n);
                                    name(n)
                                },
                                position: self.position(&fqn, &n.name),
                                value: self.keyword_value(&fqn, &n.name, e),
                            },
                            ast::Arg::Splat(e) => ConstructArg::Splat(self.expr(e)),
                        })
                        .collect();
                    self.constructor_target = outer;
                    ExprKind::Construct { entity: self.entity_ref(&fqn), entity_span: entity.span, args }
                }
                Err(candidates) => {
                    // Its own arguments have their own targets, whatever it is.
                    let outer = self.constructor_target.take();
                    let args = self.args(args);
                    self.constructor_target = outer;
                    ExprKind::UnknownEntity {
                        written: entity.text(),
                        entity_span: entity.span,
                        constructor: true,
                        candidates,
                        args,
                    }
                }
            },
            ast::ExprKind::IndexLookup { entity, args } => match self.entity_fqn(entity) {
                Some(fqn) => {
                    self.type_reference(entity);
                    for arg in args {
                        if let ast::Arg::Keyword(n, _) = arg {
                            self.attribute_reference(&fqn, n);
                        }
                    }
                    let id = self.entity_ref(&fqn);
                    ExprKind::IndexLookup { entity: id, entity_span: entity.span, args: self.args(args) }
                }
                None => ExprKind::UnknownEntity {
                    written: entity.text(),
                    entity_span: entity.span,
                    constructor: false,
                    candidates: Vec::new(),
                    args: self.args(args),
                },
            },
            ast::ExprKind::RelationLookup { object, relation, args } => {
                ExprKind::RelationLookup { object: self.boxed(object), relation: name(relation), args: self.args(args) }
            }
            ast::ExprKind::MapLookup { object, key } => {
                ExprKind::MapLookup { object: self.boxed(object), key: self.boxed(key) }
            }
            ast::ExprKind::List(items) => ExprKind::List(items.iter().map(|i| self.expr(i)).collect()),
            ast::ExprKind::ListComp { element, fors, guards } => {
                let depth = self.stack.len();
                let mut lowered = Vec::with_capacity(fors.len());
                for comp in fors {
                    let iterable = self.expr(&comp.iterable);
                    lowered.push(CompFor { var: name(&comp.var), iterable });
                    self.references.push(Reference { span: comp.var.span, symbol: Symbol::Local(comp.var.span) });
                    self.stack.push(Scope::Block(
                        IndexSet::from([comp.var.name.clone()]),
                        vec![comp.var.span],
                        vec![None],
                    ));
                }
                let guards = guards.iter().map(|g| self.expr(g)).collect();
                let element = self.boxed(element);
                self.stack.truncate(depth);
                ExprKind::ListComp { element, fors: lowered, guards }
            }
            ast::ExprKind::Dict(entries) => ExprKind::Dict(
                entries.iter().map(|e| (e.key.as_constant().unwrap_or_default(), self.expr(&e.value))).collect(),
            ),
            ast::ExprKind::Binary { op, lhs, rhs } => {
                let op = match op {
                    ast::BinOp::And => BinOp::And,
                    ast::BinOp::Or => BinOp::Or,
                    other => match Op::from_symbol(other.symbol()) {
                        Some(op) => BinOp::Value(op),
                        None => return Expr { kind: ExprKind::Error, span: expr.span },
                    },
                };
                ExprKind::Binary { op, lhs: self.boxed(lhs), rhs: self.boxed(rhs) }
            }
            ast::ExprKind::Not(inner) => ExprKind::Not(self.boxed(inner)),
            ast::ExprKind::Conditional { condition, then, otherwise } => ExprKind::Conditional {
                condition: self.boxed(condition),
                then: self.boxed(then),
                otherwise: self.boxed(otherwise),
            },
            ast::ExprKind::IsDefined(inner) => ExprKind::IsDefined(self.boxed(inner)),
            ast::ExprKind::Error => ExprKind::Error,
        };
        Expr { kind, span: expr.span }
    }
}

/// The relation assignment targets (`v.attr = …`, `v.a.b += …`) inside a statement's blocks
/// whose root variable is not declared in a block between the statement and the assignment.
fn collect_targets<'a>(stmt: &'a ast::Stmt, declared: &mut Vec<&'a str>, targets: &mut Vec<&'a ast::Expr>) {
    let (blocks, loop_var): (Vec<&'a [ast::Stmt]>, Option<&'a str>) = match stmt {
        ast::Stmt::If(if_) => {
            (if_.branches.iter().map(|(_, b)| b.as_slice()).chain(if_.else_body.as_deref()).collect(), None)
        }
        ast::Stmt::For(for_) => (vec![&for_.body], Some(&for_.var.name)),
        _ => return,
    };
    for block in blocks {
        let outer = declared.len();
        declared.extend(loop_var);
        declared.extend(block.iter().filter_map(ast::Stmt::declared_variable).map(|(name, _)| name.name.as_str()));
        for inner in block {
            if let ast::Stmt::Assign(assign) = inner
                && let ast::ExprKind::Attr { .. } = &assign.target.kind
                && root_of(&assign.target).is_some_and(|root| !declared.contains(&root))
            {
                targets.push(&assign.target);
            }
            collect_targets(inner, declared, targets);
        }
        declared.truncate(outer);
    }
}

/// The variable an attribute chain starts from (`a` in `a.b.c`).
fn root_of(expr: &ast::Expr) -> Option<&str> {
    match &expr.attribute_links().0.kind {
        ast::ExprKind::Var(path) if path.segments.len() == 1 => Some(&path.segments[0].name),
        _ => None,
    }
}
