//! Calls: plugins and casts, their arguments bound and typed against the signatures.

use super::*;

impl<'a> Checker<'a> {
    pub(super) fn check_args(&mut self, args: &'a [Arg]) -> Vec<Inferred> {
        args.iter().map(|arg| self.check_expr(arg.value(), None)).collect()
    }

    pub(super) fn check_splat(&mut self, expr: &'a Expr, inferred: &Inferred) {
        if let Some(ty) = inferred.certain()
            && *ty != StaticType::Dict
        {
            let d = Diagnostic::new(&codes::INVALID_OPERAND, "the ** operator can only be applied to dicts").primary(
                self.file,
                expr.span,
                format!("this is {}", ty.describe()),
            );
            self.runtime(d);
        }
    }

    pub(super) fn check_call(
        &mut self,
        call: &'a Expr,
        callee: hir::Callee,
        written: &str,
        function_span: Span,
        args: &'a [Arg],
    ) -> Inferred {
        let inferred = self.check_args(args);
        for (arg, ty) in args.iter().zip(&inferred) {
            if let Arg::Splat(e) = arg {
                self.check_splat(e, ty);
            }
        }
        if let hir::Callee::Cast(_) = callee {
            let positional = args.iter().filter(|a| matches!(a, Arg::Positional(_))).count();
            if positional != 1 || args.len() != 1 {
                let d = Diagnostic::new(
                    &codes::INVALID_ARGUMENTS,
                    format!("the cast `{written}` takes exactly one positional argument"),
                )
                .primary(
                    self.file,
                    call.span,
                    format!("{} given", modelc_diagnostics::count(args.len() as u64, "argument")),
                );
                self.runtime(d);
            }
            if written == "number" {
                self.deprecated_number(function_span);
            }
            let ty = match written {
                "string" => StaticType::Str,
                "int" => StaticType::Int,
                "float" => StaticType::Float,
                "bool" => StaticType::Bool,
                _ => StaticType::Any,
            };
            return Inferred::maybe_unknown(ty);
        }
        if written == "list" || written == "dict" {
            let d = Diagnostic::new(&codes::NOT_CALLABLE, format!("`{written}` can not be called")).primary(
                self.file,
                function_span,
                "only plugins and the casts string, int, float, bool and number can be called",
            );
            self.runtime(d);
            return Inferred::any();
        }
        if let hir::Callee::Plugin(signature) = callee {
            let fqn = format!("{}::{}", signature.namespace, signature.name);
            if signature.deprecated {
                let d = Diagnostic::new(&codes::DEPRECATED, format!("the plugin `{fqn}` is deprecated")).primary(
                    self.file,
                    function_span,
                    "deprecated",
                );
                self.error(d);
            }
            self.check_plugin_arguments(call, &fqn, signature, args, &inferred);
            return Inferred::maybe_unknown(static_type_of(signature.returns));
        }
        // Not a plugin modelc can run: resolved again, to say why.
        match self.scope.resolve_type(&self.index, written) {
            Ok(Resolved { kind: TypeKind::Plugin, .. }) => Inferred::any(),
            Ok(Resolved { fqn, kind }) => {
                let mut d = Diagnostic::new(
                    &codes::NOT_CALLABLE,
                    format!("`{fqn}` is {}, it can not be called", kind.describe()),
                )
                .primary(self.file, function_span, "only plugins and primitive casts can be called");
                if kind == TypeKind::Entity {
                    d = d.help("entities are constructed with a capitalised name: `Entity(attr=value)`");
                }
                self.runtime(d);
                Inferred::any()
            }
            Err(ResolveError::NotFound { name, namespace }) => {
                let module = namespace.split("::").next().unwrap_or_default();
                if module != "__config__" && module != "std" {
                    let known: Vec<&str> = self.index.python_plugins_of(module).iter().map(String::as_str).collect();
                    let note = if known.is_empty() {
                        format!(
                            "modelc found no Python plugins of module `{module}`: it looks in `plugins/` or `inmanta_plugins/{module}/` beside the module's `model/`, and in the package `inmanta_plugins.{module}` installed in the Python environment (chosen with `--python`, `python:` in project.yml, the active virtual environment, or python3 on PATH); a file it could not read is reported (W0107)"
                        )
                    } else {
                        format!("the Python of module `{module}` defines: {}", known.join(", "))
                    };
                    let d = Diagnostic::new(
                        &codes::UNAVAILABLE_PLUGIN,
                        format!("`{name}` is not defined in module `{module}`, neither in its model nor in its Python"),
                    )
                    .primary(self.file, function_span, "no plugin of this name is available")
                    .note(note);
                    self.error(d);
                } else {
                    let error = ResolveError::NotFound { name, namespace };
                    let d = self.resolve_error(&error, function_span, "plugin");
                    self.error(d);
                }
                Inferred::any()
            }
            Err(error) => {
                let d = self.resolve_error(&error, function_span, "plugin");
                self.error(d);
                Inferred::any()
            }
        }
    }

    pub(super) fn check_plugin_arguments(
        &mut self,
        call: &Expr,
        fqn: &str,
        signature: &modelc_stdlib::PluginSignature,
        args: &[Arg],
        inferred: &[Inferred],
    ) {
        use modelc_stdlib::ParamKind;
        let has_splat = args.iter().any(|a| matches!(a, Arg::Splat(_)));
        let positional: Vec<(usize, &Expr)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| if let Arg::Positional(e) = a { Some((i, e)) } else { None })
            .collect();
        // (where, message, label)
        let mut problems: Vec<(Span, String, String)> = Vec::new();
        if let Some(max) = signature.max_positional()
            && positional.len() > max
        {
            let given = positional.len() as u64;
            problems.push((
                positional[max].1.span,
                format!(
                    "{fqn}() takes {} but {given} {} given",
                    modelc_diagnostics::count(max as u64, "positional argument"),
                    modelc_diagnostics::was_were(given)
                ),
                "one argument too many from here".to_owned(),
            ));
        }
        let normal: Vec<&modelc_stdlib::Param> =
            signature.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
        let mut bound: Vec<&str> = normal.iter().take(positional.len()).map(|p| p.name).collect();
        let accepts_any_keyword = signature.params.iter().any(|p| p.kind == ParamKind::VarKeywords);
        for arg in args {
            let Arg::Keyword(name, _) = arg else { continue };
            let known = signature
                .params
                .iter()
                .any(|p| p.name == name.text && matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly));
            if bound.contains(&name.text.as_str()) && known {
                problems.push((
                    name.span,
                    format!("{fqn}() got multiple values for argument '{}'", name.text),
                    "already given".to_owned(),
                ));
            } else if !known && !accepts_any_keyword {
                problems.push((
                    name.span,
                    format!("{fqn}() got an unexpected keyword argument: '{}'", name.text),
                    format!("{fqn}() has no parameter of this name"),
                ));
            }
            bound.push(&name.text);
        }
        if !has_splat {
            let missing: Vec<&str> = signature.required().map(|p| p.name).filter(|n| !bound.contains(n)).collect();
            if !missing.is_empty() {
                let list: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
                problems.push((
                    call.span,
                    format!(
                        "{fqn}() missing {}: {}",
                        modelc_diagnostics::count(missing.len() as u64, "required argument"),
                        list.join(", ")
                    ),
                    format!("{} missing", if missing.len() == 1 { "an argument is" } else { "arguments are" }),
                ));
            }
        }
        for (span, message, label) in problems {
            let d = Diagnostic::new(&codes::INVALID_ARGUMENTS, message).primary(self.file, span, label);
            self.runtime(d);
        }
        // Argument types, where both the parameter's and the value's are certain.
        for (i, (position, expr)) in positional.iter().enumerate() {
            let Some(param) = normal.get(i) else { break };
            self.check_argument_type(fqn, param, expr, &inferred[*position]);
        }
        for (arg, ty) in args.iter().zip(inferred) {
            if let Arg::Keyword(name, expr) = arg
                && let Some(param) = normal.iter().find(|p| p.name == name.text)
            {
                self.check_argument_type(fqn, param, expr, ty);
            }
        }
    }

    pub(super) fn check_argument_type(
        &mut self,
        fqn: &str,
        param: &modelc_stdlib::Param,
        expr: &Expr,
        inferred: &Inferred,
    ) {
        let Some(actual) = inferred.certain() else { return };
        let fits = match param.ty {
            "any" | "expression" => true,
            "string" => *actual == StaticType::Str,
            "int" => matches!(actual, StaticType::Int | StaticType::Bool),
            "float" => *actual == StaticType::Float,
            "bool" => *actual == StaticType::Bool,
            "list" => *actual == StaticType::List,
            "dict" => *actual == StaticType::Dict,
            "string?" => matches!(actual, StaticType::Str | StaticType::Null),
            "int?" => matches!(actual, StaticType::Int | StaticType::Bool | StaticType::Null),
            "string[]" => *actual == StaticType::List,
            other if other.starts_with("std::") && other.chars().nth(5).is_some_and(char::is_uppercase) => {
                matches!(actual, StaticType::Instance(_))
            }
            _ => true,
        };
        if !fits {
            let d = Diagnostic::new(
                &codes::TYPE_MISMATCH,
                format!("argument `{}` of {fqn}() must be `{}`", param.name, param.ty),
            )
            .primary(self.file, expr.span, format!("this is {}", actual.describe()));
            self.runtime(d);
        }
    }
}
