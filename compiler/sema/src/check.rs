//! The per-file checker: its state, its entry point, and how it reports.
//!
//! Errors the reference finds before execution are always errors. Errors it finds only when a
//! statement runs are errors where the statement is certain to run (the top level of a loaded
//! file, outside `if`, `for` and lazily evaluated operands) and warnings elsewhere, because a
//! model whose faulty implementation is never used still compiles.

/// How the note of a warning about code that may not run starts (the run that meets the error
/// makes it an error again, and drops the note).
pub const MAY_NOT_RUN: &str = "this is a warning because ";

use indexmap::IndexMap;
use modelc_db::ImportSummary;
use modelc_diagnostics::{Diagnostic, FileId, Severity, Span, codes};
use modelc_syntax::ast::File;

use crate::hir::{self, FileHir};
use crate::index::TypeKind;
use crate::loading::LoadedModules;
use crate::resolve::{FileScope, ResolveError};
use crate::signatures::Signatures;

/// One file as the checks read it: its syntax tree (declarations, imports), its lowering
/// (statement blocks, with every name resolved), and its text.
pub(crate) struct FileToCheck<'a> {
    pub id: FileId,
    pub ast: &'a File,
    pub hir: &'a FileHir,
    pub text: &'a str,
}

/// Checks one file of namespace `namespace` against the project's tables.
pub(crate) fn check_file<'a>(
    index: Signatures<'a>,
    loaded: &LoadedModules,
    namespace: &'a str,
    imports: &'a [ImportSummary],
    file: FileToCheck<'a>,
) -> Vec<Diagnostic> {
    let FileToCheck { id: file_id, ast: file, hir, text } = file;
    let mut checker = Checker {
        ast: file,
        hir,
        text,
        index,
        scope: FileScope { namespace, imports },
        file: file_id,
        diagnostics: Vec::new(),
        scopes: Vec::new(),
        certain: true,
        uncertain_reason: "",
        in_typedef: false,
        without_identity: std::collections::HashSet::new(),
        failed_imports: Vec::new(),
        follow_ons: Vec::new(),
        closed_vars: Vec::new(),
        logic_value: None,
        last_chain: None,
    };
    checker.check_imports(file, loaded);
    checker.check_declarations(file);
    checker.check_top_level();
    checker.diagnostics.extend(crate::double_set::top_level_double_sets(file_id, hir, text));
    // A name under a module whose import failed is not reported again: the import is.
    let follow_ons = std::mem::take(&mut checker.follow_ons);
    checker.diagnostics.retain(|d| d.primary_label().is_none_or(|l| !follow_ons.contains(&l.span)));
    checker.diagnostics
}

/// A variable declared in a block: the expression assigned to it when there is exactly one
/// assignment (to infer its type), and where it is first declared.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Var<'a> {
    pub value: Option<&'a hir::Expr>,
    pub declared_at: Span,
    /// A loop variable over a relation: the entity its elements are instances of.
    pub element: Option<&'a str>,
}

/// One block's variables, by name, in slot order (lowering's `Var::Local { slot }`).
pub(crate) type Block<'a> = IndexMap<&'a str, Var<'a>>;

/// A scope of the walk, one for each scope lowering counts (`Var::Local { up, .. }` is found
/// `up` scopes out): a block's variables, or the instance of an implementation or `when`
/// condition, with its entity when it resolved.
#[derive(Debug)]
pub(crate) enum Scope<'a> {
    Block(Block<'a>),
    Instance(Option<String>),
}

pub(crate) struct Checker<'a> {
    /// The file being checked: its declarations, its lowered statements, its text.
    pub ast: &'a File,
    pub hir: &'a FileHir,
    pub text: &'a str,
    /// What the check reads of the project's declarations, one query per question.
    pub index: Signatures<'a>,
    pub scope: FileScope<'a>,
    pub file: FileId,
    pub diagnostics: Vec<Diagnostic>,
    /// The scopes of the code being checked, outermost (the file's top level) first.
    pub scopes: Vec<Scope<'a>>,
    /// The code being checked runs whenever the model compiles.
    pub certain: bool,
    /// Why the current code may not run, for the note on downgraded diagnostics.
    pub uncertain_reason: &'static str,
    /// Checking a typedef constraint: only `self` (and comprehension variables) are bound.
    pub in_typedef: bool,
    /// Resource types already reported as having no identity (W0403), once per file.
    pub without_identity: std::collections::HashSet<String>,
    /// Modules this file imports that do not exist, with the names suggested for them: names
    /// under them are not reported (the import is).
    pub failed_imports: Vec<String>,
    /// Where names under a failed import are written: their diagnostics are dropped.
    pub follow_ons: Vec<Span>,
    /// The variables of nested blocks already checked (an `if` branch, a `for` body), where
    /// each is assigned: a use after its block is told why it is not found.
    pub closed_vars: Vec<(&'a str, Span)>,
    /// The `and`/`or` expression checked last and its constant value, if it has one: the next
    /// link of a chain reads it instead of evaluating the chain again.
    pub logic_value: Option<(&'a hir::Expr, Option<bool>)>,
    /// The attribute chain checked last and the attribute its last link found: a `for` over
    /// it reads the relation's target entity.
    pub last_chain: Option<(&'a hir::Expr, &'a crate::index::AttrDef)>,
}

impl<'a> Checker<'a> {
    /// Reports an error found before execution.
    pub(crate) fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Reports an error the reference finds when the statement runs: an error where the code
    /// certainly runs, a warning elsewhere.
    pub(crate) fn runtime(&mut self, mut diagnostic: Diagnostic) {
        if !self.certain {
            diagnostic.severity = Severity::Warning;
            diagnostic = diagnostic
                .note(format!("{MAY_NOT_RUN}{}; the reference compiler fails only if it does", self.uncertain_reason));
        }
        self.diagnostics.push(diagnostic);
    }

    /// Runs `f` with the code marked as possibly not running.
    pub(crate) fn uncertain<T>(&mut self, reason: &'static str, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = (self.certain, self.uncertain_reason);
        if self.certain {
            self.certain = false;
            self.uncertain_reason = reason;
        }
        let out = f(self);
        (self.certain, self.uncertain_reason) = saved;
        out
    }

    /// The diagnostic for a name that did not resolve.
    pub(crate) fn resolve_error(&mut self, error: &ResolveError, span: Span, what: &str) -> Diagnostic {
        let module = match error {
            ResolveError::NotFound { name, .. } => name.split("::").next().filter(|_| name.contains("::")),
            ResolveError::MissingImport { prefix } | ResolveError::UnknownNamespace { prefix, .. } => {
                prefix.split("::").next()
            }
        };
        // The module's own name, or one close to it (`import teir` … `tier::Server`).
        let follows = |m: &str| {
            self.failed_imports.iter().any(|f| f == m)
                || !crate::suggest::similar(m, self.failed_imports.iter().map(String::as_str)).is_empty()
        };
        if module.is_some_and(follows) {
            self.follow_ons.push(span);
        }
        match error {
            ResolveError::NotFound { name, namespace } => {
                let suggestions = self.scope.suggestions(&self.index, error);
                // Suggest only names of the kind wanted here: an entity for an entity.
                let wanted = match what {
                    "entity" => Some(TypeKind::Entity),
                    "implementation" => Some(TypeKind::Implementation),
                    "plugin" => Some(TypeKind::Plugin),
                    _ => None,
                };
                let suggestions: Vec<String> = suggestions
                    .iter()
                    .filter(|s| {
                        wanted.is_none_or(|kind| self.scope.resolve_type(&self.index, s).is_ok_and(|r| r.kind == kind))
                    })
                    .cloned()
                    .collect();
                let suggestions = &suggestions;
                let d = Diagnostic::new(&codes::UNKNOWN_TYPE, format!("could not find {what} `{name}`"))
                    .primary(self.file, span, "not found in this scope")
                    .note(if namespace == "__config__" {
                        "looked in the model's main file (namespace `__config__`)".to_owned()
                    } else {
                        format!("looked in namespace `{namespace}`")
                    });
                let mut d = crate::suggest::suggest(d, self.file, span, suggestions);
                if self.scope.namespace == "__config__"
                    && !name.contains("::")
                    && suggestions.first().is_some_and(|s| s.starts_with("std::"))
                {
                    d = d.note("the names of `std` are written with their prefix, also in the main file");
                }
                d
            }
            ResolveError::MissingImport { prefix } => {
                let import = modelc_diagnostics::Edit {
                    file: self.file,
                    span: modelc_diagnostics::Span::new(0, 0),
                    replacement: format!("import {prefix}\n"),
                };
                Diagnostic::new(&codes::MISSING_IMPORT, format!("namespace `{prefix}` is not imported in this file"))
                    .primary(self.file, span, "used here without an import")
                    .help(format!("add `import {prefix}` at the top of this file"))
                    .fix(modelc_diagnostics::Fix {
                        message: format!("add `import {prefix}`"),
                        edits: vec![import],
                        applicability: modelc_diagnostics::Applicability::MachineApplicable,
                    })
            }
            ResolveError::UnknownNamespace { prefix } => {
                let suggestions = &self.scope.suggestions(&self.index, error);
                let mut d = Diagnostic::new(&codes::UNKNOWN_NAMESPACE, format!("namespace `{prefix}` not found"))
                    .primary(self.file, span, "no module of this name is loaded or imported");
                if let Some(help) = crate::suggest::did_you_mean(suggestions) {
                    d = d.help(help);
                } else {
                    d = d.help(format!("if `{prefix}` is a module on the module path, add `import {prefix}`"));
                }
                d
            }
        }
    }

    /// The statement blocks of the file, in the order they are written: the top level's
    /// statements, implementation bodies, `when` conditions, typedef constraints and relation
    /// annotations, with the top level's variables visible to all but the constraints.
    fn check_top_level(&mut self) {
        enum Code<'h> {
            Stmt(&'h hir::Stmt),
            Implementation(&'h hir::ImplementationHir),
            Condition(&'h hir::ImplementHir, &'h hir::Expr),
            Constraint(&'h hir::Expr),
            Annotation(&'h hir::Expr),
        }
        let hir = self.hir;
        let mut code: Vec<(u32, Code<'a>)> = Vec::new();
        code.extend(hir.top_level.stmts.iter().map(|s| (s.span().start, Code::Stmt(s))));
        code.extend(hir.implementations.iter().map(|i| (i.name.span.start, Code::Implementation(i))));
        code.extend(
            hir.implements.iter().filter_map(|i| Some((i.span.start, Code::Condition(i, i.condition.as_ref()?)))),
        );
        code.extend(hir.typedefs.iter().filter_map(|t| match &t.constraint {
            hir::ConstraintHir::Expr(e) => Some((t.span.start, Code::Constraint(e))),
            hir::ConstraintHir::Regex(_) => None,
        }));
        code.extend(hir.annotations.iter().map(|(_, e)| (e.span.start, Code::Annotation(e))));
        code.sort_by_key(|(start, _)| *start);
        let block = self.declare_block(&hir.top_level);
        // The top level is the outermost scope of every implementation body in this file too.
        self.scopes.push(Scope::Block(block));
        for (_, code) in code {
            match code {
                Code::Stmt(stmt) => self.check_stmt(stmt),
                Code::Implementation(implementation) => self.check_implementation_body(implementation),
                Code::Condition(implement, condition) => self.check_implement_condition(implement, condition),
                Code::Constraint(constraint) => self.check_typedef_constraint(constraint),
                Code::Annotation(annotation) => {
                    self.check_expr(annotation, None);
                }
            }
        }
        self.scopes.pop();
    }
}
