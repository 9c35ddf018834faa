//! The types a Python plugin declares, enforced as the reference enforces them: each argument
//! is checked against its parameter's annotation before the call (typedef constraints
//! included), and the result against the return annotation after it.

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::hir::{Arg, Expr};
use modelc_sema::types::{BaseType, ValueType};
use modelc_stdlib::{ParamKind, PluginSignature};
use modelc_value::Value;

use crate::cells::ScopeId;
use crate::engine::{Engine, Eval};
use modelc_sema::validate::Misfit;

impl<'a> Engine<'a> {
    /// Checks the arguments of a call of `signature` against their parameters' types.
    pub(crate) fn check_foreign_arguments(
        &mut self,
        signature: &PluginSignature,
        call: &'a Expr,
        args: &'a [Arg],
        positional: &[Value],
        keywords: &[(String, Value)],
        scope: ScopeId,
    ) -> Eval<()> {
        let spans: Vec<Span> =
            args.iter().filter_map(|a| if let Arg::Positional(e) = a { Some(e.span) } else { None }).collect();
        let ordinary: Vec<_> = signature.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
        let var_args = signature.params.iter().find(|p| p.kind == ParamKind::VarArgs);
        for (i, value) in positional.iter().enumerate() {
            let param = ordinary.get(i).copied().or(var_args);
            let span = spans.get(i).copied().unwrap_or(call.span);
            if let Some(param) = param {
                self.check_foreign_value(signature, param.name, param.ty, value, span, scope)?;
            }
        }
        let var_keywords = signature.params.iter().find(|p| p.kind == ParamKind::VarKeywords);
        for (name, value) in keywords {
            let named = signature
                .params
                .iter()
                .find(|p| p.name == name && matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly));
            let span = args
                .iter()
                .find_map(|a| match a {
                    Arg::Keyword(n, e) if n.text == *name => Some(e.span),
                    _ => None,
                })
                .unwrap_or(call.span);
            if let Some(param) = named.or(var_keywords) {
                self.check_foreign_value(signature, name, param.ty, value, span, scope)?;
            }
        }
        Ok(())
    }

    /// Checks what a Python plugin returned against its return annotation.
    pub(crate) fn check_foreign_result(
        &mut self,
        signature: &PluginSignature,
        value: &Value,
        span: Span,
        scope: ScopeId,
    ) -> Eval<()> {
        if !self.instances_exist(value) {
            let d = Diagnostic::new(
                &codes::PYTHON_FAILED,
                format!("plugin {} could not run: it returned an instance that is not in the model", signature.fqn()),
            );
            return Err(self.fail(scope, span, d, "returned here"));
        }
        let Some(ty) = self.foreign_type(signature.namespace, signature.returns) else { return Ok(()) };
        match self.fits(&ty, value) {
            Ok(()) => Ok(()),
            Err((_, message)) => {
                let fqn = signature.fqn();
                let d = Diagnostic::new(
                    &codes::TYPE_MISMATCH,
                    format!("the value {fqn}() returned does not fit its declared type: {message}"),
                )
                .note(format!("{fqn} declares `-> {}`", signature.returns));
                Err(self.fail(scope, span, d, "returned here"))
            }
        }
    }

    /// Whether every instance in `value` is one of the model's (a plugin names them by number).
    fn instances_exist(&self, value: &Value) -> bool {
        match value {
            Value::Instance(id) => (id.0 as usize) < self.instances.len(),
            Value::List(items) => items.iter().all(|v| self.instances_exist(v)),
            Value::Dict(entries) => entries.values().all(|v| self.instances_exist(v)),
            _ => true,
        }
    }

    fn check_foreign_value(
        &mut self,
        signature: &PluginSignature,
        param: &str,
        written: &str,
        value: &Value,
        span: Span,
        scope: ScopeId,
    ) -> Eval<()> {
        let Some(ty) = self.foreign_type(signature.namespace, written) else { return Ok(()) };
        match self.fits(&ty, value) {
            Ok(()) => Ok(()),
            Err((violated, message)) => {
                let code = if violated { &codes::CONSTRAINT_VIOLATION } else { &codes::TYPE_MISMATCH };
                let d = Diagnostic::new(code, format!("argument `{param}` of {}(): {message}", signature.fqn()))
                    .note(format!("the plugin declares `{written} {param}`"));
                Err(self.fail(scope, span, d, "this argument"))
            }
        }
    }

    /// Whether `value` fits `ty`; when not, whether a typedef's constraint is what it breaks,
    /// and why.
    fn fits(&mut self, ty: &ValueType, value: &Value) -> Result<(), (bool, String)> {
        // A plugin's `list` and `dict` hold anything (instances too), unlike an attribute's.
        let container = match ty.base {
            BaseType::List if !ty.list => Some(matches!(value, Value::List(_))),
            BaseType::Dict if !ty.list => Some(matches!(value, Value::Dict(_))),
            _ => None,
        };
        if let Some(ok) = container {
            return if ok || value.is_unknown() || (value.is_null() && ty.nullable) {
                Ok(())
            } else {
                Err((false, modelc_sema::validate::invalid(&self.show(value), ty)))
            };
        }
        match self.check_type(ty, value) {
            Ok(()) => Ok(()),
            Err(Misfit::Invalid(message)) => Err((false, message)),
            Err(Misfit::Violated { message, .. }) => Err((true, message)),
            Err(Misfit::Failed(cause)) => {
                Err((true, format!("its type's constraint could not be evaluated: {}", cause.message)))
            }
        }
    }

    /// A plugin's written type as a type of the model: `"string"`, `"ip::cidr_v10[]"`,
    /// `"int?"`, a name of the plugin's own namespace. `None` for `any`, `null` and names that
    /// do not resolve (nothing to check).
    fn foreign_type(&self, namespace: &str, written: &str) -> Option<ValueType> {
        let mut name = written.trim();
        let nullable = name.ends_with('?');
        name = name.trim_end_matches('?');
        let list = name.ends_with("[]");
        name = name.trim_end_matches("[]");
        let index = &self.program.index;
        let named = |fqn: &str| {
            if index.typedefs.contains_key(fqn) {
                Some(BaseType::Typedef(fqn.to_owned()))
            } else if index.entities.contains_key(fqn) {
                Some(BaseType::Entity(fqn.to_owned()))
            } else {
                None
            }
        };
        let base = match name {
            "any" | "expression" | "null" | "" => return None,
            primitive if BaseType::primitive(primitive).is_some() => BaseType::primitive(primitive)?,
            qualified if qualified.contains("::") => named(qualified)?,
            local => named(&format!("{namespace}::{local}")).or_else(|| named(&format!("std::{local}")))?,
        };
        Some(ValueType { base, list, nullable })
    }
}
